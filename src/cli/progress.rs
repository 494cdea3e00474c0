//! A progress bar on stderr for long sweeps: only when stderr is a terminal, and only once a
//! sweep has taken about a second, so that pipes and CI logs never see it.
//!
//! The bar reads the wall clock to decide when to appear; nothing it does reaches the
//! simulation or the output, which stay a pure function of model and seeds.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a sweep runs silently before the bar appears.
const QUIET_FOR: Duration = Duration::from_secs(1);

pub struct Progress {
    bar: ProgressBar,
    terminal: bool,
    started: Instant,
    shown: Mutex<bool>,
}

impl Progress {
    /// A bar for `total` of `unit` (seeds, runs), hidden until the work has run for about a
    /// second.
    pub fn counting(total: u64, unit: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{msg:<24}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}, {{per_sec}}, eta {{eta}}"
            ))
            .expect("a valid template")
            .progress_chars("=> "),
        );
        Self {
            bar,
            terminal: std::io::stderr().is_terminal(),
            started: Instant::now(),
            shown: Mutex::new(false),
        }
    }

    /// The same bar, never shown (the output is kept rather than printed).
    pub fn never_shown(mut self) -> Self {
        self.terminal = false;
        self
    }

    /// Names what is running now (a design).
    pub fn set_message(&self, text: &str) {
        self.bar.set_message(text.to_string());
    }

    /// `n` more seeds are done.
    pub fn advance(&self, n: u64) {
        self.bar.inc(n);
        if self.terminal && self.started.elapsed() >= QUIET_FOR {
            let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
            if !*shown {
                *shown = true;
                self.bar.set_draw_target(ProgressDrawTarget::stderr());
            }
        }
    }

    /// Removes the bar (if it was shown).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl crate::explore::Progress for Progress {
    fn message(&self, what: &str) {
        self.set_message(what);
    }

    fn advance(&self, n: u64) {
        Progress::advance(self, n);
    }
}
