//! The explorer's oracle: what the world tells a search about the events due at one instant,
//! so that it explores one order of each class of equivalent orders (see
//! [`crate::sim::por`] and [`Chooser::order`]). Which parts of the world each event reads
//! or writes (independence: two events on disjoint parts commute), which entries of its part
//! (a key record, a resource), and which events are twins (symmetry: two fresh workers, two
//! identical intents, are interchangeable when the design treats them by identity only).
//!
//! The loop asks it in [`World::next_event`] whenever the chooser orders ties; random
//! simulation never does.

use super::*;

impl World<'_> {
    /// The parts of the world handling `event` reads or writes (see [`crate::sim::por`]):
    /// the part the event is for, and for an agent event that also wakes the worker serving
    /// a call, the executors. The executors' parts are what the design declares
    /// ([`Design::parts`]): everything, unless it says they reach the world only through
    /// their context.
    pub(super) fn parts(&self, event: &Event) -> Parts {
        let executors = self.design.parts();
        match event {
            Event::Arrival => workload::PARTS,
            Event::AgentStart(_) | Event::AgentAct { .. } | Event::ToolResult { .. } => {
                agent::PARTS
            }
            // The tool timeout tells the worker serving the call; a redelivery asks which
            // workers poll the queue.
            Event::AgentTimeout { .. } | Event::Redeliver { .. } => agent::PARTS.union(executors),
            Event::CallDelivered { .. }
            | Event::ExecTimer { .. }
            | Event::AttemptTimeout { .. }
            | Event::ConnectionReset { .. }
            | Event::ReplyArrives { .. }
            | Event::WorkerRestart { .. } => executors,
            Event::RequestArrives { .. } | Event::ProviderWake { .. } => provider::PARTS,
        }
    }

    /// The next event to handle: the earliest; among several due at the same instant, the
    /// first queued, unless `ch` [orders ties](Chooser::orders_ties). Then it chooses
    /// ([`Purpose::Order`]; alternative 0 is the first queued, the others keep their order),
    /// except where the order cannot matter: an event a pause holds back comes first without
    /// a choice (it is put off to the pause's end whatever the order), and past the horizon,
    /// or with only periodic timers left and nothing for them to act on, the run ends anyway.
    pub(super) fn next_event(&mut self, ch: &mut dyn Chooser) -> Option<(Millis, Event)> {
        // Only cancelled timers left (or nothing): the run is over without popping them.
        if self.queue.is_empty() {
            return None;
        }
        if !ch.orders_ties() {
            return self.queue.pop();
        }
        let n = self.queue.open_tie();
        if n == 0 {
            return None;
        }
        let at = self.queue.tie(0).0;
        let pick = if at > self.model.horizon_ms || (self.aperiodic == 0 && self.settled()) {
            0
        } else if let Some(held) = (0..n).find(|&i| {
            let event = self.queue.tie(i).1;
            event
                .component()
                .and_then(|c| self.faults.paused_until(c, self.event_worker(event), at))
                .is_some()
        }) {
            held
        } else {
            let mut tie = std::mem::take(&mut self.tie);
            tie.clear();
            tie.extend((0..n).map(|i| TieEvent {
                id: self.queue.tie_id(i),
                at_ms: at,
                parts: self.parts(self.queue.tie(i).1),
                class: self.twin_class(self.queue.tie(i).1),
                entities: self.entities(self.queue.tie(i).1),
            }));
            let pick = ch.order(&tie);
            self.tie = tie;
            match pick {
                Some(i) => i,
                None => {
                    // Every order from here is one the search has explored: the run ends.
                    self.queue.close_tie(0);
                    self.cut_at_tie = true;
                    return None;
                }
            }
        };
        self.taken = TieEvent {
            id: self.queue.tie_id(pick),
            at_ms: at,
            parts: self.parts(self.queue.tie(pick).1),
            class: 0,
            entities: self.entities(self.queue.tie(pick).1),
        };
        Some(self.queue.close_tie(pick))
    }

    /// The entries of its part `event` reads or writes ([`TieEvent::entities`]): for a
    /// provider event, the key record and resources of its request.
    pub(super) fn entities(&self, event: &Event) -> [u64; 2] {
        match *event {
            Event::RequestArrives { attempt } => self
                .provider
                .entities(&self.transport.requests[attempt.0 as usize - 1]),
            Event::ProviderWake { job } => self.provider.job_entities(job),
            _ => [0, 0],
        }
    }

    /// The symmetry class of each worker for a pick ([`Chooser::choose_up_to_symmetry`]):
    /// 1 for a worker that has run nothing but the run's start, is up in its first
    /// incarnation with nothing waiting, and is named by no scripted fault, when the
    /// design treats workers by identity only ([`Design::symmetric`]): any two such are
    /// interchangeable. 0 for the others.
    pub(super) fn worker_classes(&self) -> Vec<u32> {
        let symmetric = self.design.symmetric();
        self.workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let fresh = !w.touched && w.up && w.incarnation == 0 && w.inbox.is_empty();
                let named = self.faults.names_worker(WorkerId(i as u32));
                u32::from(symmetric && fresh && !named)
            })
            .collect()
    }

    /// The symmetry class of a tied event ([`TieEvent::class`]): two identical intents
    /// taken up at the same instant (same tenant, endpoint and steps, neither a genuine
    /// repeat, in a workload without genuine repeats, which would make the later of them
    /// special) are interchangeable, when the design treats ids by identity only. So are
    /// two intents alike but for their tenants, where each is its tenant's only intent in
    /// the workload: those tenants are names only (their keys, records and resources are
    /// theirs alone, and no other intent refers to either). 0 for every other event.
    pub(super) fn twin_class(&self, event: &Event) -> u32 {
        match event {
            Event::AgentStart(i)
                if self.design.symmetric()
                    && self.model.workload.genuine_repeat.is_zero()
                    && i.repeat_of.is_none() =>
            {
                let tenant = if self.sole_intent_of_its_tenant(i.id) {
                    u64::MAX
                } else {
                    u64::from(i.tenant.0)
                };
                let mut h = crate::sim::hash::StableHasher::new();
                std::hash::Hash::hash(&(tenant, i.endpoint, i.steps), &mut h);
                (std::hash::Hasher::finish(&h) as u32).max(1)
            }
            _ => 0,
        }
    }

    /// Whether intent `id` is the only intent of its tenant in the whole workload (intents
    /// take the tenants in turn, and no genuine repeat moves one: see [`workload`]).
    pub(super) fn sole_intent_of_its_tenant(&self, id: IntentId) -> bool {
        let w = &self.model.workload;
        w.genuine_repeat.is_zero()
            && id.0 < w.tenants
            && u64::from(id.0) + u64::from(w.tenants) >= u64::from(w.intents)
    }

    /// The positions in pop order of the queued events among `ids` (tie identities, see
    /// [`Chooser::order`]): a search mixes them into a state's fingerprint when it keeps
    /// some events asleep.
    pub fn queued_positions(&self, ids: &[u32]) -> Vec<usize> {
        self.queue.positions_of(ids)
    }
}

