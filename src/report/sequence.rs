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

/// The number after `word ` in `text` (`attempt 12` → 12).
fn number_after(text: &str, word: &str) -> Option<u32> {
    let i = text.find(&format!("{word} "))?;
    let rest = &text[i + word.len() + 1..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The worker a line of the executor is about (`worker 1: ...`, `worker 1 crashes ...`).
fn worker_of(text: &str) -> Option<u32> {
    text.strip_prefix("worker ")?;
    number_after(text, "worker")
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
                .filter(|l| l.component == Component::Agent)
                .find_map(|l| {
                    l.text
                        .strip_prefix(&prefix)
                        .and_then(|rest| rest.strip_prefix("tells the user "))
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

/// The lane of the worker that last sent `attempt` (`sender`: attempt and lane, in order);
/// the first worker's when no send of it is in the timeline.
fn sent_by(sender: &[(u32, usize)], attempt: u32) -> usize {
    sender
        .iter()
        .rev()
        .find(|(s, _)| *s == attempt)
        .map_or(1, |(_, w)| *w)
}

/// A message on its way: where it left from and to whom it goes.
#[derive(Clone, Copy)]
struct Leg {
    from: (usize, usize),
    attempt: u32,
    worker: usize,
}

impl Diagram {
    /// The diagram of a traced run; `violated`: the properties it violates, as named.
    pub fn of(title: &str, t: &Traced, violated: &[String]) -> Diagram {
        let lines: Vec<&TraceLine> = t.lines.iter().map(|(l, _)| l).collect();
        let workers = lines
            .iter()
            .filter(|l| l.component == Component::Executor)
            .filter_map(|l| worker_of(&l.text))
            .max()
            .map_or(1, |w| w as usize + 1);
        let mut lanes = vec!["agent".to_string()];
        lanes.extend((0..workers).map(|w| format!("worker {w}")));
        lanes.extend(["network", "provider", "ledger"].map(str::to_string));
        let (network, provider, ledger) = (workers + 1, workers + 2, workers + 3);
        let worker_lane = |w: u32| 1 + w as usize;
        let duplicates: BTreeSet<String> = t
            .intents
            .iter()
            .flat_map(|v| v.duplicates.iter().map(|(dup, _)| dup.to_string()))
            .collect();

        let mut rows: Vec<Row> = Vec::new();
        let mut arrows = Vec::new();
        let mut requests: Vec<Leg> = Vec::new();
        let mut replies: Vec<Leg> = Vec::new();
        let mut sender: Vec<(u32, usize)> = Vec::new();
        // Calls the agent made, not yet taken up by a worker: (row, time), oldest first.
        let mut pending_calls: Vec<(usize, u64)> = Vec::new();
        // The attempt and time of the provider's last arrival line: one arrival can log
        // several lines (a key pruned, then processed), and only the first is the arrival.
        let mut last_arrival: Option<(u32, u64)> = None;
        let take = |legs: &mut Vec<Leg>, attempt: u32| {
            let i = legs.iter().position(|l| l.attempt == attempt)?;
            Some(legs.remove(i))
        };

        let mut i = 0;
        while i < lines.len() {
            let l = lines[i];
            let run = lines[i..]
                .iter()
                .take_while(|m| m.component == l.component && m.text == l.text)
                .count();
            let folded = if run >= FOLD_AT { run } else { 1 };
            let r = rows.len();
            let text = &l.text;
            let attempt = number_after(text, "attempt");
            let mut mark = Mark::Dot;
            let lane = match l.component {
                Component::Workload => 0,
                Component::Agent => {
                    if text.starts_with("call ") {
                        pending_calls.push((r, l.at_ms));
                    } else if text.contains(": tells the user ") {
                        mark = Mark::Told;
                    }
                    0
                }
                Component::Executor => {
                    // A line of the queue names the worker it delivers to, if any; a line
                    // about no worker sits on the agent's lane.
                    let w = worker_of(text).or_else(|| {
                        text.find("to worker ")
                            .and_then(|i| number_after(&text[i..], "worker"))
                    });
                    let lane = w.map_or(0, worker_lane);
                    // A call is taken up by the first worker line at the time it was made.
                    pending_calls.retain(|&(_, at)| at == l.at_ms);
                    if lane != 0 && !pending_calls.is_empty() {
                        let (from, _) = pending_calls.remove(0);
                        arrows.push(Arrow {
                            from: (from, 0),
                            to: (r, lane),
                            carries: Carries::Call,
                            end: End::Head,
                        });
                    }
                    if let (true, Some(a)) = (text.contains(" sends attempt "), attempt) {
                        requests.push(Leg {
                            from: (r, lane),
                            attempt: a,
                            worker: lane,
                        });
                        sender.push((a, lane));
                    } else if let (true, Some(a)) = (text.contains(": reply to attempt "), attempt)
                    {
                        if let Some(leg) = take(&mut replies, a) {
                            arrows.push(Arrow {
                                from: leg.from,
                                to: (r, lane),
                                carries: Carries::Reply,
                                end: End::Head,
                            });
                        }
                    } else if text.ends_with(" timed out") || text.contains(": connection of ") {
                        mark = Mark::Open;
                    } else if text.contains(" crashes ") {
                        mark = Mark::Crash;
                    } else if text.contains(": reports ") {
                        arrows.push(Arrow {
                            from: (r, lane),
                            to: (r, 0),
                            carries: Carries::Call,
                            end: End::Head,
                        });
                    }
                    lane
                }
                Component::Network => {
                    if let Some(a) = attempt {
                        let to_worker = sent_by(&sender, a);
                        if text.starts_with("request of ") && text.contains(" lost") {
                            if let Some(leg) = take(&mut requests, a) {
                                arrows.push(Arrow {
                                    from: leg.from,
                                    to: (r, network),
                                    carries: Carries::Request,
                                    end: End::Lost,
                                });
                            }
                            mark = Mark::Crash;
                        } else if text.starts_with("request of ") && text.ends_with(" duplicated") {
                            requests.push(Leg {
                                from: (r, network),
                                attempt: a,
                                worker: to_worker,
                            });
                        } else if text.starts_with("reply to ") {
                            let discarded = text.ends_with(": discarded");
                            if let Some(leg) = take(&mut replies, a) {
                                arrows.push(Arrow {
                                    from: leg.from,
                                    to: if discarded {
                                        (r, leg.worker)
                                    } else {
                                        (r, network)
                                    },
                                    carries: Carries::Reply,
                                    end: if discarded { End::Discarded } else { End::Lost },
                                });
                            }
                            if !discarded {
                                mark = Mark::Crash;
                            }
                        }
                    }
                    network
                }
                Component::Provider => {
                    if let Some(a) = attempt.filter(|_| text.starts_with("attempt ")) {
                        let rest = text.split_once(": ").map_or("", |(_, r)| r);
                        let arrival = !rest.starts_with("done")
                            && !rest.starts_with("provider crashed")
                            && !rest.starts_with("the request it waited for is done")
                            && last_arrival != Some((a, l.at_ms));
                        if arrival {
                            last_arrival = Some((a, l.at_ms));
                            if let Some(leg) = take(&mut requests, a) {
                                arrows.push(Arrow {
                                    from: leg.from,
                                    to: (r, provider),
                                    carries: Carries::Request,
                                    end: End::Head,
                                });
                            }
                        }
                        if rest.starts_with("provider crashed") {
                            mark = Mark::Crash;
                        } else if rest.contains("-> ") && !rest.contains("kept for a status poll") {
                            let worker = sent_by(&sender, a);
                            replies.push(Leg {
                                from: (r, provider),
                                attempt: a,
                                worker,
                            });
                        }
                    }
                    provider
                }
                Component::Ledger => {
                    let resource = text
                        .strip_prefix("effect ")
                        .and_then(|t| t.split(' ').next())
                        .unwrap_or("");
                    if duplicates.contains(resource) {
                        mark = Mark::Duplicate;
                    }
                    if text.starts_with("effect ") && text.contains(" committed ") {
                        arrows.push(Arrow {
                            from: (r, provider),
                            to: (r, ledger),
                            carries: Carries::Commit,
                            end: End::Head,
                        });
                    }
                    ledger
                }
            };
            let mut text = text.clone();
            if mark == Mark::Duplicate {
                text.push_str("  ← duplicate effect");
            }
            if folded > 1 {
                text = format!(
                    "{text}  ({folded} times until {} ms)",
                    lines[i + folded - 1].at_ms
                );
            }
            rows.push(Row {
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
            rows,
            arrows,
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

    fn draw(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        text_x: i32,
        bottom: i32,
    ) -> Result<(), String> {
        let font = |size: u32, colour: &'static RGBColor| {
            TextStyle::from((FONT, size).into_font()).color(colour)
        };
        let left = font(12, &INK).pos(Pos::new(HPos::Left, VPos::Center));
        let right = font(11, &GREY).pos(Pos::new(HPos::Right, VPos::Center));
        let centre = font(12, &INK).pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new(
            self.title.clone(),
            (8, 14),
            font(14, &INK).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(err)?;
        // The legend, on one line under the title.
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
        // Lanes.
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
        // Rows: the time where it changes, the mark, the line.
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
        for a in &self.arrows {
            self.arrow(root, a)?;
        }
        for (i, row) in self.rows.iter().enumerate() {
            self.mark(root, (self.lane_x(row.lane), self.row_y(i)), row.mark)?;
        }
        // The verdicts.
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

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_workers_are_read_from_the_words() {
        assert_eq!(
            number_after("worker 0: op 1 sends attempt 12: create", "attempt"),
            Some(12)
        );
        assert_eq!(number_after("no attempt here", "attempt"), None);
        assert_eq!(
            worker_of("worker 3 crashes before_dispatch of attempt 5"),
            Some(3)
        );
        assert_eq!(worker_of("worker 1: op 0 proposed -> dispatched"), Some(1));
        assert_eq!(worker_of("call 5 waits"), None);
    }
}
