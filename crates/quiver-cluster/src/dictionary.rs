//! A coordinator's questions to the owners of terms and records: with a partitioned
//! dictionary (a cluster loaded by its processes, where each partition holds only its own
//! terms), the ids of a query's constants before it is planned and the terms of the rows
//! the partitions return before they are decoded; on any cluster, the sizes of the
//! records of a query's constants that the coordinator's partition does not hold, for its
//! planner. Each question is one message per owner asked, through a small dataflow of its
//! own beside the exploration's (one hop to the owners, one back to the coordinator), and
//! is answered once every owner asked has answered.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex, Weak};
use std::time::Duration;

use quiver_model::dictionary::{term_owner, Resolver};
use quiver_model::Id;
use quiver_sparql::degree::DegreeAsk;
use quiver_store::Store;
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::Input;
use timely::dataflow::InputHandleVec;

use crate::dataflow::{Coordinator, Request};

/// A question to one owner, or its answer to the coordinator.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Question {
    pub request: u64,
    pub to: u32,
    pub body: Body,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Body {
    /// The ids of these encoded terms, where the owner holds them.
    Ids(Vec<Vec<u8>>),
    /// The encodings of these ids.
    Terms(Vec<Id>),
    /// The sizes of these records, each by its position in the coordinator's request
    /// (answered as `Found` of `(position, size as 8 little-endian bytes)`).
    Degrees(Vec<(Id, DegreeAsk)>),
    /// `(id, encoding)` found.
    Found(Vec<(Id, Vec<u8>)>),
    /// Which load wrote the owner's partition (answered as `Found` of one pair: the
    /// worker's number and the load's name, empty for none).
    Load,
}

/// What the coordinator's worker has received, by request: answers, and their pairs.
pub(crate) type Answers = Rc<RefCell<HashMap<u64, (usize, Vec<(Id, Vec<u8>)>)>>>;

/// Builds the questions' dataflow on a worker whose partition is `part`; returns its input
/// (fed by the coordinator only) and what arrives back.
pub(crate) fn build(
    worker: &mut timely::worker::Worker,
    part: Store,
    load: Option<String>,
) -> (InputHandleVec<u64, Question>, Answers) {
    let index = worker.index() as Id;
    let mut input: InputHandleVec<u64, Question> = InputHandleVec::new();
    let answers: Answers = Rc::default();
    let sink = Rc::clone(&answers);
    worker.dataflow::<u64, _, _>(|scope| {
        scope
            .input_from(&mut input)
            .unary(
                Exchange::new(|q: &Question| u64::from(q.to)),
                "Dictionary",
                move |_, _| {
                    move |input, output| {
                        input.for_each_stamp(|time, batches| {
                            let mut session = output.session(&time);
                            for batch in batches {
                                for question in batch.drain(..) {
                                    let answer = match question.body {
                                        Body::Load => Question {
                                            request: question.request,
                                            to: 0,
                                            body: Body::Found(vec![(
                                                index,
                                                load.clone().unwrap_or_default().into_bytes(),
                                            )]),
                                        },
                                        _ => answer(&part, question),
                                    };
                                    session.give(answer);
                                }
                            }
                        });
                    }
                },
            )
            .sink(
                Exchange::new(|_: &Question| 0),
                "Answers",
                move |(input, _)| {
                    input.for_each(|_, batch| {
                        for question in batch.drain(..) {
                            if let Body::Found(found) = question.body {
                                let mut answers = sink.borrow_mut();
                                let entry = answers.entry(question.request).or_default();
                                entry.0 += 1;
                                entry.1.extend(found);
                            }
                        }
                    });
                },
            );
    });
    (input, answers)
}

