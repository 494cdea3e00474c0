//! The event timeline of one run, for `retrylab trace` and `replay`.
//!
//! Tracing is an observer: components describe what they did, and when tracing is off the
//! description is never even formatted, so sweeps pay nothing for it.

use std::fmt::Write;

use crate::sim::Millis;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    Workload,
    Agent,
    Executor,
    Network,
    Provider,
    Ledger,
}

impl Component {
    /// Every component, in the order of the timeline's columns' usual story.
    pub const ALL: [Component; 6] = [
        Component::Workload,
        Component::Agent,
        Component::Executor,
        Component::Network,
        Component::Provider,
        Component::Ledger,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Component::Workload => "workload",
            Component::Agent => "agent",
            Component::Executor => "executor",
            Component::Network => "network",
            Component::Provider => "provider",
            Component::Ledger => "ledger",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceLine {
    pub at_ms: Millis,
    pub component: Component,
    pub text: String,
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

    /// Records a line; `text` runs only when tracing is on.
    #[inline]
    pub fn log(&mut self, at_ms: Millis, component: Component, text: impl FnOnce() -> String) {
        if self.enabled {
            self.lines.push(TraceLine {
                at_ms,
                component,
                text: text(),
            });
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

/// `lines` as timeline text: one line per event, virtual time first.
pub fn render_lines<'a>(lines: impl IntoIterator<Item = &'a TraceLine>) -> String {
    let mut out = String::new();
    for l in lines {
        let _ = writeln!(
            out,
            "{:>12} ms  {:<9} {}",
            l.at_ms,
            l.component.name(),
            l.text
        );
    }
    out
}
