//! A run drawn as a sequence diagram: one lane per component (the agent, each worker, the
//! network, the provider, the ledger), one row per timeline line, messages as arrows across
//! lanes, faults and crashes marked, the effects that duplicate another in red, and what the
//! run told the user, judged against the ledger, at the end. Maelstrom and Jepsen readers
//! know it as a Lamport diagram.
//!
//! The diagram is read off the run's timeline ([`Traced::lines`]): each line is an event on
//! its component's lane, and the lines that name an attempt pair up into arrows in the order
//! the network carries them (a send with the provider's first line about the attempt, or
//! with the network's line that lost it; a provider's answer with the worker's `reply to`
//! line, or the network's line that lost or discarded it). The duplicates come from the
//! ledger's verdicts ([`Traced::intents`]), never from what the design believed.
//!
//! Drawn with plotters' SVG backend, as the report's charts are: integer coordinates, no
//! font file read, so the same run gives the same bytes on any machine, one element per
//! line (golden files diff readably).

use std::collections::BTreeSet;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::check::verdict::Kind;
use crate::run::Traced;
use crate::vocab::event::{
    AgentEvent, LedgerEvent, NetworkEvent, ProviderEvent, TraceEvent, WorkerEvent,
};
use crate::vocab::ids::{AttemptId, ResourceId};
use crate::vocab::trace::{Component, FOLD_AT, TraceLine};

use super::charts::{BLUE, GREEN, INK, PURPLE, VERMILLION};

/// Greys of the lanes and of what is neither good nor bad (the colours above are the
/// charts' Okabe and Ito palette).
const GREY: RGBColor = RGBColor(0x66, 0x66, 0x66);
const LIGHT: RGBColor = RGBColor(0xd0, 0xd0, 0xd0);

const FONT: &str = "sans-serif";
const ROW: i32 = 20;
const LANE: i32 = 84;
const GUTTER: i32 = 74;
const TOP: i32 = 58;
/// The width plotters' text estimate gives a character of the 12 px labels, rounded up.
const CHAR_PX: i32 = 7;

/// What ends an arrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Delivered: an arrowhead.
    Head,
    /// Lost or reset on the way: a cross where it died.
    Lost,
    /// Arrived after its receiver stopped waiting: an open circle.
    Discarded,
}

/// What an arrow carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carries {
    /// The agent's call to a worker, or a worker's report to the agent.
    Call,
    Request,
    Reply,
    /// The provider's commit into the ledger.
    Commit,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrow {
    pub from: (usize, usize),
    pub to: (usize, usize),
    pub carries: Carries,
    pub end: End,
}

/// How an event is marked on its lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Dot,
    /// A timeout or a reset seen by a worker.
    Open,
    /// A crash.
    Crash,
    /// An effect that duplicates another (the ledger's verdict).
    Duplicate,
    /// What the agent tells the user.
    Told,
}

/// One row: a timeline line (or several identical ones, folded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub at_ms: u64,
    pub lane: usize,
    pub mark: Mark,
    pub text: String,
}

/// How a verdict line is shown: a violation, an outcome told truly, or one left to a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Bad,
    Good,
    /// Unresolved and said so: nothing false, nothing done either.
    Open,
}

/// A run as lanes, rows and arrows, ready to draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagram {
    pub title: String,
    pub lanes: Vec<String>,
    pub rows: Vec<Row>,
    pub arrows: Vec<Arrow>,
    /// What the run came to, one line each, and whether it is a violation.
    pub verdicts: Vec<(String, Tone)>,
}

