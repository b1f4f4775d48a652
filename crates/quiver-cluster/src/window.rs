//! Flow control of the exploration's messages between processes: a window of credits per
//! pair of workers.
//!
//! Timely has none of its own. A worker that hands its exchange a step's whole output has
//! it serialised into its network buffers at once, faster than a network drains them, and
//! the receiving process reads whatever arrives into buffers of its own until its worker
//! takes it in: a heavy step's rows sat twice in buffers beside the rows themselves.
//!
//! Now each worker's exploring operator sends a worker of another process at most
//! [`WINDOW`] messages that it has not heard were taken in; the rest wait in order, in the
//! sender's own memory, under a capability for their time (the operator keeps one per time
//! with messages waiting, so progress waits for them). A receiver takes in every message
//! that arrives, whatever it then holds back itself, and once it took in [`CREDIT_EVERY`]
//! from one sender it sends that sender a credit for them. A credit is never held back,
//! so none waits on another: no cycle of workers waiting on each other, which a window on
//! the exploration's loop would otherwise risk (a worker that stopped taking in rows
//! until its own sends drained could wait on a worker waiting on it). Rows for a message
//! are at most [`crate::message::PIECE_BYTES`] ([`crate::message::hand_on`] cuts them),
//! so what one worker has in flight to another is about 2 MiB at most.
//!
//! What waits is charged to its query's memory budget on the sending worker (its bytes as
//! on the wire, [`crate::buffers::Weighed`]) until it leaves or its query is dropped: a
//! heavy step's output held back for a slow receiver is the query's memory like its
//! tables. A message that would take its query past its budget is not held: the query
//! stops ([`Offered::Refused`]), and the caller sends its failure in the message's place,
//! with its weight, so that the coordinator answers the query with the error at once. What
//! is in flight (the window's 8 messages to each worker) is not charged.
//!
//! Messages within a process are never held: timely moves them without copying. What the
//! coordinator feeds its lane's input (a query's first rows, cancellations) goes at once
//! too, but counts in the window like the rest, so the credits stay exact: every message
//! a worker sends to another process is counted there, and credited once taken in.
//!
//! Messages to one worker leave in the order they were made: the plans' bookkeeping
//! ([`crate::plans`]: a message that leaves its plan behind must come after the one that
//! carried it) and a fetch's answers (the last piece marked) rely on that order.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quiver_sparql::error::QueryError;
use quiver_sparql::memory::{Charge, MemoryBudget};
use quiver_sparql::partitions::FlowControl;

use crate::buffers::Weighed;
use crate::message::{Message, Payload, Plan, PlanCopy};

/// Messages a worker may have sent to a worker of another process and not yet been
/// credited for.
pub(crate) const WINDOW: u32 = 8;

/// Messages taken in from one sender for which a receiver sends a credit. Half the window,
/// so that a sender can go on while the credit travels.
pub(crate) const CREDIT_EVERY: u32 = WINDOW / 2;

/// Messages held back for credit in this process, ever.
static WAITED: AtomicU64 = AtomicU64::new(0);

/// The most messages a worker of this process had in flight to another worker after
/// sending one within its window.
static MOST_IN_FLIGHT: AtomicU64 = AtomicU64::new(0);

/// What the windows of this process's workers did since it started.
pub fn flow_control() -> FlowControl {
    FlowControl {
        waited: WAITED.load(Ordering::Relaxed),
        most_in_flight: MOST_IN_FLIGHT.load(Ordering::Relaxed),
        window: u64::from(WINDOW),
    }
}

/// One worker's windows to the workers of other processes (in one lane), the messages
/// waiting for them, and the credits it owes.
pub(crate) struct Window {
    index: u32,
    per_process: u32,
    /// Messages sent to each worker and not yet credited.
    in_flight: HashMap<u32, u32>,
    /// Messages waiting for each worker's window, in order, with their times and what
    /// they hold of their queries' budgets.
    waiting: HashMap<u32, VecDeque<Waiting>>,
    /// How many messages wait at each time.
    times: BTreeMap<u64, usize>,
    /// Messages taken in from each worker and not yet credited.
    owed: HashMap<u32, u32>,
    /// The plan a credit carries (none: it goes without).
    no_plan: Arc<Plan>,
}

/// A message waiting for its receiver's window.
struct Waiting {
    time: u64,
    message: Message,
    /// Its bytes, charged to its query (none where the sender has no budget for it).
    _charge: Option<Charge>,
}