/// An owner's answer: what it holds of the question.
fn answer(part: &Store, question: Question) -> Question {
    let dictionary = part.dictionary();
    let found = match question.body {
        Body::Ids(terms) => terms
            .into_iter()
            .filter_map(|term| dictionary.lookup(&term).map(|id| (id, term)))
            .collect(),
        Body::Terms(ids) => ids
            .into_iter()
            .filter_map(|id| dictionary.term(id).map(|term| (id, term)))
            .collect(),
        Body::Degrees(asks) => asks
            .into_iter()
            .map(|(position, ask)| (position, ask.count(part).to_le_bytes().to_vec()))
            .collect(),
        Body::Found(found) => found,
        Body::Load => Vec::new(),
    };
    Question {
        request: question.request,
        to: 0,
        body: Body::Found(found),
    }
}

/// The questions of one request to the owners of `terms` or `ids`, one per owner asked.
pub(crate) fn questions(request: u64, workers: u32, ask: Ask) -> Vec<Question> {
    let mut bodies: HashMap<u32, Body> = HashMap::new();
    match ask {
        Ask::Loads => {
            for to in 0..workers {
                bodies.insert(to, Body::Load);
            }
        }
        Ask::Ids(terms) => {
            for term in terms {
                let to = term_owner(&term, workers);
                if let Body::Ids(list) = bodies.entry(to).or_insert(Body::Ids(Vec::new())) {
                    list.push(term);
                }
            }
        }
        Ask::Degrees(asks) => {
            for (position, ask) in asks.into_iter().enumerate() {
                let to = quiver_store::partition::owner(ask.vertex, workers);
                let body = bodies.entry(to).or_insert(Body::Degrees(Vec::new()));
                if let Body::Degrees(list) = body {
                    list.push((position as Id, ask));
                }
            }
        }
        Ask::Terms(ids) => {
            for id in ids {
                let to = quiver_store::partition::owner(id, workers);
                if let Body::Terms(list) = bodies.entry(to).or_insert(Body::Terms(Vec::new())) {
                    list.push(id);
                }
            }
        }
    }
    let mut questions: Vec<Question> = bodies
        .into_iter()
        .map(|(to, body)| Question { request, to, body })
        .collect();
    questions.sort_by_key(|q| q.to);
    questions
}

/// What a coordinator asks.
#[derive(Debug)]
pub(crate) enum Ask {
    Ids(Vec<Vec<u8>>),
    Terms(Vec<Id>),
    /// The sizes of records, each asked of the owner of its vertex.
    Degrees(Vec<DegreeAsk>),
    /// Every worker's partition's load.
    Loads,
}

/// The coordinator's share asks the owners through the running cluster. It holds the
/// request channel weakly: the cluster's end closes it, and a question then fails.
#[derive(Debug)]
pub(crate) struct ClusterResolver {
    pub requests: Weak<Mutex<Option<mpsc::Sender<Request>>>>,
    pub coordinator: Arc<Coordinator>,
}

/// How long a question may wait for its owners: they answer from memory, so a longer
/// wait means a process that stopped.
const PATIENCE: Duration = Duration::from_secs(30);

impl ClusterResolver {
    pub(crate) fn ask(&self, ask: Ask) -> Result<Vec<(Id, Vec<u8>)>, String> {
        let requests = self
            .requests
            .upgrade()
            .and_then(|r| r.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .ok_or("the cluster has stopped")?;
        let (reply, answer) = mpsc::channel();
        requests
            .send(Request::Dictionary { ask, reply })
            .map_err(|_| "the cluster's workers have stopped")?;
        self.coordinator.wake();
        match answer.recv_timeout(PATIENCE) {
            Ok(found) => Ok(found),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
                "the owners did not answer within {} s",
                PATIENCE.as_secs()
            )),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err("the cluster's workers have stopped".into())
            }
        }
    }
}

impl Resolver for ClusterResolver {
    fn ids(&self, terms: Vec<Vec<u8>>) -> Result<Vec<(Id, Vec<u8>)>, String> {
        self.ask(Ask::Ids(terms))
    }

    fn terms(&self, ids: Vec<Id>) -> Result<Vec<(Id, Vec<u8>)>, String> {
        self.ask(Ask::Terms(ids))
    }
}
