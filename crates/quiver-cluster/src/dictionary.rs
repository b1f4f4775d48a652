//! A coordinator's questions to the owners of terms and records: with a partitioned
//! dictionary (a cluster loaded by its processes, where each partition holds only its own
//! terms), the ids of a query's constants before it is planned and the terms of the rows
//! the partitions return before they are decoded; on any cluster, the sizes of the
//! records of a query's constants that the coordinator's partition does not hold, for its
//! planner. A question goes to each owner asked through a small dataflow of its own beside
//! the exploration's (one hop to the owners, one back to the coordinator), and is answered
//! once every owner asked has answered. Questions and answers travel in pieces of at most
//! [`PIECE_BYTES`] (the terms of a million result rows are megabytes, and timely's
//! network buffers keep the size of the largest message for good: see [`crate::buffers`]).
//! A coordinator has at most [`PIECES_PER_OWNER`] pieces of a question out at once per owner
//! asked ([`Asking`]), sending the next as answers come back, over the owners in turn: the terms
//! of ten million rows would otherwise come back at once, hundreds of MB serialised into
//! the owners' network buffers and read into the coordinator's (the exploration's own
//! window, [`crate::window`], does not see this dataflow).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::mpsc;

use quiver_model::dictionary::term_owner;
use quiver_model::Id;
use quiver_sparql::degree::DegreeAsk;
use quiver_store::Store;
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::ExchangeCore;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::Input;
use timely::dataflow::InputHandleVec;

use crate::buffers::{Bounded, Weighed};
use crate::pieces::{answer_pieces, cut, Piece, Tally};

/// A question to one owner, or its answer to the coordinator.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Question {
    pub request: u64,
    pub to: u32,
    pub body: Body,
    /// Its place in its answer (a question is one piece: its pieces are each asked and
    /// answered apart).
    pub piece: Piece,
}

/// The most bytes of terms, ids or sizes one question or answer carries.
const PIECE_BYTES: usize = crate::message::PIECE_BYTES;