/// What [`Window::offer`] did with a message.
#[derive(Debug)]
pub(crate) enum Offered {
    /// It may go now.
    Go(Message),
    /// It waits for its receiver's window.
    Held,
    /// Holding it would take its query past its memory budget, which stopped the query:
    /// it comes back, for the caller to send the query's failure in its place.
    Refused(Message, QueryError),
}

impl Offered {
    /// The message, if it may go now.
    #[cfg(test)]
    fn go(self) -> Option<Message> {
        match self {
            Offered::Go(message) => Some(message),
            _ => None,
        }
    }
}

impl Window {
    /// Worker `index`'s, with `per_process` workers in each process.
    pub(crate) fn new(index: u32, per_process: u32) -> Self {
        Self {
            index,
            per_process: per_process.max(1),
            in_flight: HashMap::new(),
            waiting: HashMap::new(),
            times: BTreeMap::new(),
            owed: HashMap::new(),
            no_plan: Arc::new(Plan::empty()),
        }
    }

    fn remote(&self, worker: u32) -> bool {
        worker / self.per_process != self.index / self.per_process
    }

    /// Takes `message`, made at `time`, to send: it comes back if it may go now; else it
    /// waits for its receiver's window, charged to `budget()`, its query's budget on this
    /// worker (asked only then), unless that refuses it.
    pub(crate) fn offer(
        &mut self,
        time: u64,
        message: Message,
        budget: impl FnOnce() -> Option<std::sync::Arc<MemoryBudget>>,
    ) -> Offered {
        let to = message.to;
        if !self.remote(to) {
            return Offered::Go(message);
        }
        let queue = self.waiting.entry(to).or_default();
        let in_flight = self.in_flight.entry(to).or_default();
        if queue.is_empty() && *in_flight < WINDOW {
            *in_flight += 1;
            MOST_IN_FLIGHT.fetch_max(u64::from(*in_flight), Ordering::Relaxed);
            return Offered::Go(message);
        }
        let charge = match budget().map(|budget| budget.charge(message.wire_bytes())) {
            Some(Err(error)) => return Offered::Refused(message, error),
            Some(Ok(charge)) => Some(charge),
            None => None,
        };
        queue.push_back(Waiting {
            time,
            message,
            _charge: charge,
        });
        *self.times.entry(time).or_default() += 1;
        WAITED.fetch_add(1, Ordering::Relaxed);
        Offered::Held
    }

    /// Counts `message`, sent outside the window (the coordinator's input feeds it).
    pub(crate) fn sent_anyway(&mut self, message: &Message) {
        if self.remote(message.to) {
            *self.in_flight.entry(message.to).or_default() += 1;
        }
    }

    /// Takes in a message that arrived. A credit widens its sender's window and is used
    /// up (`true`); any other message from another process is owed a credit.
    pub(crate) fn arrived(&mut self, message: &Message) -> bool {
        if let Payload::Credit(messages) = message.payload {
            let in_flight = self.in_flight.entry(message.from).or_default();
            *in_flight = in_flight.saturating_sub(messages);
            return true;
        }
        if self.remote(message.from) {
            *self.owed.entry(message.from).or_default() += 1;
        }
        false
    }

    /// The credits due: one message for each sender from which [`CREDIT_EVERY`] messages or
    /// more were taken in since its last credit.
    pub(crate) fn credits(&mut self) -> Vec<Message> {
        let mut credits = Vec::new();
        for (&to, owed) in &mut self.owed {
            if *owed >= CREDIT_EVERY {
                credits.push(credit(self.index, to, *owed, &self.no_plan));
                *owed = 0;
            }
        }
        credits
    }

    /// The waiting messages that may go now, in order for each receiver, with their times
    /// (their charges given back).
    pub(crate) fn released(&mut self) -> Vec<(u64, Message)> {
        let mut released = Vec::new();
        for (to, queue) in &mut self.waiting {
            let in_flight = self.in_flight.entry(*to).or_default();
            while *in_flight < WINDOW {
                let Some(Waiting { time, message, .. }) = queue.pop_front() else {
                    break;
                };
                *in_flight += 1;
                MOST_IN_FLIGHT.fetch_max(u64::from(*in_flight), Ordering::Relaxed);
                unwait(&mut self.times, time);
                released.push((time, message));
            }
        }
        self.waiting.retain(|_, queue| !queue.is_empty());
        released
    }

