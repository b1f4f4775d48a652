//! What the coordinator of a process is asked (a pattern's run, a cancel, a dictionary
//! question), and what reaches it of each run: the rows that finished it and their weights.

use std::collections::HashMap;
use std::sync::mpsc;

use quiver_sparql::partitions::{Exchanged, WorkerStep};
use quiver_sparql::table::Table;

use crate::counted::uniform_counts;
use crate::dictionary::{Ask, TermsReply};
use crate::message::{Failure, Message, Payload, WEIGHT};

/// What reached the coordinator of one query: the rows (or errors) that finished it, what
/// its hops exchanged, whether a step stopped at the plan's cap, and the weight they bring.
#[derive(Default)]
pub(crate) struct Arrival {
    parts: Vec<Result<Table, Failure>>,
    exchanged: Exchanged,
    pub(super) truncated: bool,
    weight: u64,
    /// A message came with no weight: the query ends when the probe passes its time.
    pub(crate) unweighed: bool,
    /// A worker failed the query (its memory budget there, an error): the coordinator
    /// stops it on the others.
    pub(crate) failed: bool,
    /// Under a traced plan, what the workers did.
    trace: Vec<WorkerStep>,
}

impl Arrival {
    /// Takes in a finished message: its rows (or error), what it carries and its weight.
    pub(crate) fn take(&mut self, message: Message) {
        let Payload::Rows(rows) = message.payload else {
            return;
        };
        self.failed |= rows.is_err();
        self.parts.push(rows);
        self.exchanged += message.exchanged;
        self.truncated |= message.truncated;
        WorkerStep::add_all(&mut self.trace, message.trace);
        match message.weight {
            Some(weight) => self.weight += weight,
            None => self.unweighed = true,
        }
    }

    /// The answer of the pattern's run, and what its hops exchanged.
    pub(crate) fn answer(self) -> (Answer, Exchanged) {
        let answer = self
            .parts
            .into_iter()
            .collect::<Result<Vec<Table>, Failure>>()
            .map(|parts| {
                let parts = uniform_counts(parts);
                (Table::concat(parts), self.truncated, self.trace)
            });
        (answer, self.exchanged)
    }

    /// Whether every message of the query has arrived, by their weights.
    pub(crate) fn complete(&self) -> bool {
        !self.unweighed && self.weight == WEIGHT
    }
}

/// What the runs so far exchanged, and how many ended only when the probe passed their
/// last time, their weights not all back.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    pub(crate) exchanged: Exchanged,
    pub(crate) by_progress: u64,
    /// Runs answered in place by the asking thread, runs it handed to the dataflow, and
    /// the messages it handled.
    pub(super) in_place: u64,
    pub(super) handed_off: u64,
    pub(super) steps_in_place: u64,
    /// Runs answered with hops over the light queries' connections ([`crate::direct`]).
    pub(super) direct: u64,
}

/// What reached the coordinator, by query.
pub(crate) type Arrived = HashMap<u64, Arrival>;

/// What a pattern's run answers: its rows, whether a step stopped at the plan's cap, and
/// under a traced plan, what the workers did.
pub(crate) type Answer = Result<(Table, bool, Vec<WorkerStep>), Failure>;

/// Where the answer of a pattern's run goes.
pub(crate) type Reply = mpsc::Sender<Answer>;

/// What the coordinator is asked.
pub(crate) enum Request {
    /// A pattern's run, under the query number the asker chose: its messages, routed and
    /// weighed (the first ones, or those left by a run in place).
    Run {
        query: u64,
        messages: Vec<Message>,
        reply: Reply,
    },
    /// The asker gave the query up: every worker drops its messages.
    Cancel(u64),
    /// A question to the owners of a partitioned dictionary ([`crate::dictionary`]).
    Dictionary { ask: Ask, reply: TermsReply },
}
