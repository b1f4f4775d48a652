//! A query's plan crosses to each worker of another process once: the first message of a
//! query that a worker sends to such a worker carries the plan, later ones do not, and the
//! receiver restores it from the plans it keeps ([`Plans`]). A light query's plan (its
//! patterns, steps, classes and limits) is several times the size of its rows, and heavy
//! queries send many messages between the same workers.
//!
//! Timely's exchange keeps the order of what one worker sends another, and the exploring
//! operator reads its input in that order (`lanes.rs`), so a message that leaves its plan
//! behind always arrives after the one that carried it. A worker knows that another holds a
//! query's plan when it sent the plan there, or when that worker sent it a message of the
//! query (a sender always holds its plan). A query's coordinator (the first worker of the
//! process it was asked on) holds the plan of each of its queries in flight (they enter
//! there), so nothing sent to it carries one.
//!
//! A worker keeps the plans it received until the coordinator, once the query is over
//! (every message of it arrived, so none that needs the plan is still on its way), tells
//! every worker to forget them, in batches ([`FORGET_BATCH`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::message::{Failure, Message, Payload, Plan, PlanCopy};

/// Queries over whose plans the coordinator tells the workers at once: one message per
/// worker for this many queries.
pub(crate) const FORGET_BATCH: usize = 64;

/// What one worker knows of the plans of the queries in flight.
pub(crate) struct Plans {
    /// This worker, and the workers of each process.
    index: u32,
    per_process: u32,
    /// The plans this worker holds, by query: those it received from other processes, and
    /// on the coordinator's worker, those of every query in flight.
    held: HashMap<u64, Arc<Plan>>,
    /// The workers of other processes known to hold each query's plan.
    holders: HashMap<u64, Vec<u32>>,
    /// The plans held by this process's workers together.
    counted: Arc<AtomicUsize>,
}

impl Plans {
    /// Worker `index`'s, counting the plans it holds in `counted`.
    pub(crate) fn new(index: u32, per_process: u32, counted: Arc<AtomicUsize>) -> Self {
        Self {
            index,
            per_process: per_process.max(1),
            held: HashMap::new(),
            holders: HashMap::new(),
            counted,
        }
    }

    /// Whether `worker` runs in another process than this worker.
    fn remote(&self, worker: u32) -> bool {
        worker / self.per_process != self.index / self.per_process
    }