/// Per intent, what the agent told the user and what the ledger says of it, and whether
/// that is a violation to show in red; then the properties the run violates.
fn verdict_lines(t: &Traced, lines: &[&TraceLine], violated: &[String]) -> Vec<(String, Tone)> {
    let mut out: Vec<(String, Tone)> = t
        .intents
        .iter()
        .map(|v| {
            let prefix = format!("{}: ", v.intent);
            let told = lines
                .iter()
                .rev()
                .find_map(|l| match l.event {
                    TraceEvent::Agent(AgentEvent::Tells { intent, told }) if intent == v.intent => {
                        Some(told.name())
                    }
                    _ => None,
                })
                .unwrap_or("nothing");
            let verdict = v.to_string();
            let ledger = verdict.strip_prefix(&prefix).unwrap_or(&verdict);
            // Red for anything the ledger contradicts or doubles; grey for an intent left
            // to a person (unresolved, and told so); green otherwise.
            let bad = !v.duplicates.is_empty()
                || !v.wrong_receipts.is_empty()
                || !v.drifted.is_empty()
                || !v.wrong_compensations.is_empty()
                || !v.removed_by_other.is_empty()
                || v.merged_into.is_some()
                || matches!(v.kind, Kind::FalseSuccess | Kind::FalseFailure);
            let tone = if bad {
                Tone::Bad
            } else if v.kind == Kind::Unresolved {
                Tone::Open
            } else {
                Tone::Good
            };
            (
                format!(
                    "{}: the user was told {told}; the ledger says: {ledger}",
                    v.intent
                ),
                tone,
            )
        })
        .collect();
    out.push((
        format!(
            "violates: {}",
            if violated.is_empty() {
                "none".to_string()
            } else {
                violated.join(", ")
            }
        ),
        if violated.is_empty() {
            Tone::Good
        } else {
            Tone::Bad
        },
    ));
    out
}

/// A message on its way: where it left from and to whom it goes.
#[derive(Clone, Copy)]
struct Leg {
    from: (usize, usize),
    attempt: AttemptId,
    worker: usize,
}

/// The diagram as it is read off the timeline, one line at a time: the lanes' indices, the
/// rows and arrows so far, and the messages still on their way.
struct Reader {
    workers: usize,
    duplicates: BTreeSet<ResourceId>,
    rows: Vec<Row>,
    arrows: Vec<Arrow>,
    requests: Vec<Leg>,
    replies: Vec<Leg>,
    /// Each send's attempt and the lane of its worker, in order.
    sender: Vec<(AttemptId, usize)>,
    /// Calls the agent made, not yet taken up by a worker: (row, time), oldest first.
    pending_calls: Vec<(usize, u64)>,
    /// The attempt and time of the provider's last arrival line: one arrival can log
    /// several lines (a key pruned, then processed), and only the first is the arrival.
    last_arrival: Option<(AttemptId, u64)>,
}

impl Reader {
    fn network(&self) -> usize {
        self.workers + 1
    }

    fn provider(&self) -> usize {
        self.workers + 2
    }

    fn ledger(&self) -> usize {
        self.workers + 3
    }

    fn arrow(&mut self, from: (usize, usize), to: (usize, usize), carries: Carries, end: End) {
        self.arrows.push(Arrow {
            from,
            to,
            carries,
            end,
        });
    }

    /// The lane of the worker that last sent `attempt`; the first worker's when no send of
    /// it is in the timeline.
    fn sent_by(&self, attempt: AttemptId) -> usize {
        self.sender
            .iter()
            .rev()
            .find(|(s, _)| *s == attempt)
            .map_or(1, |(_, w)| *w)
    }

    /// The first message of `attempt` still on its way in `legs`, taken off.
    fn take(legs: &mut Vec<Leg>, attempt: AttemptId) -> Option<Leg> {
        let i = legs.iter().position(|l| l.attempt == attempt)?;
        Some(legs.remove(i))
    }

    /// Reads line `l`, drawn as row `r`: its lane and mark, and the arrows it ends or starts.
    fn read(&mut self, l: &TraceLine, r: usize) -> (usize, Mark) {
        match &l.event {
            TraceEvent::Workload(_) => (0, Mark::Dot),
            TraceEvent::Agent(e) => self.agent(e, l.at_ms, r),
            TraceEvent::Worker(_) | TraceEvent::Op(_) => self.executor(l, r),
            TraceEvent::Network(e) => self.network_line(e, r),
            TraceEvent::Provider(e) => self.provider_line(e, l.at_ms, r),
            TraceEvent::Ledger(e) => self.ledger_line(e, r),
        }
    }