#[cfg(test)]
mod symmetry {
    use super::*;
    use crate::sim::RandomChooser;

    /// The seeds' model with two workers, and `faults` as its scripted faults.
    fn model(faults: &str) -> Model {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models/ticket_lost_response.json");
        let text = std::fs::read_to_string(path).expect("the bundled model");
        let mut m: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        m["workers"] = serde_json::json!({ "count": 2, "journal": "durable" });
        m["faults"] = serde_json::from_str(faults).expect("JSON");
        m.as_object_mut().expect("an object").remove("$schema");
        Model::from_json(&m.to_string(), "m.json").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn workers_that_ran_nothing_share_a_class_unless_a_fault_names_one() {
        let same_key = crate::design::find("same_key").expect("built in");
        let m = model("[]");
        let mut w = World::new(&m, same_key, false);
        w.start(false, &mut RandomChooser::new(0));
        assert_eq!(w.worker_classes(), [1, 1]);
        // A worker that handled anything, crashed, or has calls waiting is itself.
        w.workers[0].touched = true;
        assert_eq!(w.worker_classes(), [0, 1]);
        w.workers[0].touched = false;
        w.workers[1].incarnation = 1;
        assert_eq!(w.worker_classes(), [1, 0]);

        let named =
            model(r#"[{ "crash_worker": { "attempt": 1, "point": "after_send", "worker": 1 } }]"#);
        let mut w = World::new(&named, same_key, false);
        w.start(false, &mut RandomChooser::new(0));
        assert_eq!(w.worker_classes(), [1, 0]);
        let any = model(r#"[{ "crash_worker": { "attempt": 1, "point": "after_send" } }]"#);
        let mut w = World::new(&any, same_key, false);
        w.start(false, &mut RandomChooser::new(0));
        assert_eq!(
            w.worker_classes(),
            [1, 1],
            "a fault on whichever worker names none"
        );
    }

    /// A design that does not declare it treats ids by identity only.
    struct Undeclared;

    impl Design for Undeclared {
        fn name(&self) -> &str {
            "undeclared"
        }
        fn summary(&self) -> &str {
            "same_key, without its declarations"
        }
        fn executor(&self, config: &crate::model::ExecutorModel) -> Box<dyn Executor> {
            crate::design::find("same_key")
                .expect("built in")
                .executor(config)
        }
    }

    #[test]
    fn an_undeclared_design_has_no_symmetry_and_touches_everything() {
        let m = model("[]");
        let mut w = World::new(&m, &Undeclared, false);
        w.start(false, &mut RandomChooser::new(0));
        assert_eq!(w.worker_classes(), [0, 0]);
        assert_eq!(
            w.parts(&Event::CallDelivered {
                worker: WorkerId(0),
                call: crate::vocab::protocol::ToolCall::for_tests(0),
            }),
            Parts::ALL
        );
        let intent = crate::vocab::record::Intent {
            id: IntentId(0),
            arrival_ms: 0,
            tenant: crate::vocab::ids::Tenant(0),
            endpoint: crate::vocab::ids::Endpoint(0),
            params: crate::vocab::ids::Params(1),
            repeat_of: None,
            steps: 1,
        };
        assert_eq!(w.twin_class(&Event::AgentStart(intent)), 0);
        let same_key = crate::design::find("same_key").expect("built in");
        let w = World::new(&m, same_key, false);
        assert_ne!(w.twin_class(&Event::AgentStart(intent)), 0);
        assert_eq!(
            w.twin_class(&Event::AgentStart(crate::vocab::record::Intent {
                repeat_of: Some(IntentId(0)),
                ..intent
            })),
            0
        );
        assert_eq!(w.parts(&Event::Arrival), Parts::WORKLOAD);
        assert_eq!(w.parts(&Event::ProviderWake { job: 0 }), Parts::PROVIDER);
    }

    #[test]
    fn intents_alone_in_their_tenants_are_twins_across_tenants() {
        let same_key = crate::design::find("same_key").expect("built in");
        let intent = |id: u32, tenant: u32| {
            Event::AgentStart(crate::vocab::record::Intent {
                id: IntentId(id),
                arrival_ms: 0,
                tenant: crate::vocab::ids::Tenant(tenant),
                endpoint: crate::vocab::ids::Endpoint(0),
                params: crate::vocab::ids::Params(u64::from(id) + 1),
                repeat_of: None,
                steps: 1,
            })
        };
        let with = |intents: u32, tenants: u32| {
            let mut m = model("[]");
            m.workload.intents = intents;
            m.workload.tenants = tenants;
            m
        };
        // Two intents, two tenants: each tenant has one intent, a name only.
        let m = with(2, 2);
        let w = World::new(&m, same_key, false);
        assert_eq!(w.twin_class(&intent(0, 0)), w.twin_class(&intent(1, 1)));
        // Three intents, two tenants: intent 2 shares tenant 0 with intent 0, so tenant 0
        // is not a name only, and intent 0 is not intent 1's twin; intent 1 is alone in
        // tenant 1, but its twin would have to be alone too.
        let m = with(3, 2);
        let w = World::new(&m, same_key, false);
        assert_ne!(w.twin_class(&intent(0, 0)), w.twin_class(&intent(1, 1)));
        assert_eq!(w.twin_class(&intent(0, 0)), w.twin_class(&intent(2, 0)));
    }
}
