//! Finite menus for timing choices under exploration.
//!
//! Random simulation draws a delay uniformly from every millisecond of its range (a
//! [`Span`](crate::sim::Alternatives::Span)). A search cannot try them all, and need not:
//! what a delay decides is on which side of the model's time thresholds an event falls (a
//! reply before or after the client timeout, a retry before or after the retention). So an
//! explorer offers a small menu per range: its minimum and its maximum, and the values just
//! below and just above every threshold strictly inside the range. Landing exactly on a
//! threshold makes two events due at the same instant, which is the tie-order choice's
//! business ([`crate::sim::Purpose::Order`]).
//!
//! Thresholds are measured from the start of the delay, which is exact for a timer started
//! with the delay (a send's timeout and its request's latency) and a heuristic otherwise.

use crate::model::{Fault, Model};
use crate::sim::Millis;

/// One time threshold of a model and the knob it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Threshold {
    pub ms: Millis,
    /// The model path of the knob (`executor.timeout_ms`); a backoff step names
    /// `executor.backoff_ms`, the age at which a journal design stops resending a key
    /// names `executor.assumed_retention_ms` (it is that less one client timeout).
    pub knob: &'static str,
}

/// Every time threshold of the model with the knob it comes from, in the order of the
/// knobs (not sorted, not deduplicated); zero values are left out, as no delay straddles
/// them.
///
/// - `agent.tool_timeout_ms`, `executor.timeout_ms`;
/// - each backoff step `backoff_before(n)` for the retries a call can make (executor
///   attempts plus reads, or attempts times the `layered_retries` layers, whichever is more);
/// - `executor.deadline_ms`, `executor.visibility_bound_ms`, `executor.lease_ms` (the model
///   does not say which design runs, so the lease is always listed), `executor.sweep_ms`;
/// - `executor.poll_ms` when the provider answers creates with 202 (`accept_async`): only
///   then does anyone poll;
/// - `executor.assumed_retention_ms`, and that less `executor.timeout_ms` (when a journal
///   design stops resending a key);
/// - `provider.retention_ms` (the floor) and `provider.retention_max_ms`,
///   `provider.in_progress_expiry_ms`;
/// - `workers.restart_delay_ms` when a worker can crash (a random crash probability with
///   `max_crashes > 0`, or a scripted `crash_worker`).
pub fn named_thresholds(model: &Model) -> Vec<Threshold> {
    let (a, e, p, w) = (
        &model.agent,
        &model.executor,
        &model.provider,
        &model.workers,
    );
    let mut out = Vec::new();
    let mut add = |ms: Option<Millis>, knob: &'static str| {
        if let Some(ms) = ms.filter(|&ms| ms > 0) {
            out.push(Threshold { ms, knob });
        }
    };
    add(Some(a.tool_timeout_ms), "agent.tool_timeout_ms");
    add(Some(e.timeout_ms), "executor.timeout_ms");
    let layered = e
        .attempts
        .saturating_mul(e.layers.tool)
        .saturating_mul(e.layers.queue);
    let sends = e.attempts.saturating_add(e.reads).max(layered);
    for n in 1..sends {
        let step = e.backoff_before(n);
        add(Some(step), "executor.backoff_ms");
        if step >= e.max_backoff_ms || n >= 32 {
            // Every later step is the same capped (or saturated) value.
            break;
        }
    }
    add(e.deadline_ms, "executor.deadline_ms");
    add(Some(e.visibility_bound_ms), "executor.visibility_bound_ms");
    add(Some(e.lease_ms), "executor.lease_ms");
    add(e.sweep_ms, "executor.sweep_ms");
    if p.accept_async {
        add(Some(e.poll_ms), "executor.poll_ms");
    }
    if let Some(r) = e.assumed_retention_ms {
        add(Some(r), "executor.assumed_retention_ms");
        add(
            Some(r.saturating_sub(e.timeout_ms)),
            "executor.assumed_retention_ms",
        );
    }
    add(p.retention_ms, "provider.retention_ms");
    add(p.retention_max_ms, "provider.retention_max_ms");
    add(p.in_progress_expiry_ms, "provider.in_progress_expiry_ms");
    let random_crash = w.max_crashes > 0 && w.crash.any();
    let scripted_crash = model
        .faults
        .iter()
        .any(|f| matches!(f, Fault::CrashWorker { .. } | Fault::CrashAtCommit { .. }));
    if random_crash || scripted_crash {
        add(Some(w.restart_delay_ms), "workers.restart_delay_ms");
    }
    out
}