impl Weighed for Question {
    fn wire_bytes(&self) -> usize {
        const ID: usize = std::mem::size_of::<Id>();
        match &self.body {
            Body::Ids(terms) => terms.iter().map(|t| t.len() + 8).sum(),
            Body::Terms(ids) => ids.len() * ID,
            Body::Degrees(asks) => asks.len() * std::mem::size_of::<(Id, DegreeAsk)>(),
            Body::Found(found) => found.iter().map(|(_, t)| ID + 8 + t.len()).sum(),
            Body::Load => 0,
        }
    }
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

/// What the coordinator's worker has received, by request: the answers' pieces, and their
/// pairs.
pub(crate) type Answers = Rc<RefCell<HashMap<u64, (Tally, Vec<(Id, Vec<u8>)>)>>>;

/// Builds the questions' dataflow of the coordinator `coordinator` (a worker) on a worker
/// whose partition is `part`; returns its input (fed by that coordinator only) and what
/// arrives back (there).
pub(crate) fn build(
    worker: &mut timely::worker::Worker,
    part: Store,
    load: Option<String>,
    coordinator: u32,
) -> (InputHandleVec<u64, Question>, Answers) {
    let index = worker.index() as Id;
    let mut input: InputHandleVec<u64, Question> = InputHandleVec::new();
    let answers: Answers = Rc::default();
    let sink = Rc::clone(&answers);
    worker.dataflow::<u64, _, _>(|scope| {
        scope
            .input_from(&mut input)
            .unary(
                ExchangeCore::<Bounded<Question>, _>::new_core(|q: &Question| u64::from(q.to)),
                "Dictionary",
                move |_, _| {
                    move |input, output| {
                        input.for_each_stamp(|time, batches| {
                            let mut session = output.session(&time);
                            for batch in batches {
                                for question in batch.drain(..) {
                                    let answer = match question.body {
                                        Body::Load => vec![Question {
                                            request: question.request,
                                            to: coordinator,
                                            body: Body::Found(vec![(
                                                index,
                                                load.clone().unwrap_or_default().into_bytes(),
                                            )]),
                                            piece: Piece::WHOLE,
                                        }],
                                        _ => answer(&part, question, coordinator),
                                    };
                                    session.give_iterator(answer.into_iter());
                                }
                            }
                        });
                    }
                },
            )
            .sink(
                ExchangeCore::<Bounded<Question>, _>::new_core(move |_: &Question| {
                    u64::from(coordinator)
                }),
                "Answers",
                move |(input, _)| {
                    input.for_each(|_, batch| {
                        for question in batch.drain(..) {
                            if let Body::Found(found) = question.body {
                                let mut answers = sink.borrow_mut();
                                let entry = answers.entry(question.request).or_default();
                                entry.0.add(question.piece);
                                entry.1.extend(found);
                            }
                        }
                    });
                },
            );
    });
    (input, answers)
}

/// An owner's answer to `coordinator`: what it holds of the question, in numbered pieces.
fn answer(part: &Store, question: Question, coordinator: u32) -> Vec<Question> {
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
    const ID: usize = std::mem::size_of::<Id>();
    answer_pieces(found, |(_, t)| ID + 8 + t.len(), PIECE_BYTES)
        .map(|(found, piece)| Question {
            request: question.request,
            to: coordinator,
            body: Body::Found(found),
            piece,
        })
        .collect()
}

/// The questions of one request to the owners of `terms` or `ids`, in pieces of at most
/// [`PIECE_BYTES`] (the asker waits for as many answers).
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
    const ID: usize = std::mem::size_of::<Id>();
    let mut questions: Vec<Question> = Vec::new();
    for (to, body) in bodies {
        let question = |body| Question {
            request,
            to,
            body,
            piece: Piece::WHOLE,
        };
        match body {
            Body::Ids(terms) => questions.extend(
                cut(terms, |t| t.len() + 8, PIECE_BYTES)
                    .into_iter()
                    .map(|piece| question(Body::Ids(piece))),
            ),
            Body::Terms(ids) => questions.extend(
                cut(ids, |_| ID, PIECE_BYTES)
                    .into_iter()
                    .map(|piece| question(Body::Terms(piece))),
            ),
            Body::Degrees(asks) => questions.extend(
                cut(asks, std::mem::size_of_val, PIECE_BYTES)
                    .into_iter()
                    .map(|piece| question(Body::Degrees(piece))),
            ),
            body => questions.push(question(body)),
        }
    }
    questions.sort_by_key(|q| q.to);
    questions
}

/// Pieces of one question a coordinator has sent and not had answered, at most, per owner
/// asked: a piece is at most [`PIECE_BYTES`] of ids (65,536), whose terms are some MB.
pub(crate) const PIECES_PER_OWNER: usize = 2;

/// Where the answer of a dictionary question goes: `(id, encoding)` found.
pub(crate) type TermsReply = mpsc::Sender<Vec<(Id, Vec<u8>)>>;

/// A coordinator's question on its way: its pieces not sent yet (over the owners in turn),
/// how many went, and where the answer goes once every piece is answered.
pub(crate) struct Asking {
    pub request: u64,
    unsent: VecDeque<Question>,
    sent: usize,
    /// The most pieces out at once: [`PIECES_PER_OWNER`] for each owner asked.
    window: usize,
    pub reply: TermsReply,
}

impl Asking {
    /// Question `request`, asked in `pieces` ([`questions`]), answered to `reply`.
    pub(crate) fn new(request: u64, pieces: Vec<Question>, reply: TermsReply) -> Self {
        // Over the owners in turn, so that they answer side by side.
        let mut by_owner: Vec<VecDeque<Question>> = Vec::new();
        for piece in pieces {
            match by_owner.last_mut() {
                Some(owner) if owner.front().is_some_and(|q| q.to == piece.to) => {
                    owner.push_back(piece)
                }
                _ => by_owner.push(VecDeque::from([piece])),
            }
        }
        let window = PIECES_PER_OWNER * by_owner.len();
        let mut unsent = VecDeque::new();
        while by_owner.iter().any(|owner| !owner.is_empty()) {
            unsent.extend(by_owner.iter_mut().filter_map(VecDeque::pop_front));
        }
        Self {
            request,
            unsent,
            sent: 0,
            window,
            reply,
        }
    }

