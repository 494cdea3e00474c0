//! The event timeline of one run, for `retrylab trace` and `replay`.
//!
//! Tracing is an observer: components describe what they did, and when tracing is off the
//! description is never even formatted, so sweeps pay nothing for it.

use std::fmt::Write;

use crate::sim::Millis;
#[cfg(test)]
use crate::vocab::event::OpEvent;
use crate::vocab::event::TraceEvent;

crate::sim::named_enum! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Component {
        Workload => "workload",
        Agent => "agent",
        Executor => "executor",
        Network => "network",
        Provider => "provider",
        Ledger => "ledger",
    }
}

/// One line of the timeline: the typed event a component logged, and its text as rendered
/// from it when it was logged (folding and printing compare and show the text; every reader
/// of what a line is about reads the event).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceLine {
    pub at_ms: Millis,
    pub component: Component,
    pub event: TraceEvent,
    pub text: String,
}

impl TraceLine {
    /// The line of `event`, its text rendered from it.
    pub fn new(at_ms: Millis, component: Component, event: TraceEvent) -> Self {
        debug_assert_eq!(
            component,
            event.component(),
            "{event:?} logged as {component:?}"
        );
        let text = event.to_string();
        Self {
            at_ms,
            component,
            event,
            text,
        }
    }
}

#[derive(Debug, Default)]
pub struct Trace {
    enabled: bool,
    lines: Vec<TraceLine>,
}

impl Trace {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            lines: Vec::new(),
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub(crate) fn clear(&mut self) {
        self.lines.clear();
    }

    /// Records the event `event` makes; it runs (and the text is rendered) only when
    /// tracing is on.
    #[inline]
    pub fn log<E: Into<TraceEvent>>(
        &mut self,
        at_ms: Millis,
        component: Component,
        event: impl FnOnce() -> E,
    ) {
        if self.enabled {
            self.lines
                .push(TraceLine::new(at_ms, component, event().into()));
        }
    }

    pub fn lines(&self) -> &[TraceLine] {
        &self.lines
    }

    /// The timeline as text: one line per event, virtual time first.
    pub fn render(&self) -> String {
        render_lines(&self.lines)
    }
}

/// Runs of at least this many consecutive lines that differ only in their time are printed
/// as one line. Two stay two lines: a fold must save more than it costs to read.
pub const FOLD_AT: usize = 3;

/// `lines` as timeline text: one line per event, virtual time first. Consecutive lines of
/// one component with the same text (a sweeper or a recovery repeating itself until the
/// horizon) are folded into the first, with their number and the time of the last:
/// `       12000 ms  executor  worker 1: recovers op 0  (59 times until 600000 ms)`; only
/// runs of [`FOLD_AT`] or more, and only lines next to each other in what is printed (a
/// line of another component between two breaks the run).
pub fn render_lines<'a>(lines: impl IntoIterator<Item = &'a TraceLine>) -> String {
    let lines: Vec<&TraceLine> = lines.into_iter().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let first = lines[i];
        let run = lines[i..]
            .iter()
            .take_while(|l| l.component == first.component && l.text == first.text)
            .count();
        let line =
            |l: &TraceLine| format!("{:>12} ms  {:<9} {}", l.at_ms, l.component.name(), l.text);
        if run >= FOLD_AT {
            let last = lines[i + run - 1];
            let _ = writeln!(
                out,
                "{}  ({run} times until {} ms)",
                line(first),
                last.at_ms
            );
        } else {
            for l in &lines[i..i + run] {
                let _ = writeln!(out, "{}", line(l));
            }
        }
        i += run;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line with exactly `text` (folding compares texts; the event is a stand-in).
    fn at(at_ms: Millis, component: Component, text: &str) -> TraceLine {
        TraceLine {
            at_ms,
            component,
            event: OpEvent::Note {
                worker: crate::vocab::ids::WorkerId(0),
                op: None,
                call: None,
                text: text.to_string(),
            }
            .into(),
            text: text.to_string(),
        }
    }

    #[test]
    fn three_identical_lines_or_more_fold_into_one_and_two_do_not() {
        let recover = |t| at(t, Component::Executor, "worker 1: recovers op 0");
        let mut lines = vec![at(0, Component::Agent, "call 1")];
        lines.extend((1..=59).map(|k| recover(k * 10_000)));
        lines.push(at(600_000, Component::Ledger, "done"));
        lines.push(at(600_001, Component::Ledger, "done"));
        let want = [
            "           0 ms  agent     call 1",
            "       10000 ms  executor  worker 1: recovers op 0  (59 times until 590000 ms)",
            "      600000 ms  ledger    done",
            "      600001 ms  ledger    done",
        ];
        assert_eq!(render_lines(&lines), want.join("\n") + "\n");
    }

    #[test]
    fn another_component_or_text_between_breaks_the_run() {
        let a = |t| at(t, Component::Executor, "sweeps");
        let lines = vec![
            a(1),
            a(2),
            at(3, Component::Provider, "sweeps"),
            a(4),
            a(5),
            a(6),
            at(7, Component::Executor, "sweeps again"),
        ];
        let want = [
            "           1 ms  executor  sweeps",
            "           2 ms  executor  sweeps",
            "           3 ms  provider  sweeps",
            "           4 ms  executor  sweeps  (3 times until 6 ms)",
            "           7 ms  executor  sweeps again",
        ];
        assert_eq!(render_lines(&lines), want.join("\n") + "\n");
    }
}