    /// Drops the waiting messages of `queries` (cancelled, or over), giving back their
    /// charges.
    pub(crate) fn drop_queries(&mut self, queries: &[u64]) {
        for queue in self.waiting.values_mut() {
            queue.retain(|waiting| {
                let keep = !queries.contains(&waiting.message.query);
                if !keep {
                    unwait(&mut self.times, waiting.time);
                }
                keep
            });
        }
        self.waiting.retain(|_, queue| !queue.is_empty());
    }

    /// Whether messages made at `time` wait.
    pub(crate) fn holds(&self, time: u64) -> bool {
        self.times.contains_key(&time)
    }
}

/// One fewer message waits at `time`.
fn unwait(times: &mut BTreeMap<u64, usize>, time: u64) {
    if let Some(count) = times.get_mut(&time) {
        *count -= 1;
        if *count == 0 {
            times.remove(&time);
        }
    }
}

/// Worker `from`'s credit to worker `to` for `messages` taken in.
fn credit(from: u32, to: u32, messages: u32, no_plan: &Arc<Plan>) -> Message {
    Message {
        query: 0,
        step: 0,
        to,
        from,
        plan: Arc::clone(no_plan),
        plan_copy: PlanCopy::Held,
        run: None,
        payload: Payload::Credit(messages),
        exchanged: Default::default(),
        truncated: false,
        weight: None,
        trace: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(query: u64, from: u32, to: u32) -> Message {
        let mut message = credit(from, to, 0, &Arc::new(Plan::empty()));
        message.query = query;
        message.payload = Payload::Cancel;
        message
    }

    /// Two processes of two workers: worker 0 sends to worker 2 (the other process).
    #[test]
    fn a_worker_sends_another_process_a_window_then_waits_for_credit() {
        let mut sender = Window::new(0, 2);
        let mut receiver = Window::new(2, 2);
        let mut sent = Vec::new();
        for n in 0..(WINDOW + 5) {
            let mut m = message(u64::from(n), 0, 2);
            m.step = n;
            sent.extend(sender.offer(7, m, || None).go());
        }
        assert_eq!(sent.len(), WINDOW as usize);
        assert!(sender.holds(7));
        assert!(sender.released().is_empty(), "no credit yet");
        // The receiver takes in fewer than a credit's worth: nothing is owed yet.
        for m in &sent[..CREDIT_EVERY as usize - 1] {
            assert!(!receiver.arrived(m));
        }
        assert!(receiver.credits().is_empty());
        assert!(!receiver.arrived(&sent[CREDIT_EVERY as usize - 1]));
        let credits = receiver.credits();
        assert_eq!(credits.len(), 1);
        assert_eq!(credits[0].to, 0);
        assert!(receiver.credits().is_empty(), "a credit is sent once");
        assert!(sender.arrived(&credits[0]), "a credit is used up");
        let released = sender.released();
        assert_eq!(released.len(), CREDIT_EVERY as usize);
        // In the order they were made, at their time.
        let steps: Vec<u32> = released.iter().map(|(_, m)| m.step).collect();
        let expected: Vec<u32> = (WINDOW..WINDOW + CREDIT_EVERY).collect();
        assert_eq!(steps, expected);
        assert!(released.iter().all(|(time, _)| *time == 7));
        assert!(sender.holds(7), "one still waits");
        assert!(sender.released().is_empty());
    }

    /// Bytes of an id on the wire.
    const ID: usize = std::mem::size_of::<quiver_model::Id>();

    /// A message of `query` carrying one column of `ids` ids.
    fn rows(query: u64, ids: usize) -> Message {
        let mut m = message(query, 0, 1);
        let mut table = quiver_sparql::table::Table::empty(vec![0]);
        table.columns[0] = vec![1; ids];
        table.rows = ids;
        m.payload = Payload::Rows(Ok(table));
        m
    }

    #[test]
    fn what_waits_is_charged_to_its_query_and_a_message_past_its_budget_comes_back() {
        // Room for two messages of 500 ids and a half.
        let limit = 1_250 * ID;
        let pool = quiver_sparql::memory::MemoryPool::new(Some(limit));
        let budget = pool.budget();
        let of = || Some(Arc::clone(&budget));
        let mut sender = Window::new(0, 1);
        for _ in 0..WINDOW {
            assert!(matches!(sender.offer(1, rows(1, 500), of), Offered::Go(_)));
        }
        assert_eq!(budget.used(), 0, "what is in flight is not charged");
        assert!(matches!(sender.offer(1, rows(1, 500), of), Offered::Held));
        assert!(matches!(sender.offer(2, rows(1, 500), of), Offered::Held));
        assert_eq!(budget.used(), 1_000 * ID);
        match sender.offer(3, rows(1, 500), of) {
            Offered::Refused(m, QueryError::MemoryLimit { limit: refused }) => {
                assert_eq!((m.query, refused), (1, limit));
            }
            other => panic!("not refused: {other:?}"),
        }
        assert!(budget.refusal().is_some(), "the query is told to stop");
        assert!(!sender.holds(3), "a refused message does not wait");
        // Its failure, sent in its place, carries no rows: never refused.
        let mut failure = message(1, 0, 1);
        failure.payload = Payload::Rows(Err(crate::message::Failure::MemoryLimit(limit)));
        assert!(matches!(sender.offer(3, failure, of), Offered::Held));
        assert_eq!(budget.used(), 1_000 * ID);
        // Messages that leave give their bytes back, in order.
        let credit = credit(1, 0, CREDIT_EVERY, &Arc::new(Plan::empty()));
        sender.arrived(&credit);
        let released = sender.released();
        assert_eq!(released.len(), 3);
        assert!(matches!(released[2].1.payload, Payload::Rows(Err(_))));
        assert_eq!(budget.used(), 0);
        // So do those of a query dropped while they wait.
        let other = pool.budget();
        let last = sender.offer(4, rows(2, 100), || Some(Arc::clone(&other)));
        assert!(matches!(last, Offered::Go(_)), "the window's last place");
        for _ in 0..2 {
            let held = sender.offer(4, rows(2, 100), || Some(Arc::clone(&other)));
            assert!(matches!(held, Offered::Held));
        }
        assert_eq!(pool.used(), 200 * ID);
        sender.drop_queries(&[2]);
        assert_eq!((other.used(), pool.used()), (0, 0));
    }

    #[test]
    fn messages_within_a_process_never_wait() {
        let mut window = Window::new(0, 2);
        for _ in 0..(3 * WINDOW) {
            assert!(window.offer(1, message(1, 0, 1), || None).go().is_some());
            assert!(window.offer(1, message(1, 0, 0), || None).go().is_some());
        }
        assert!(!window.holds(1));
        // Nor is a message from the same process owed a credit.
        let mut other = Window::new(1, 2);
        for _ in 0..(2 * CREDIT_EVERY) {
            other.arrived(&message(1, 0, 1));
        }
        assert!(other.credits().is_empty());
    }

    #[test]
    fn what_the_coordinator_sends_anyway_narrows_the_window_and_is_credited() {
        let mut sender = Window::new(0, 1);
        let mut receiver = Window::new(1, 1);
        let fed: Vec<Message> = (0..WINDOW).map(|q| message(u64::from(q), 0, 1)).collect();
        for m in &fed {
            sender.sent_anyway(m);
        }
        assert!(
            sender.offer(3, message(9, 0, 1), || None).go().is_none(),
            "the window is full"
        );
        for m in &fed {
            receiver.arrived(m);
        }
        for credit in receiver.credits() {
            sender.arrived(&credit);
        }
        assert_eq!(sender.released().len(), 1);
        assert!(!sender.holds(3));
    }

    #[test]
    fn a_dropped_querys_waiting_messages_are_gone_and_free_their_times() {
        let mut sender = Window::new(0, 1);
        for _ in 0..WINDOW {
            assert!(sender.offer(1, message(1, 0, 1), || None).go().is_some());
        }
        assert!(sender.offer(2, message(1, 0, 1), || None).go().is_none());
        assert!(sender.offer(3, message(2, 0, 1), || None).go().is_none());
        sender.drop_queries(&[1]);
        assert!(!sender.holds(2));
        assert!(sender.holds(3));
        sender.drop_queries(&[2]);
        assert!(!sender.holds(3));
        let credit = credit(1, 0, WINDOW, &Arc::new(Plan::empty()));
        sender.arrived(&credit);
        assert!(sender.released().is_empty(), "nothing left to send");
    }
}
