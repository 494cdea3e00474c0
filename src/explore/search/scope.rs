//! The timing values a search offers: what its certificate covers.

use super::super::menu;
use crate::design::Design;
use crate::model::Model;
use crate::sim::Millis;

/// The timing values a `dfs` search offered at its timing choices: the two ends of every
/// range, and the values 1 ms either side of each threshold below that falls strictly
/// inside a range. A certificate covers every schedule with at most K faults *at these
/// values*: a constant of the design that it neither declared
/// ([`Design::time_thresholds`], [`crate::design::ExecCtx::declare_threshold`]) nor set as
/// a timer's delay is outside it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimingScope {
    /// The model's knobs and the design's declared constants, as named thresholds.
    pub named: Vec<menu::Threshold>,
    /// Thresholds learned during the runs (the delays of the design's timers, the ages it
    /// declared), sorted, those equal to a named one left out.
    pub learned: Vec<Millis>,
    /// What the design fixed rather than offered as choices
    /// ([`Design::certificate_caveats`]): named in the scope, since no schedule varied it.
    pub caveats: Vec<String>,
}

impl TimingScope {
    /// The scope of a search of `design` on `model`, before any run.
    pub fn of(model: &Model, design: &dyn Design) -> Self {
        // A configured design's thresholds are those of the configuration it runs.
        let model = model.for_design(design.name());
        let mut named = menu::named_thresholds(model);
        for (ms, what) in design.time_thresholds(&model.executor) {
            if ms > 0 {
                named.push(menu::Threshold { ms, knob: what });
            }
        }
        TimingScope {
            named,
            learned: Vec::new(),
            caveats: design.certificate_caveats(),
        }
    }

    /// Every threshold's value, sorted, deduplicated.
    pub fn values(&self) -> Vec<Millis> {
        let mut v: Vec<Millis> = self.named.iter().map(|t| t.ms).collect();
        v.extend(&self.learned);
        v.sort_unstable();
        v.dedup();
        v
    }

    /// One line: `timings at each range's ends and 1 ms either side of 5000
    /// (executor.timeout_ms), 60000 (agent.tool_timeout_ms); of the design's timers and
    /// declared ages: 2000`.
    pub fn describe(&self) -> String {
        let mut by_ms: Vec<(Millis, Vec<&str>)> = Vec::new();
        let mut named = self.named.clone();
        named.sort();
        for t in &named {
            match by_ms.last_mut() {
                Some((ms, knobs)) if *ms == t.ms => {
                    if !knobs.contains(&t.knob) {
                        knobs.push(t.knob)
                    }
                }
                _ => by_ms.push((t.ms, vec![t.knob])),
            }
        }
        let mut out = String::from("timing values: each range's two ends");
        if !by_ms.is_empty() {
            let list: Vec<String> = by_ms
                .iter()
                .map(|(ms, knobs)| format!("{ms} ({})", knobs.join(", ")))
                .collect();
            out.push_str(" and 1 ms either side of ");
            out.push_str(&list.join(", "));
        }
        if !self.learned.is_empty() {
            let list: Vec<String> = self.learned.iter().map(u64::to_string).collect();
            out.push_str("; and of the design's timer delays and declared ages: ");
            out.push_str(&list.join(", "));
        }
        for c in &self.caveats {
            out.push_str("; ");
            out.push_str(c);
        }
        out
    }
}