    fn agent(&mut self, event: &AgentEvent, at_ms: u64, r: usize) -> (usize, Mark) {
        match event {
            AgentEvent::Calls { .. } => self.pending_calls.push((r, at_ms)),
            AgentEvent::Tells { .. } => return (0, Mark::Told),
            _ => {}
        }
        (0, Mark::Dot)
    }

    /// A worker's line (or the queue's, on the lane of the worker it delivers to; about no
    /// worker, on the agent's lane).
    fn executor(&mut self, l: &TraceLine, r: usize) -> (usize, Mark) {
        let lane = l.event.worker().map_or(0, |w| 1 + w.0 as usize);
        // A call is taken up by the first worker line at the time it was made.
        self.pending_calls.retain(|&(_, at)| at == l.at_ms);
        if lane != 0 && !self.pending_calls.is_empty() {
            let (from, _) = self.pending_calls.remove(0);
            self.arrow((from, 0), (r, lane), Carries::Call, End::Head);
        }
        let mut mark = Mark::Dot;
        let TraceEvent::Worker(event) = &l.event else {
            return (lane, mark);
        };
        match *event {
            WorkerEvent::Sends { attempt, .. } => {
                self.requests.push(Leg {
                    from: (r, lane),
                    attempt,
                    worker: lane,
                });
                self.sender.push((attempt, lane));
            }
            WorkerEvent::Replied { attempt, .. } => {
                if let Some(leg) = Self::take(&mut self.replies, attempt) {
                    self.arrow(leg.from, (r, lane), Carries::Reply, End::Head);
                }
            }
            WorkerEvent::TimedOut { .. } | WorkerEvent::ConnectionReset { .. } => mark = Mark::Open,
            WorkerEvent::Crashes { .. }
            | WorkerEvent::CrashesAtCommit { .. }
            | WorkerEvent::MachineLost { .. } => mark = Mark::Crash,
            WorkerEvent::Reports { .. } => self.arrow((r, lane), (r, 0), Carries::Call, End::Head),
            WorkerEvent::WaitsForRestart { .. }
            | WorkerEvent::Unanswered { .. }
            | WorkerEvent::Restarts { .. } => {}
        }
        (lane, mark)
    }

    /// A message the network lost, duplicated or discarded.
    fn network_line(&mut self, event: &NetworkEvent, r: usize) -> (usize, Mark) {
        let network = self.network();
        let mut mark = Mark::Dot;
        match *event {
            NetworkEvent::RequestLost { attempt, .. } => {
                if let Some(leg) = Self::take(&mut self.requests, attempt) {
                    self.arrow(leg.from, (r, network), Carries::Request, End::Lost);
                }
                mark = Mark::Crash;
            }
            NetworkEvent::RequestDuplicated { attempt } => {
                let worker = self.sent_by(attempt);
                self.requests.push(Leg {
                    from: (r, network),
                    attempt,
                    worker,
                });
            }
            NetworkEvent::ReplyLost { attempt, .. }
            | NetworkEvent::ReplyReset { attempt }
            | NetworkEvent::ReplyDiscarded { attempt } => {
                let discarded = matches!(event, NetworkEvent::ReplyDiscarded { .. });
                if let Some(leg) = Self::take(&mut self.replies, attempt) {
                    let (to, end) = match discarded {
                        true => ((r, leg.worker), End::Discarded),
                        false => ((r, network), End::Lost),
                    };
                    self.arrow(leg.from, to, Carries::Reply, end);
                }
                if !discarded {
                    mark = Mark::Crash;
                }
            }
        }
        (network, mark)
    }