/// Every time threshold of the model a delay can straddle, sorted, deduplicated: client
/// timeout, tool timeout, lease, visibility bound, retention (floor and max), in-progress
/// expiry, sweep period, deadline, poll period, each backoff step, assumed retention...
/// (see [`named_thresholds`] for the exact list). The tests read this sorted list; the
/// search reads [`named_thresholds`].
#[cfg(test)]
fn thresholds(model: &Model) -> Vec<Millis> {
    let mut ts: Vec<Millis> = named_thresholds(model).iter().map(|t| t.ms).collect();
    ts.sort_unstable();
    ts.dedup();
    ts
}

/// The menu of a `Span { min, len }` under exploration, as OFFSETS (value - min),
/// ascending: 0, len - 1, and for every threshold t with min < t < min + len - 1:
/// t - 1 - min and t + 1 - min (clamped into range), deduplicated. Alternative 0 of the
/// menu is the default (offset 0). A span of fewer than two values has the menu `[0]`.
pub fn menu(min: u64, len: u64, thresholds: &[Millis]) -> Vec<u64> {
    if len <= 1 {
        return vec![0];
    }
    let last = len - 1;
    let mut offsets = vec![0, last];
    for &t in thresholds {
        if t > min && t - min < last {
            let at = t - min;
            offsets.push(at - 1);
            offsets.push((at + 1).min(last));
        }
    }
    offsets.sort_unstable();
    offsets.dedup();
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_straddling_one_threshold() {
        // Latency 30..=2000 ms (1971 values) around a 1 s timeout: 999 and 1001 ms.
        assert_eq!(menu(30, 1971, &[1_000]), vec![0, 969, 971, 1970]);
        assert_eq!(30 + 969, 999);
        assert_eq!(30 + 971, 1001);
        assert_eq!(30 + 1970, 2000);
    }

    #[test]
    fn thresholds_outside_or_on_the_bounds_add_nothing() {
        // 30..=2000: 30 and 2000 are the bounds themselves, 10 and 5000 outside.
        assert_eq!(menu(30, 1971, &[10, 30, 2_000, 5_000]), vec![0, 1970]);
    }

    #[test]
    fn thresholds_next_to_the_bounds_stay_in_range_and_merge() {
        // 0..=10: t = 1 gives 0 and 2; t = 9 gives 8 and 10; t = 5 gives 4 and 6.
        assert_eq!(menu(0, 11, &[1, 5, 9]), vec![0, 2, 4, 6, 8, 10]);
        // Two thresholds 2 ms apart share the value between them.
        assert_eq!(menu(100, 101, &[150, 152]), vec![0, 49, 51, 53, 100]);
        // Unsorted and repeated thresholds give the same menu.
        assert_eq!(
            menu(100, 101, &[152, 150, 152]),
            menu(100, 101, &[150, 152])
        );
    }

    #[test]
    fn the_smallest_spans() {
        assert_eq!(menu(7, 2, &[7, 8]), vec![0, 1]);
        assert_eq!(menu(7, 3, &[8]), vec![0, 2]);
        assert_eq!(menu(7, 1, &[]), vec![0]);
    }

    #[test]
    fn no_overflow_near_the_top() {
        let min = u64::MAX - 10;
        assert_eq!(menu(min, 11, &[u64::MAX - 5, u64::MAX]), vec![0, 4, 6, 10]);
    }
}

/// The thresholds of a model come from its knobs, exactly, and a range's menu is its bounds
/// plus the values just around each threshold it straddles.
#[cfg(test)]
mod model_tests {
    use super::*;
    use crate::model::testing::{bundled_model, bundled_models};
    use serde_json::{Value, json};

    fn t(ms: u64, knob: &'static str) -> Threshold {
        Threshold { ms, knob }
    }

    #[test]
    fn ticket_lost_response_thresholds_are_its_timeouts_and_the_lease() {
        let m = bundled_model("ticket_lost_response.json");
        assert_eq!(
            named_thresholds(&m),
            vec![
                t(60_000, "agent.tool_timeout_ms"),
                t(5_000, "executor.timeout_ms"),
                t(30_000, "executor.lease_ms"),
            ]
        );
        assert_eq!(thresholds(&m), vec![5_000, 30_000, 60_000]);
        // None of its ranges straddles one: latency 5..=80, processing 20..=300, think
        // 200..=1500 each offer their two bounds.
        let ts = thresholds(&m);
        assert_eq!(menu(5, 76, &ts), vec![0, 75]);
        assert_eq!(menu(20, 281, &ts), vec![0, 280]);
        assert_eq!(menu(200, 1301, &ts), vec![0, 1300]);
    }

