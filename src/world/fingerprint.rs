//! Fingerprints of world states: a stable 64-bit hash of everything that decides the rest of
//! a run and its outcome, so that an explorer can tell a state it has seen before (a visited
//! set, as stateright keeps one) and prune the branch.
//!
//! Stable means: the same state gives the same hash in every run and every process. The
//! hasher has a fixed key, integers are hashed as 64-bit words whatever their width, nothing
//! hashes a pointer, and the two hash maps of the world (the provider's key store and its
//! resources by key) are folded in whatever order they iterate: each entry is hashed on its
//! own and the entry hashes are added up, which no order changes. (Slices of integers reach a
//! hasher as their bytes in the machine's order, so a big-endian machine computes other
//! values; fingerprints are compared within one search, never across machines.)
//!
//! Cost: about 280 words for the lost-response world (one intent), a few hundred nanoseconds
//! per fingerprint; about four times that with ten intents under way (`ticket_chaos`).
//!
//! What is hashed is listed in [`World::fingerprint`]. Each component hashes its own fields
//! next to their definition, and destructures itself to do so: a field added later does not
//! compile until someone says whether it is part of the state.

use std::hash::{Hash, Hasher};

use super::{Event, World};
use crate::sim::hash::StableHasher;

impl World<'_> {
    /// A stable 64-bit hash of everything that decides the rest of the run and its outcome;
    /// `None` if an executor cannot be fingerprinted ([`crate::design::Executor::fingerprint`]
    /// returns false, the default for a design that does not say what its memory is).
    ///
    /// Two worlds that can still reach exactly the same futures with the same outcomes have
    /// the same fingerprint; anything else differs (up to hash collisions, about one in 2^64
    /// per pair of states). Hashed, in this order:
    /// - each worker: up or down, its incarnation, the calls waiting in its inbox, and its
    ///   executor's memory (by the executor itself);
    /// - the clock (absolute: deadlines, retention and lease expiry are measured from it), the
    ///   event being handled when called from [`World::run_observed`], and every queued
    ///   event with its due time, in pop order, each marked if it is held by a pause (events
    ///   held later to the same moment queue after it, but before those pushed for it);
    /// - the intents so far; the agent (per intent: step, arguments, calls, authorizations,
    ///   the call under way, receipts; the call → intent map, issues, and what the user was
    ///   told and when); the provider (jobs with their waiters and outcomes, resources with
    ///   their visibility moments, every key record with its times and pruning moment, the
    ///   resources by key); the ledger; the journal (records, scratch state, unresolved set,
    ///   indexes, leases and the next fence, the authorization ledger, the next operation id);
    /// - the transport's record of each send (worker, operation, open, create, what it
    ///   serves), the ids minted (attempts, keys), remote calls so far, random crashes so far,
    ///   each attempt's create number and the creates counted (they decide which scripted
    ///   faults hit later sends);
    /// - the observer records the metrics read: each operation's intent and first unknown
    ///   moment, the operation of each send, the claims with their times, and how the run
    ///   ended.
    ///
    /// Left out: the model and the design (fixed for a world), the trace (text only), which
    /// scripted faults fired (a warning for sweeps, accumulated across runs; a fault hits by
    /// create number, never once only), the count of events handled (it matters only to a
    /// run that reaches the events budget, and a search stops at such a run), and the command buffers, which are empty between
    /// events. Nothing is reduced by symmetry: ids are hashed as they are, since they name
    /// keys, calls and resources that later events refer to.
    pub fn fingerprint(&self) -> Option<u64> {
        self.fingerprint_with(None)
    }

    /// [`World::fingerprint`], with the moments the world keeps hashed as `moments` says:
    /// exactly (`None`), or only as far as they can still change the run's future and
    /// verdict ([`crate::sim::Moments`]).
    pub fn fingerprint_with(&self, moments: Option<crate::sim::moments::Moments>) -> Option<u64> {
        crate::sim::moments::with(moments, || self.hash_state())
    }

    /// How [`World::fingerprint_with`] hashes this world's moments now, abstracting them:
    /// the observer's too unless `observer`, the journal's if the design declares it reads
    /// them only while they matter ([`crate::design::Design::reads_settled_times`]).
    pub fn moments(&self, observer: bool) -> crate::sim::moments::Moments {
        let p = &self.model.provider;
        crate::sim::moments::Moments {
            now: self.now,
            horizon: self.model.horizon_ms,
            observer,
            journal: self.design.reads_settled_times(),
            key_reach: [
                p.retention_ms.unwrap_or(0),
                p.retention_max_ms.unwrap_or(0),
                p.in_progress_expiry_ms.unwrap_or(0),
            ],
        }
    }

    fn hash_state(&self) -> Option<u64> {
        let World {
            model: _,
            design: _,
            queue,
            aperiodic,
            now,
            faults,
            workload,
            agent,
            network: _,
            provider,
            ledger,
            journal,
            workers,
            random_crashes,
            transport,
            records,
            current,
            events: _,
            trace: _,
            // Handles of queued timers: which slot an event sits in says nothing of the state.
            agent_timers: _,
            exec_out,
            provider_out,
            tie: _,
            taken: _,
            cut_at_tie: _,
        } = self;
        debug_assert!(exec_out.is_empty() && provider_out.is_empty());
        let mut h = StableHasher::new();
        h.write_usize(workers.len());
        for w in workers {
            if !w.fingerprint(&mut h) {
                return None;
            }
        }
        now.hash(&mut h);
        aperiodic.hash(&mut h);
        current.hash(&mut h);
        h.write_usize(queue.len());
        for (at_ms, held, event) in queue.in_pop_order() {
            at_ms.hash(&mut h);
            held.hash(&mut h);
            event.hash(&mut h);
            // What the event carries, kept aside.
            if let Event::RequestArrives { attempt } = event {
                transport.requests[attempt.0 as usize - 1].hash(&mut h);
            }
        }
        workload.fingerprint(&mut h);
        agent.fingerprint(&mut h);
        provider.fingerprint(&mut h);
        ledger.fingerprint(&mut h);
        journal.lock().fingerprint(&mut h);
        transport.fingerprint(&mut h);
        random_crashes.hash(&mut h);
        faults.fingerprint(&mut h);
        records.fingerprint(&mut h);
        Some(h.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(x: impl Hash) -> u64 {
        let mut h = StableHasher::new();
        x.hash(&mut h);
        h.finish()
    }

    #[test]
    fn hashes_are_fixed_and_tell_small_inputs_apart() {
        // Pinned: a change of the hasher changes every fingerprint an explorer stored.
        assert_eq!(hash((1u64, 2u32)), 2_002_379_110_950_962_129);
        let small: Vec<u64> = (0..1000u64).map(hash).collect();
        let mut sorted = small.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 1000);
        // Same words, other grouping: a vector's length is part of its hash.
        assert_ne!(
            hash((vec![1u32], vec![2u32])),
            hash((vec![1u32, 2], Vec::<u32>::new()))
        );
        // Integers hash by value whatever their width or sign.
        assert_eq!(hash(7u32), hash(7u64));
        assert_eq!(hash(7usize), hash(7u64));
        // Bytes: a trailing zero counts.
        assert_ne!(hash([1u8].as_slice()), hash([1u8, 0].as_slice()));
    }

    mod state {
        //! Every part of the state is in the fingerprint: a world run to its end, then one
        //! field changed, against the same world unchanged.

        use std::hash::{Hash, Hasher};
        use std::path::Path;

        use crate::design::{Design, ExecCtx, Executor, OpState};
        use crate::model::Model;
        use crate::sim::RandomChooser;
        use crate::sim::moments::Moments;
        use crate::vocab::ids::*;
        use crate::vocab::protocol::{Request, Response, ToolCall};
        use crate::vocab::record::Effect;
        use crate::vocab::record::End;
        use crate::world::keystore::{Record, ScopedKey, Slot};
        use crate::world::{Event, World};

        fn model() -> Model {
            let path =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ticket_lost_response.json");
            Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
        }

        fn lease_design() -> &'static dyn Design {
            crate::design::find("journal_reconcile_lease").unwrap()
        }

        /// The fingerprint of the world `journal_reconcile_lease` leaves on the lost-response
        /// model (seed 7), after `change`.
        fn after(change: impl FnOnce(&mut World<'_>)) -> u64 {
            let model = model();
            let mut w = World::new(&model, lease_design(), false);
            w.run(&mut RandomChooser::new(7));
            change(&mut w);
            w.fingerprint().expect("a built-in design")
        }

        /// `change` makes a different state; `same` does not.
        fn differs(change: impl FnOnce(&mut World<'_>)) {
            assert_ne!(after(change), after(|_| {}));
        }

        fn same(change: impl FnOnce(&mut World<'_>)) {
            assert_eq!(after(change), after(|_| {}));
        }

        #[test]
        fn the_world_left_behind_has_something_in_every_part() {
            let model = model();
            let mut w = World::new(&model, lease_design(), false);
            w.run(&mut RandomChooser::new(7));
            assert!(!w.records.op_records.is_empty() && !w.records.claims.is_empty());
            assert!(!w.transport.attempts.is_empty() && !w.ledger.effects().is_empty());
            assert!(!w.provider.store().is_empty());
            assert!(w.journal.get_mut().leases().get(OpId(0)).is_some());
            assert_eq!(after(|_| {}), after(|_| {}));
        }

        #[test]
        fn the_clock() {
            differs(|w| w.now += 1);
        }

        #[test]
        fn queued_events_their_times_payloads_order_and_holds() {
            let wake = |job| Event::ProviderWake { job };
            // An event more; at another time; another payload.
            differs(|w| w.push(900_000, wake(0)));
            assert_ne!(
                after(|w| {
                    w.queue.push(900_000, wake(0));
                }),
                after(|w| {
                    w.queue.push(900_001, wake(0));
                })
            );
            assert_ne!(
                after(|w| {
                    w.queue.push(900_000, wake(0));
                }),
                after(|w| {
                    w.queue.push(900_000, wake(1));
                })
            );
            // Two events due at one moment, in the other order.
            assert_ne!(
                after(|w| {
                    w.queue.push(900_000, wake(0));
                    w.queue.push(900_000, wake(1));
                }),
                after(|w| {
                    w.queue.push(900_000, wake(1));
                    w.queue.push(900_000, wake(0));
                })
            );
            // Held by a pause rather than pushed: a later hold to the same moment queues
            // before the one, after the other.
            assert_ne!(
                after(|w| {
                    w.queue.push(900_000, wake(0));
                }),
                after(|w| {
                    w.queue.defer(900_000, wake(0));
                })
            );
            // How many events were pushed before is not state: only the order they pop in.
            assert_eq!(
                after(|w| {
                    w.queue.push(900_000, wake(0));
                }),
                after(|w| {
                    w.queue.push(1, wake(5));
                    w.queue.pop();
                    w.queue.push(900_000, wake(0));
                })
            );
            // A cancelled event is not state: it never pops.
            assert_eq!(
                after(|w| {
                    w.queue.push(900_000, wake(0));
                }),
                after(|w| {
                    let moot = w.queue.push(5, wake(5));
                    w.queue.push(900_000, wake(0));
                    w.queue.cancel(moot);
                })
            );
        }

        #[test]
        fn the_event_being_handled() {
            differs(|w| w.current = Some(Event::ProviderWake { job: 0 }));
            assert_ne!(
                after(|w| w.current = Some(Event::ProviderWake { job: 0 })),
                after(|w| w.current = Some(Event::ProviderWake { job: 1 }))
            );
        }

        #[test]
        fn workers_up_incarnation_and_inbox() {
            differs(|w| w.workers[0].incarnation += 1);
            differs(|w| w.workers[0].up = false);
            differs(|w| w.workers[0].inbox.push(ToolCall::for_tests(0)));
            differs(|w| w.workers[0].executor = None);
        }

        /// An executor whose memory is one number.
        struct Memory(u64);

        impl Executor for Memory {
            fn on_call(&mut self, _: &mut ExecCtx<'_>, _: ToolCall) {}
            fn on_response(&mut self, _: &mut ExecCtx<'_>, _: OpId, _: AttemptId, _: Response) {}
            fn fingerprint(&self, mut h: &mut dyn Hasher) -> bool {
                self.0.hash(&mut h);
                true
            }
        }

        /// An executor that cannot say what its memory is.
        struct Opaque;

        impl Executor for Opaque {
            fn on_call(&mut self, _: &mut ExecCtx<'_>, _: ToolCall) {}
            fn on_response(&mut self, _: &mut ExecCtx<'_>, _: OpId, _: AttemptId, _: Response) {}
            fn fingerprint(&self, _: &mut dyn Hasher) -> bool {
                false
            }
        }

        #[test]
        fn executor_memory() {
            let with = |m: u64| after(move |w| w.workers[0].executor = Some(Box::new(Memory(m))));
            assert_eq!(with(1), with(1));
            assert_ne!(with(1), with(2));
            let model = model();
            let mut w = World::new(&model, lease_design(), false);
            w.run(&mut RandomChooser::new(7));
            w.workers[0].executor = Some(Box::new(Opaque));
            assert_eq!(w.fingerprint(), None);
            // A worker that is down has no memory to hash.
            w.workers[0].executor = None;
            assert!(w.fingerprint().is_some());
        }

        #[test]
        fn intents_and_the_agent() {
            differs(|w| {
                let now = w.now;
                w.workload.arrive(now, &mut RandomChooser::new(0));
            });
            differs(|w| {
                let intent = w.workload.intents()[0];
                let now = w.now;
                w.agent.start(intent, now, &mut w.trace);
            });
        }

        /// A key record no request has touched, first requested at `first_ms`.
        fn record(first_ms: u64) -> Record {
            Record {
                fingerprint: Params(1),
                endpoint: Endpoint(0),
                first_request_ms: first_ms,
                first_sent_ms: None,
                completed_ms: Some(first_ms + 1),
                pruned_at_ms: None,
                slot: Slot::Done {
                    reply: crate::vocab::protocol::Reply::InProgress,
                    resource: None,
                },
            }
        }

        fn scoped(key: u64) -> ScopedKey {
            ScopedKey {
                tenant: Some(Tenant(0)),
                endpoint: None,
                region: None,
                key: Key(key),
            }
        }

        #[test]
        fn key_store_records_with_their_times_and_pruning_moments() {
            let claim = |w: &mut World<'_>, first_ms| {
                w.provider
                    .store()
                    .claim(scoped(99), record(first_ms), |_| false);
            };
            differs(|w| claim(w, 10));
            assert_ne!(after(|w| claim(w, 10)), after(|w| claim(w, 11)));
            assert_ne!(
                after(|w| {
                    claim(w, 10);
                    w.provider.store().prune_at(&scoped(99), 500);
                }),
                after(|w| {
                    claim(w, 10);
                    w.provider.store().prune_at(&scoped(99), 501);
                })
            );
        }

        #[test]
        fn provider_jobs_and_resources() {
            let send = |w: &mut World<'_>, at_ms| {
                let mut out = Vec::new();
                let env = crate::world::provider::Env {
                    now: at_ms,
                    faults: &w.faults,
                    ch: &mut RandomChooser::new(0),
                    trace: &mut w.trace,
                    out: &mut out,
                };
                let request = Request::create(&ToolCall::for_tests(5), None);
                w.provider.on_request(AttemptId(40), request, env);
            };
            differs(|w| send(w, 900_000));
            assert_ne!(after(|w| send(w, 900_000)), after(|w| send(w, 900_001)));
        }

        #[test]
        fn the_ledger() {
            let commit = |w: &mut World<'_>, at_ms| {
                let e = w.ledger.effects()[0];
                w.ledger.commit(Effect { at_ms, ..e });
            };
            differs(|w| commit(w, 900_000));
            assert_ne!(after(|w| commit(w, 900_000)), after(|w| commit(w, 900_001)));
        }

        #[test]
        fn the_journal_records_scratch_leases_ledger_and_index() {
            let op = OpId(0);
            differs(|w| {
                let now = w.now;
                w.journal.get_mut().transition(op, OpState::Escalated, now);
            });
            differs(|w| w.journal.get_mut().get_mut(op).unwrap().receipt = None);
            differs(|w| w.journal.get_mut().scratch_mut(op).unwrap().reads += 1);
            differs(|w| {
                let holder = crate::design::journal::Holder {
                    worker: WorkerId(0),
                    incarnation: 1,
                };
                w.journal
                    .get_mut()
                    .claim(op, holder, 10_000_000, 5)
                    .unwrap();
            });
            differs(|w| {
                w.journal
                    .get_mut()
                    .auth_ledger_mut()
                    .consume(AuthId(9), Key(9), Params(9));
            });
            differs(|w| {
                let call = w.journal.get_mut().get(op).unwrap().call();
                let other = ToolCall {
                    call: CallId(call.call.0 + 10),
                    ..call
                };
                w.journal.get_mut().set_call(op, other);
            });
        }

        #[test]
        fn sends_minted_ids_counters_and_fault_numbers() {
            differs(|w| w.transport.attempts[0].open = !w.transport.attempts[0].open);
            differs(|w| w.transport.minted.keys += 1);
            differs(|w| w.transport.minted.attempts += 1);
            differs(|w| w.transport.remote_calls += 1);
            differs(|w| w.random_crashes += 1);
            differs(|w| {
                let next = AttemptId(w.transport.attempts.len() as u32 + 1);
                w.faults.number(next, true);
            });
        }

        #[test]
        fn observer_records_op_records_sends_claims_and_the_end() {
            differs(|w| w.records.op_records[0].first_unknown_ms = Some(123_456));
            differs(|w| w.records.attempt_ops.push(OpId(0)));
            differs(|w| w.records.claims[0].at_ms += 1);
            differs(|w| w.records.claims.pop().map(|_| ()).unwrap_or(()));
            differs(|w| w.records.end = (End::Horizon, w.now));
        }

        /// The fingerprint of the world left behind, after `change`, with its moments
        /// hashed as `moments` (from the world's own, `Reductions::timing`) says.
        fn abstract_after(
            moments: impl FnOnce(Moments) -> Moments,
            change: impl FnOnce(&mut World<'_>),
        ) -> u64 {
            let model = model();
            let mut w = World::new(&model, lease_design(), false);
            w.run(&mut RandomChooser::new(7));
            change(&mut w);
            let m = moments(w.moments(false));
            w.fingerprint_with(Some(m)).expect("a built-in design")
        }

        fn as_is(m: Moments) -> Moments {
            m
        }

        #[test]
        fn observer_moments_count_only_where_a_property_reads_times() {
            let claimed_at = |at| move |w: &mut World<'_>| w.records.claims[0].at_ms = at;
            let effect_at = |at| {
                move |w: &mut World<'_>| {
                    let e = w.ledger.effects()[0];
                    w.ledger.commit(Effect { at_ms: at, ..e });
                }
            };
            assert_eq!(
                abstract_after(as_is, claimed_at(5)),
                abstract_after(as_is, claimed_at(6))
            );
            assert_eq!(
                abstract_after(as_is, effect_at(5)),
                abstract_after(as_is, effect_at(6))
            );
            let observed = |m| Moments {
                observer: true,
                ..m
            };
            assert_ne!(
                abstract_after(observed, claimed_at(5)),
                abstract_after(observed, claimed_at(6))
            );
            // What was claimed is state whatever its moment.
            assert_ne!(
                abstract_after(as_is, |w| w.records.claims[0].kind =
                    crate::vocab::record::ClaimKind::Failed),
                abstract_after(as_is, |_| {})
            );
        }

        #[test]
        fn a_key_record_moment_counts_while_a_retention_can_still_pass_it() {
            let send = |at_ms| {
                move |w: &mut World<'_>| {
                    let mut out = Vec::new();
                    let env = crate::world::provider::Env {
                        now: at_ms,
                        faults: &w.faults,
                        ch: &mut RandomChooser::new(0),
                        trace: &mut w.trace,
                        out: &mut out,
                    };
                    let request = Request::create(&ToolCall::for_tests(5), None);
                    w.provider.on_request(AttemptId(40), request, env);
                }
            };
            let reach = |c| {
                move |m: Moments| Moments {
                    key_reach: [c, 0, 0],
                    ..m
                }
            };
            // No retention, no expiry: the moment a job started is never compared.
            assert_eq!(
                abstract_after(as_is, send(100)),
                abstract_after(as_is, send(101))
            );
            // A retention that ends between now and the horizon for one of them: exact.
            let (now, horizon) = {
                let m = model();
                let mut w = World::new(&m, lease_design(), false);
                w.run(&mut RandomChooser::new(7));
                (w.now, m.horizon_ms)
            };
            let live = horizon - now;
            assert_ne!(
                abstract_after(reach(live), send(now)),
                abstract_after(reach(live), send(now + 1))
            );
            // Both long past, or both out of the horizon's reach: alike.
            assert_eq!(
                abstract_after(reach(1), send(1)),
                abstract_after(reach(1), send(2))
            );
            assert_eq!(
                abstract_after(reach(horizon + 1), send(now)),
                abstract_after(reach(horizon + 1), send(now + 1))
            );
        }

        #[test]
        fn journal_times_count_until_the_operation_is_settled() {
            let op = OpId(0);
            let moved = |state, at| {
                move |w: &mut World<'_>| {
                    w.journal.get_mut().transition(op, state, at);
                }
            };
            let now = {
                let m = model();
                let mut w = World::new(&m, lease_design(), false);
                w.run(&mut RandomChooser::new(7));
                w.now
            };
            // Settled: when it was updated is never read again (the design declares it).
            assert_eq!(
                abstract_after(as_is, moved(OpState::Confirmed, now - 5)),
                abstract_after(as_is, moved(OpState::Confirmed, now))
            );
            // Unknown: a sweeper compares its age.
            assert_ne!(
                abstract_after(as_is, moved(OpState::Unknown, now - 5)),
                abstract_after(as_is, moved(OpState::Unknown, now))
            );
            // A design that does not declare how it reads the journal: exact.
            let exact = |m| Moments { journal: true, ..m };
            assert_ne!(
                abstract_after(exact, moved(OpState::Confirmed, now - 5)),
                abstract_after(exact, moved(OpState::Confirmed, now))
            );
        }

        #[test]
        fn a_lease_expiry_counts_until_it_has_passed() {
            let op = OpId(0);
            // Renewed by its holder, from `from` for `ms`.
            let leased = |from, ms| {
                move |w: &mut World<'_>| {
                    let j = w.journal.get_mut();
                    let holder = j.leases().get(op).expect("leased").holder;
                    j.claim(op, holder, from, ms).unwrap();
                }
            };
            let now = {
                let m = model();
                let mut w = World::new(&m, lease_design(), false);
                w.run(&mut RandomChooser::new(7));
                w.now
            };
            // Ahead: exact.
            assert_ne!(
                abstract_after(as_is, leased(now, 1_000)),
                abstract_after(as_is, leased(now, 1_001))
            );
            // Both passed: alike (another holder may claim it either way).
            assert_eq!(
                abstract_after(as_is, leased(now - 20, 1)),
                abstract_after(as_is, leased(now - 30, 1))
            );
            // Passed against ahead: different.
            assert_ne!(
                abstract_after(as_is, leased(now - 20, 1)),
                abstract_after(as_is, leased(now, 1_000))
            );
        }

        #[test]
        fn the_trace_fired_faults_and_event_count_are_not_state() {
            same(|w| w.trace = crate::vocab::trace::Trace::new(true));
            same(|w| w.events += 1);
            same(|w| {
                w.faults.drops_reply(AttemptId(1));
                w.take_fired_faults();
            });
        }
    }
}