    /// The provider's line about an attempt: the request's arrival (its first line at a
    /// time), a crash, or an answer sent now (a reply on its way to the sender).
    fn provider_line(&mut self, event: &ProviderEvent, at_ms: u64, r: usize) -> (usize, Mark) {
        use ProviderEvent::*;
        let provider = self.provider();
        let (attempt, on_arrival, answers) = match *event {
            Looks { attempt, .. } | Answers { attempt, .. } => (attempt, true, true),
            Considers { attempt, .. } => (attempt, true, false),
            Done { attempt, kept, .. } => (attempt, false, !kept),
            WaiterDone { attempt, .. } => (attempt, false, true),
            ProviderCrashed { .. } => return (provider, Mark::Crash),
            Pruned { .. } => return (provider, Mark::Dot),
        };
        if on_arrival && self.last_arrival != Some((attempt, at_ms)) {
            self.last_arrival = Some((attempt, at_ms));
            if let Some(leg) = Self::take(&mut self.requests, attempt) {
                self.arrow(leg.from, (r, provider), Carries::Request, End::Head);
            }
        }
        if answers {
            let worker = self.sent_by(attempt);
            self.replies.push(Leg {
                from: (r, provider),
                attempt,
                worker,
            });
        }
        (provider, Mark::Dot)
    }

    /// An effect committed, marked when the ledger's verdict makes it a duplicate.
    fn ledger_line(&mut self, event: &LedgerEvent, r: usize) -> (usize, Mark) {
        let (provider, ledger) = (self.provider(), self.ledger());
        let LedgerEvent::Commits { resource, .. } = *event;
        self.arrow((r, provider), (r, ledger), Carries::Commit, End::Head);
        let duplicate = self.duplicates.contains(&resource);
        (
            ledger,
            if duplicate {
                Mark::Duplicate
            } else {
                Mark::Dot
            },
        )
    }
}

impl Diagram {
    /// The diagram of a traced run; `violated`: the properties it violates, as named.
    pub fn of(title: &str, t: &Traced, violated: &[String]) -> Diagram {
        let lines: Vec<&TraceLine> = t.lines.iter().map(|(l, _)| l).collect();
        let workers = lines
            .iter()
            .filter(|l| l.component == Component::Executor)
            .filter_map(|l| l.event.worker())
            .map(|w| w.0)
            .max()
            .map_or(1, |w| w as usize + 1);
        let mut lanes = vec!["agent".to_string()];
        lanes.extend((0..workers).map(|w| format!("worker {w}")));
        lanes.extend(["network", "provider", "ledger"].map(str::to_string));
        let mut reader = Reader {
            workers,
            duplicates: t
                .intents
                .iter()
                .flat_map(|v| v.duplicates.iter().map(|(dup, _)| *dup))
                .collect(),
            rows: Vec::new(),
            arrows: Vec::new(),
            requests: Vec::new(),
            replies: Vec::new(),
            sender: Vec::new(),
            pending_calls: Vec::new(),
            last_arrival: None,
        };
        let mut i = 0;
        while i < lines.len() {
            let l = lines[i];
            let run = lines[i..]
                .iter()
                .take_while(|m| m.component == l.component && m.text == l.text)
                .count();
            let folded = if run >= FOLD_AT { run } else { 1 };
            let (lane, mark) = reader.read(l, reader.rows.len());
            let mut text = l.text.clone();
            if mark == Mark::Duplicate {
                text.push_str("  ← duplicate effect");
            }
            if folded > 1 {
                let last = lines[i + folded - 1].at_ms;
                text = format!("{text}  ({folded} times until {last} ms)");
            }
            reader.rows.push(Row {
                at_ms: l.at_ms,
                lane,
                mark,
                text,
            });
            i += folded;
        }
        // What was still on its way when the run ended (or whose receiver crashed first)
        // is not drawn: no arrow without both ends in the timeline.
        Diagram {
            title: title.to_string(),
            lanes,
            rows: reader.rows,
            arrows: reader.arrows,
            verdicts: verdict_lines(t, &lines, violated),
        }
    }

    fn lane_x(&self, lane: usize) -> i32 {
        GUTTER + LANE / 2 + LANE * lane as i32
    }

    fn row_y(&self, row: usize) -> i32 {
        TOP + ROW / 2 + ROW * row as i32
    }