    #[test]
    fn every_knob_that_is_a_threshold_is_listed_exactly() {
        let text = json!({
            "name": "knobs",
            "horizon_ms": 10_000_000,
            "designs": ["journal"],
            "workload": { "intents": 1 },
            "agent": { "tool_timeout_ms": 60_000, "max_calls": 2,
                       "on_failure": { "give_up": 1 }, "on_unknown": { "replan": 1 } },
            "executor": { "attempts": 3, "reads": 2, "backoff_ms": 100, "max_backoff_ms": 150,
                          "timeout_ms": 5_000, "deadline_ms": 7_000, "visibility_bound_ms": 300,
                          "lease_ms": 9_000, "sweep_ms": 11_000, "poll_ms": 400,
                          "assumed_retention_ms": 20_000 },
            "workers": { "crash": { "after_send": "1/2" }, "restart_delay_ms": 2_500 },
            "provider": { "dedup": "by_key", "accept_async": true, "retention_ms": 50_000,
                          "retention_max_ms": 80_000, "in_progress_expiry_ms": 13_000 }
        });
        let m = Model::from_json(&text.to_string(), "knobs.json").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            named_thresholds(&m),
            vec![
                t(60_000, "agent.tool_timeout_ms"),
                t(5_000, "executor.timeout_ms"),
                // Up to 4 retries (3 attempts + 2 reads): 100, then 200 capped at 150.
                t(100, "executor.backoff_ms"),
                t(150, "executor.backoff_ms"),
                t(7_000, "executor.deadline_ms"),
                t(300, "executor.visibility_bound_ms"),
                t(9_000, "executor.lease_ms"),
                t(11_000, "executor.sweep_ms"),
                t(400, "executor.poll_ms"),
                t(20_000, "executor.assumed_retention_ms"),
                t(15_000, "executor.assumed_retention_ms"),
                t(50_000, "provider.retention_ms"),
                t(80_000, "provider.retention_max_ms"),
                t(13_000, "provider.in_progress_expiry_ms"),
                t(2_500, "workers.restart_delay_ms"),
            ]
        );
        assert_eq!(
            thresholds(&m),
            vec![
                100, 150, 300, 400, 2_500, 5_000, 7_000, 9_000, 11_000, 13_000, 15_000, 20_000,
                50_000, 60_000, 80_000
            ]
        );
        // A latency of 50..=500 ms straddles the backoff steps, the visibility bound and the
        // poll period.
        assert_eq!(
            menu(50, 451, &thresholds(&m)),
            vec![0, 49, 51, 99, 101, 249, 251, 349, 351, 450]
        );
    }

    /// The value at `path` ("executor.timeout_ms") of the model as it serializes.
    fn knob(model: &Value, path: &str) -> Option<u64> {
        path.split('.')
            .try_fold(model, |v, part| v.get(part))
            .and_then(Value::as_u64)
    }

    #[test]
    fn every_threshold_of_every_bundled_model_comes_from_a_knob() {
        for m in bundled_models() {
            let value = serde_json::to_value(&m).unwrap();
            let e = &m.executor;
            for th in named_thresholds(&m) {
                let v = knob(&value, th.knob)
                    .unwrap_or_else(|| panic!("{}: {} is no knob of the model", m.name, th.knob));
                let ok = match th.knob {
                    "executor.backoff_ms" => (1..64).any(|n| e.backoff_before(n) == th.ms),
                    "executor.assumed_retention_ms" => {
                        th.ms == v || th.ms == v.saturating_sub(e.timeout_ms)
                    }
                    _ => th.ms == v,
                };
                assert!(ok, "{}: {} ms from {} ({v})", m.name, th.ms, th.knob);
                assert!(th.ms > 0, "{}: {}", m.name, th.knob);
            }
            let mut sorted: Vec<u64> = named_thresholds(&m).iter().map(|t| t.ms).collect();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(thresholds(&m), sorted, "{}", m.name);
        }
    }
}