    /// The pieces that may go now, `answered` of those sent having been answered (the last
    /// pieces of their answers came: [`Tally::lasts`]).
    pub(crate) fn next(&mut self, answered: usize) -> Vec<Question> {
        let room = self
            .window
            .saturating_sub(self.sent.saturating_sub(answered));
        let pieces: Vec<Question> = self.unsent.drain(..room.min(self.unsent.len())).collect();
        self.sent += pieces.len();
        pieces
    }

    /// Whether every piece went and its answer came whole (`came`: their pieces counted).
    pub(crate) fn answered(&self, came: &Tally) -> bool {
        self.unsent.is_empty() && came.whole(self.sent)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids `pieces` of a question of terms ask, sorted.
    fn ids_asked(pieces: &[Question]) -> Vec<Id> {
        let mut ids: Vec<Id> = pieces
            .iter()
            .flat_map(|q| match &q.body {
                Body::Terms(ids) => ids.clone(),
                _ => unreachable!(),
            })
            .collect();
        ids.sort();
        ids
    }

    #[test]
    fn a_question_has_at_most_its_window_out_over_the_owners_in_turn() {
        // 3 M ids over 3 owners: 12 MB, dozens of pieces.
        let ids: Vec<Id> = (0..3_000_000).collect();
        let pieces = questions(9, 3, Ask::Terms(ids.clone()));
        let total = pieces.len();
        let window = 3 * PIECES_PER_OWNER;
        assert!(total > 2 * window, "{total} pieces");
        let (reply, _) = mpsc::channel();
        let mut asking = Asking::new(9, pieces, reply);
        let first = asking.next(0);
        assert_eq!(first.len(), window);
        let owners: Vec<u32> = first.iter().take(3).map(|q| q.to).collect();
        assert_eq!(owners, [0, 1, 2], "the owners in turn");
        assert!(asking.next(0).is_empty(), "nothing more before an answer");
        let mut came = Tally::default();
        assert!(!asking.answered(&came));
        let mut sent = first;
        let mut answered = 0;
        while !asking.answered(&came) {
            came.add(Piece::WHOLE);
            answered += 1;
            let more = asking.next(came.lasts());
            assert!(sent.len() + more.len() - answered <= window);
            sent.extend(more);
        }
        assert_eq!(answered, total);
        assert_eq!(ids_asked(&sent), ids, "every piece sent once");
    }

    #[test]
    fn questions_and_answers_go_in_pieces_each_within_bounds() {
        // 300,000 ids (1.2 MB) over 3 owners.
        let ids: Vec<Id> = (0..300_000).collect();
        let asked = questions(7, 3, Ask::Terms(ids.clone()));
        assert!(asked.len() > 3, "{} questions", asked.len());
        assert!(asked
            .iter()
            .all(|q| q.wire_bytes() <= PIECE_BYTES && q.piece == Piece::WHOLE));
        assert_eq!(ids_asked(&asked), ids, "every id asked once");
        // An owner's answer of 40,000 terms of 40 bytes (2 MB): in pieces, the last
        // marked alone.
        let found: Vec<(Id, Vec<u8>)> = (0..40_000).map(|i| (i, vec![b'x'; 40])).collect();
        let pieces = cut(found.clone(), |(_, t)| 12 + t.len(), PIECE_BYTES);
        assert!(pieces.len() > 1);
        assert_eq!(pieces.concat(), found);
        assert!(pieces
            .iter()
            .all(|p| p.iter().map(|(_, t)| 12 + t.len()).sum::<usize>() <= PIECE_BYTES));
        // One item past the bound goes alone.
        let cut_large = cut(vec![10, PIECE_BYTES + 1, 10], |&n| n, PIECE_BYTES);
        assert_eq!(cut_large, vec![vec![10], vec![PIECE_BYTES + 1], vec![10]]);
    }
}