    /// The diagram as one `<svg>` element with a `viewBox`.
    pub fn svg(&self) -> Result<String, String> {
        let text_x = GUTTER + LANE * self.lanes.len() as i32 + 12;
        let longest = self
            .rows
            .iter()
            .map(|r| r.text.chars().count())
            .chain(self.verdicts.iter().map(|(v, _)| v.chars().count() + 4))
            .chain([self.title.chars().count()])
            .max()
            .unwrap_or(0) as i32;
        let width = (text_x + longest * CHAR_PX + 16).max(text_x + 200);
        let bottom = TOP + ROW * self.rows.len() as i32;
        let height = bottom + 18 + ROW * self.verdicts.len() as i32 + 12;
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (width as u32, height as u32))
                .into_drawing_area();
            root.fill(&WHITE).map_err(err)?;
            self.draw(&root, text_x, bottom)?;
            root.present().map_err(err)?;
        }
        Ok(out)
    }

    /// Everything, in the order the SVG lists it: the title and legend, the lanes, the
    /// rows' times and lines, the arrows, the marks, the verdicts.
    fn draw(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        text_x: i32,
        bottom: i32,
    ) -> Result<(), String> {
        self.draw_header(root)?;
        self.draw_lanes(root, bottom)?;
        self.draw_rows(root, text_x)?;
        for a in &self.arrows {
            self.arrow(root, a)?;
        }
        for (i, row) in self.rows.iter().enumerate() {
            self.mark(root, (self.lane_x(row.lane), self.row_y(i)), row.mark)?;
        }
        self.draw_verdicts(root, bottom)
    }

    /// The title, and the legend on one line under it.
    fn draw_header(&self, root: &DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String> {
        let left = font(12, &INK).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(
            self.title.clone(),
            (8, 14),
            font(14, &INK).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(err)?;
        let mut x = 8;
        for (label, colour, width) in [
            ("request", BLUE, 2),
            ("reply", GREEN, 2),
            ("call, report", GREY, 1),
            ("commit", PURPLE, 1),
            ("× lost, crashed", VERMILLION, 0),
            ("○ timed out", INK, 0),
            ("● duplicate effect", VERMILLION, 0),
        ] {
            if width > 0 {
                root.draw(&PathElement::new(
                    vec![(x, 32), (x + 22, 32)],
                    colour.stroke_width(width),
                ))
                .map_err(err)?;
                x += 28;
            }
            root.draw(&Text::new(label.to_string(), (x, 32), left.color(&colour)))
                .map_err(err)?;
            x += CHAR_PX * label.chars().count() as i32 + 18;
        }
        Ok(())
    }

    /// Each lane's name and its line down to `bottom`.
    fn draw_lanes(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        bottom: i32,
    ) -> Result<(), String> {
        let centre = font(12, &INK).pos(Pos::new(HPos::Center, VPos::Center));
        for (i, name) in self.lanes.iter().enumerate() {
            let x = self.lane_x(i);
            root.draw(&Text::new(name.clone(), (x, TOP - 8), centre.clone()))
                .map_err(err)?;
            root.draw(&PathElement::new(
                vec![(x, TOP), (x, bottom)],
                LIGHT.stroke_width(1),
            ))
            .map_err(err)?;
        }
        Ok(())
    }

    /// Each row: its time where it changes, and its line at `text_x`.
    fn draw_rows(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        text_x: i32,
    ) -> Result<(), String> {
        let right = font(11, &GREY).pos(Pos::new(HPos::Right, VPos::Center));
        let mut last_ms = None;
        for (i, row) in self.rows.iter().enumerate() {
            let y = self.row_y(i);
            if last_ms != Some(row.at_ms) {
                root.draw(&Text::new(
                    format!("{} ms", row.at_ms),
                    (GUTTER - 6, y),
                    right.clone(),
                ))
                .map_err(err)?;
                last_ms = Some(row.at_ms);
            }
            let (colour, weight) = match row.mark {
                Mark::Duplicate | Mark::Crash => (VERMILLION, FontStyle::Bold),
                Mark::Told => (INK, FontStyle::Bold),
                _ => (INK, FontStyle::Normal),
            };
            let style = TextStyle::from((FONT, 12).into_font().style(weight))
                .color(&colour)
                .pos(Pos::new(HPos::Left, VPos::Center));
            root.draw(&Text::new(row.text.clone(), (text_x, y), style))
                .map_err(err)?;
        }
        Ok(())
    }

    /// What the run came to, one line each under the rows, with its tone's colour.
    fn draw_verdicts(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        bottom: i32,
    ) -> Result<(), String> {
        for (i, (line, tone)) in self.verdicts.iter().enumerate() {
            let y = bottom + 18 + ROW * i as i32;
            let colour = match tone {
                Tone::Bad => VERMILLION,
                Tone::Good => GREEN,
                Tone::Open => GREY,
            };
            root.draw(&Rectangle::new([(8, y - 7), (20, y + 5)], colour.filled()))
                .map_err(err)?;
            let style = TextStyle::from((FONT, 12).into_font().style(FontStyle::Bold))
                .color(&colour)
                .pos(Pos::new(HPos::Left, VPos::Center));
            root.draw(&Text::new(line.clone(), (28, y), style))
                .map_err(err)?;
        }
        Ok(())
    }

    fn mark(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        at: (i32, i32),
        mark: Mark,
    ) -> Result<(), String> {
        match mark {
            Mark::Dot => root.draw(&Circle::new(at, 3, INK.filled())),
            Mark::Told => root.draw(&Rectangle::new(
                [(at.0 - 5, at.1 - 5), (at.0 + 5, at.1 + 5)],
                INK.filled(),
            )),
            Mark::Open => root.draw(&Circle::new(at, 5, INK.stroke_width(2))),
            Mark::Crash => root.draw(&Cross::new(at, 6, VERMILLION.stroke_width(3))),
            Mark::Duplicate => root.draw(&Circle::new(at, 7, VERMILLION.filled())),
        }
        .map_err(err)
    }

    fn arrow(&self, root: &DrawingArea<SVGBackend<'_>, Shift>, a: &Arrow) -> Result<(), String> {
        let from = (self.lane_x(a.from.1), self.row_y(a.from.0));
        let to = (self.lane_x(a.to.1), self.row_y(a.to.0));
        let colour = match a.carries {
            Carries::Request => BLUE,
            Carries::Reply => GREEN,
            Carries::Call => GREY,
            Carries::Commit => PURPLE,
        };
        // Calls and commits are thin; a message still on its way ends without a head.
        let width = match a.carries {
            Carries::Request | Carries::Reply => 2,
            Carries::Call | Carries::Commit => 1,
        };
        root.draw(&PathElement::new(
            vec![from, to],
            colour.stroke_width(width),
        ))
        .map_err(err)?;
        match a.end {
            End::Head => {
                // A head 9 px long along the arrow, 4 px either side, in integers.
                let (dx, dy) = ((to.0 - from.0) as f64, (to.1 - from.1) as f64);
                let len = (dx * dx + dy * dy).sqrt().max(1.0);
                let (ux, uy) = (dx / len, dy / len);
                let base = (to.0 as f64 - 9.0 * ux, to.1 as f64 - 9.0 * uy);
                let p = |x: f64, y: f64| (x.round() as i32, y.round() as i32);
                root.draw(&Polygon::new(
                    vec![
                        to,
                        p(base.0 - 4.0 * uy, base.1 + 4.0 * ux),
                        p(base.0 + 4.0 * uy, base.1 - 4.0 * ux),
                    ],
                    colour.filled(),
                ))
                .map_err(err)?;
            }
            End::Lost => {
                root.draw(&Cross::new(to, 6, VERMILLION.stroke_width(3)))
                    .map_err(err)?;
            }
            End::Discarded => {
                root.draw(&Circle::new(to, 5, colour.stroke_width(2)))
                    .map_err(err)?;
            }
        }
        Ok(())
    }
}

/// The diagram's font at `size` px in `colour`.
fn font(size: u32, colour: &'static RGBColor) -> TextStyle<'static> {
    TextStyle::from((FONT, size).into_font()).color(colour)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}
