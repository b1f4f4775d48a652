//! Answers in pieces: cut to a bound, numbered, and counted whole in any order.
//!
//! A worker's answer to a fetch of partner lists, and an owner's answer to a dictionary
//! question, can be megabytes; they travel in pieces of at most
//! [`crate::message::PIECE_BYTES`] each, so that no message holds a network buffer of
//! their whole size. Each piece carries its place in its answer and the answer's count of
//! pieces ([`Piece`]), and the asker counts what arrived ([`Tally`]) rather than waiting
//! for a piece marked last. An asker so never takes an answer as whole while a piece of it
//! is still on its way, whatever order the pieces are read in: timely's exchange keeps the
//! order of what one worker sends another, but a reader that groups its input by time
//! (`for_each_stamp`, which sorts the containers with an unstable sort) does not, and
//! that once made a 4 × 4 cluster intersect rows before all their lists had come.

use serde::{Deserialize, Serialize};

/// `items` cut into runs of at most `limit` bytes each (an item larger goes alone), in
/// order; none for none.
pub(crate) fn cut<T>(items: Vec<T>, bytes: impl Fn(&T) -> usize, limit: usize) -> Vec<Vec<T>> {
    let mut pieces = Vec::new();
    let mut piece = Vec::new();
    let mut held = 0;
    for item in items {
        let size = bytes(&item);
        if held + size > limit && !piece.is_empty() {
            pieces.push(std::mem::take(&mut piece));
            held = 0;
        }
        held += size;
        piece.push(item);
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

/// Which piece of its answer a message carries: its place, and how many the answer has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Piece {
    pub at: u32,
    pub of: u32,
}

impl Piece {
    /// The one piece of an answer that is not cut (and of every question).
    pub(crate) const WHOLE: Piece = Piece { at: 0, of: 1 };

    /// Whether it is its answer's last piece.
    pub(crate) fn is_last(self) -> bool {
        self.at + 1 == self.of
    }
}

/// An answer's `items` in numbered pieces ([`cut`]): at least one piece, empty for no
/// items, so that the asker always learns the answer is whole.
pub(crate) fn answer_pieces<T>(
    items: Vec<T>,
    bytes: impl Fn(&T) -> usize,
    limit: usize,
) -> impl Iterator<Item = (Vec<T>, Piece)> {
    let mut pieces = cut(items, bytes, limit);
    if pieces.is_empty() {
        pieces.push(Vec::new());
    }
    let of = u32::try_from(pieces.len()).expect("fewer than 2^32 pieces");
    pieces
        .into_iter()
        .zip(0..)
        .map(move |(piece, at)| (piece, Piece { at, of }))
}

/// The pieces arrived of the answers to one request, in whatever order they came.
///
/// An answer's first piece tells how many pieces it has; until the first piece of every
/// answer asked has come, the request is not whole, and once it has, the request is whole
/// when as many pieces came as those answers have in all.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Answers whose first piece came.
    begun: usize,
    /// The pieces those answers have in all.
    pieces: usize,
    /// Pieces that came, of any answer.
    came: usize,
    /// Last pieces that came.
    lasts: usize,
}

impl Tally {
    /// Counts `piece` in.
    pub(crate) fn add(&mut self, piece: Piece) {
        if piece.at == 0 {
            self.begun += 1;
            self.pieces += piece.of as usize;
        }
        self.came += 1;
        self.lasts += usize::from(piece.is_last());
    }

    /// Whether all `answers` asked came whole.
    pub(crate) fn whole(&self, answers: usize) -> bool {
        self.begun == answers && self.came == self.pieces
    }

    /// The answers whose last piece came: those whole, where pieces come in the order they
    /// were sent, and so what a flow control of answers in flight counts.
    pub(crate) fn lasts(&self) -> usize {
        self.lasts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every order of every piece of three answers of 1, 2 and 3 pieces: the tally is
    /// whole at the last piece to come, never before.
    #[test]
    fn a_tally_is_whole_at_its_last_piece_in_every_order() {
        let pieces: Vec<Piece> = [1u32, 2, 3]
            .into_iter()
            .flat_map(|of| (0..of).map(move |at| Piece { at, of }))
            .collect();
        let mut orders = 0;
        let mut order: Vec<usize> = (0..pieces.len()).collect();
        // Heap's algorithm, iteratively: all 720 orders.
        let mut counters = vec![0; order.len()];
        let mut check = |order: &[usize]| {
            let mut tally = Tally::default();
            for (came, &at) in order.iter().enumerate() {
                assert!(!tally.whole(3), "whole before piece {came} of {order:?}");
                tally.add(pieces[at]);
            }
            assert!(tally.whole(3), "not whole after every piece of {order:?}");
            assert!(!tally.whole(4), "a fourth answer never came");
            orders += 1;
        };
        check(&order);
        let mut i = 0;
        while i < order.len() {
            if counters[i] < i {
                let swap = if i % 2 == 0 { 0 } else { counters[i] };
                order.swap(swap, i);
                check(&order);
                counters[i] += 1;
                i = 0;
            } else {
                counters[i] = 0;
                i += 1;
            }
        }
        assert_eq!(orders, 720);
    }

    #[test]
    fn an_answer_is_numbered_and_never_empty_of_pieces() {
        let pieces: Vec<(Vec<u32>, Piece)> =
            answer_pieces(vec![5, 5, 5, 5, 5], |&n| n as usize, 10).collect();
        let places: Vec<Piece> = pieces.iter().map(|(_, piece)| *piece).collect();
        let of = |at| Piece { at, of: 3 };
        assert_eq!(places, [of(0), of(1), of(2)]);
        assert!(places[2].is_last() && !places[1].is_last());
        let none: Vec<(Vec<u32>, Piece)> = answer_pieces(Vec::new(), |&n| n as usize, 10).collect();
        assert_eq!(none, [(Vec::new(), Piece::WHOLE)]);
        let mut tally = Tally::default();
        tally.add(Piece::WHOLE);
        assert!(tally.whole(1));
        assert_eq!(tally.lasts(), 1);
    }
}