    /// Keeps `plan` for `query`: on the coordinator's worker, each query's it starts; on
    /// any worker, those it received from or sent to other processes.
    pub(crate) fn hold(&mut self, query: u64, plan: &Arc<Plan>) {
        if let std::collections::hash_map::Entry::Vacant(entry) = self.held.entry(query) {
            entry.insert(Arc::clone(plan));
            self.counted.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Marks `message`, about to be sent by this worker, with its sender and whether its
    /// plan goes with it.
    pub(crate) fn stamp(&mut self, message: &mut Message) {
        message.from = self.index;
        message.plan_copy = self.copy(message);
    }

    /// Whether `message`'s plan goes with it.
    fn copy(&mut self, message: &Message) -> PlanCopy {
        let to = message.to;
        if !self.remote(to) {
            return PlanCopy::Sent;
        }
        if matches!(
            message.payload,
            Payload::Cancel | Payload::Forget(_) | Payload::Credit(_) | Payload::Rows(Err(_))
        ) {
            // A cancellation or a forgetting needs no plan, an error none of its own (and
            // its plan may be one that did not arrive).
            return PlanCopy::Held;
        }
        // The receiver will take this worker for a holder of the plan: it must be one,
        // though the plan reached it from a worker of its own process.
        self.hold(message.query, &message.plan);
        // The query's coordinator holds every plan in flight.
        if to == message.plan.coordinator {
            return PlanCopy::Held;
        }
        let holders = self.holders.entry(message.query).or_default();
        if holders.contains(&to) {
            return PlanCopy::Held;
        }
        holders.push(to);
        PlanCopy::Sent
    }

    /// Takes back `message`'s stamp where it was not sent after all (a message its window
    /// refused): if it carried the query's plan, its receiver does not hold it, and the
    /// next message there carries it again.
    pub(crate) fn withdraw(&mut self, message: &Message) {
        if message.plan_copy != PlanCopy::Sent || !self.remote(message.to) {
            return;
        }
        if let Some(holders) = self.holders.get_mut(&message.query) {
            holders.retain(|&worker| worker != message.to);
        }
    }

    /// Takes in a message that arrived: keeps the plan it carries from another process,
    /// or restores the one it left behind. A message whose plan this worker does not hold
    /// cannot run: the error says so.
    pub(crate) fn receive(&mut self, message: &mut Message) -> Result<(), Failure> {
        if matches!(
            message.payload,
            Payload::Cancel | Payload::Forget(_) | Payload::Credit(_)
        ) || !self.remote(message.from)
        {
            return Ok(());
        }
        let holders = self.holders.entry(message.query).or_default();
        if !holders.contains(&message.from) {
            holders.push(message.from);
        }
        match message.plan_copy {
            PlanCopy::Sent => {
                self.hold(message.query, &message.plan);
                Ok(())
            }
            PlanCopy::Held => match self.held.get(&message.query) {
                Some(plan) => {
                    message.plan = Arc::clone(plan);
                    Ok(())
                }
                None => Err(Failure::Other(format!(
                    "the plan of query {} did not reach worker {}",
                    message.query, self.index
                ))),
            },
        }
    }

    /// Drops what this worker knows of `queries`' plans: they are over.
    pub(crate) fn forget(&mut self, queries: &[u64]) {
        for query in queries {
            if self.held.remove(query).is_some() {
                self.counted.fetch_sub(1, Ordering::Relaxed);
            }
            self.holders.remove(query);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver_sparql::partitions::Exchanged;
    use quiver_sparql::table::Table;

    fn plan() -> Arc<Plan> {
        Arc::new(Plan {
            classes: (0..40).collect(),
            cap: 10,
            ..Plan::empty()
        })
    }

    fn message(query: u64, to: u32, plan: &Arc<Plan>) -> Message {
        Message {
            query,
            step: 0,
            to,
            from: 0,
            plan: Arc::clone(plan),
            plan_copy: PlanCopy::Sent,
            run: None,
            payload: Payload::Rows(Ok(Table::default())),
            exchanged: Exchanged::default(),
            truncated: false,
            weight: None,
            trace: Vec::new(),
        }
    }

    /// `message` across the network: serialized as timely's exchange does, then read.
    fn across(message: &Message) -> (Message, usize) {
        let bytes = bincode::serialize(message).unwrap();
        (bincode::deserialize(&bytes).unwrap(), bytes.len())
    }

    #[test]
    fn a_plan_crosses_to_each_worker_of_another_process_once() {
        // Two processes of two workers: 0 and 1, then 2 and 3.
        let plan = plan();
        let mut sender = Plans::new(1, 2, Arc::default());
        let mut receiver = Plans::new(2, 2, Arc::default());
        let mut first = message(7, 2, &plan);
        sender.stamp(&mut first);
        let mut second = message(7, 2, &plan);
        sender.stamp(&mut second);
        assert_eq!(
            (first.plan_copy, second.plan_copy),
            (PlanCopy::Sent, PlanCopy::Held)
        );
        let (mut first, first_bytes) = across(&first);
        let (mut second, second_bytes) = across(&second);
        assert!(
            second_bytes + 100 < first_bytes,
            "{second_bytes} {first_bytes}"
        );
        assert_ne!(second.plan.classes, plan.classes, "left behind");
        receiver.receive(&mut first).unwrap();
        receiver.receive(&mut second).unwrap();
        assert_eq!(second.plan.classes, plan.classes, "restored");
        assert_eq!(second.plan.cap, 10);
        // Within a process, and to the coordinator, nothing is copied or needed.
        let mut local = message(7, 0, &plan);
        sender.stamp(&mut local);
        assert_eq!(local.plan_copy, PlanCopy::Sent);
        let mut coordinator = Plans::new(2, 2, Arc::default());
        let mut back = message(7, 0, &plan);
        coordinator.stamp(&mut back);
        assert_eq!(back.plan_copy, PlanCopy::Held);
        // Another query's plan crosses again.
        let mut other = message(8, 2, &plan);
        sender.stamp(&mut other);
        assert_eq!(other.plan_copy, PlanCopy::Sent);
    }

    #[test]
    fn a_plan_withdrawn_with_its_message_goes_with_the_next() {
        let plan = plan();
        let mut sender = Plans::new(0, 1, Arc::default());
        let mut refused = message(6, 1, &plan);
        sender.stamp(&mut refused);
        assert_eq!(refused.plan_copy, PlanCopy::Sent);
        // Not sent after all (its window refused it): the receiver does not hold the plan.
        sender.withdraw(&refused);
        let mut next = message(6, 1, &plan);
        sender.stamp(&mut next);
        assert_eq!(next.plan_copy, PlanCopy::Sent);
        // A message that left the plan behind withdraws nothing: its receiver holds it.
        let mut after = message(6, 1, &plan);
        sender.stamp(&mut after);
        assert_eq!(after.plan_copy, PlanCopy::Held);
        sender.withdraw(&after);
        let mut last = message(6, 1, &plan);
        sender.stamp(&mut last);
        assert_eq!(last.plan_copy, PlanCopy::Held);
    }

    #[test]
    fn a_worker_that_sent_a_message_holds_its_plan() {
        let plan = plan();
        // Worker 2 of process 1 asks worker 1 of process 0.
        let mut two = Plans::new(2, 2, Arc::default());
        let mut one = Plans::new(1, 2, Arc::default());
        let mut request = message(3, 1, &plan);
        two.stamp(&mut request);
        let (mut request, _) = across(&request);
        one.receive(&mut request).unwrap();
        // The answer goes back without the plan.
        let mut answer = message(3, 2, &plan);
        one.stamp(&mut answer);
        assert_eq!(answer.plan_copy, PlanCopy::Held);
    }

    #[test]
    fn a_plan_from_a_worker_of_the_same_process_is_held_once_sent_on() {
        // Worker 1 shares process 0 with the coordinator: the plan reaches it in memory.
        let plan = plan();
        let mut one = Plans::new(1, 2, Arc::default());
        let mut three = Plans::new(3, 2, Arc::default());
        let mut local = message(4, 1, &plan);
        local.from = 0;
        one.receive(&mut local).unwrap();
        let mut on = message(4, 3, &plan);
        one.stamp(&mut on);
        three.receive(&mut across(&on).0).unwrap();
        let mut back = message(4, 1, &plan);
        three.stamp(&mut back);
        assert_eq!(back.plan_copy, PlanCopy::Held);
        let (mut back, _) = across(&back);
        one.receive(&mut back).unwrap();
        assert_eq!(back.plan.classes, plan.classes);
    }

    #[test]
    fn a_forgotten_plan_is_missed_with_an_error_and_sent_again() {
        let plan = plan();
        let mut sender = Plans::new(0, 1, Arc::default());
        let counted = Arc::new(AtomicUsize::new(0));
        let mut receiver = Plans::new(1, 1, Arc::clone(&counted));
        let mut first = message(5, 1, &plan);
        sender.stamp(&mut first);
        receiver.receive(&mut across(&first).0).unwrap();
        assert_eq!(counted.load(Ordering::Relaxed), 1);
        receiver.forget(&[5]);
        sender.forget(&[5]);
        assert_eq!(counted.load(Ordering::Relaxed), 0);
        let mut late = message(5, 1, &plan);
        late.plan_copy = PlanCopy::Held;
        late.from = 0;
        let error = receiver.receive(&mut across(&late).0).unwrap_err();
        assert!(
            format!("{error:?}").contains("did not reach worker 1"),
            "{error:?}"
        );
        let mut again = message(5, 1, &plan);
        sender.stamp(&mut again);
        assert_eq!(again.plan_copy, PlanCopy::Sent);
    }
}
