//! Runs drawn as sequence diagrams (`retrylab trace --format svg|html`, and the report's
//! counterexamples): the lanes, arrows and marks read off a run's timeline, exactly for the
//! seeds' lost-response run, as invariants over many runs of the chaos model, and as
//! committed SVG files (`tests/snapshots/diagrams/`, `RETRYLAB_BLESS=1` rewrites them).

use crate::common::cli;
use crate::common::golden;

use cli::{retrylab, root, stderr, stdout};
use retrylab::design::Registry;
use retrylab::model::Model;
use retrylab::report::sequence::{Arrow, Carries, Diagram, End, Mark, Tone};
use retrylab::run::run_traced;

fn arrow(from: (usize, usize), to: (usize, usize), carries: Carries, end: End) -> Arrow {
    Arrow {
        from,
        to,
        carries,
        end,
    }
}

#[test]
fn the_lost_response_run_is_drawn_with_its_lost_reply_and_duplicate() {
    let model = Model::load(&root().join("models/ticket_lost_response.json")).unwrap();
    let d = Registry::builtin().find("no_dedup").unwrap();
    let t = run_traced(&model, d, &mut model.chooser(0));
    let diagram = Diagram::of("lost", &t, &["no_duplicate".to_string()]);
    assert_eq!(
        diagram.lanes,
        ["agent", "worker 0", "network", "provider", "ledger"]
    );
    assert_eq!(diagram.rows.len(), t.lines.len());
    let (agent, worker, network, provider, ledger) = (0, 1, 2, 3, 4);
    use Carries::*;
    assert_eq!(
        diagram.arrows,
        [
            // The call, the send and its arrival, the commit, the reply lost on the way.
            arrow((1, agent), (2, worker), Call, End::Head),
            arrow((3, worker), (4, provider), Request, End::Head),
            arrow((6, provider), (6, ledger), Commit, End::Head),
            arrow((5, provider), (7, network), Reply, End::Lost),
            arrow((10, worker), (10, agent), Call, End::Head),
            // The replanned call sends again, without a key: a second effect.
            arrow((12, agent), (13, worker), Call, End::Head),
            arrow((14, worker), (15, provider), Request, End::Head),
            arrow((17, provider), (17, ledger), Commit, End::Head),
            arrow((16, provider), (18, worker), Reply, End::Head),
            arrow((20, worker), (20, agent), Call, End::Head),
        ]
    );
    let marks: Vec<(usize, Mark)> = diagram
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.mark != Mark::Dot)
        .map(|(i, r)| (i, r.mark))
        .collect();
    assert_eq!(
        marks,
        [
            (7, Mark::Crash),
            (8, Mark::Open),
            (17, Mark::Duplicate),
            (21, Mark::Told)
        ]
    );
    assert_eq!(
        diagram.rows[17].text,
        "effect r1 committed for intent 0  ← duplicate effect"
    );
    assert_eq!(
        diagram.verdicts,
        [
            (
                "intent 0: the user was told success; the ledger says: completed (duplicate effect r1 of r0)"
                    .to_string(),
                Tone::Bad
            ),
            ("violates: no_duplicate".to_string(), Tone::Bad),
        ]
    );
}

/// Over many runs of every design on the chaos model (two workers, lost and duplicated
/// requests held while their key is in progress, lost replies, crashes): every row that
/// receives a message ends exactly one arrow of its kind (a worker's reply, a loss or a
/// discard on the network, the provider's first line about an attempt at an instant), so
/// no message is drawn without its sender; no arrow goes back in time or past the last
/// row, and requests end at the provider or a loss on the network.
#[test]
fn every_message_of_a_chaos_run_is_one_arrow() {
    let model = Model::load(&root().join("models/ticket_chaos.json")).unwrap();
    let mut checked = 0;
    let mut received = 0;
    for d in retrylab::design::all() {
        for seed in 0..20 {
            let t = run_traced(&model, d, &mut model.chooser(seed));
            let diagram = Diagram::of("chaos", &t, &[]);
            let provider = diagram.lanes.len() - 2;
            let network = diagram.lanes.len() - 3;
            let mut last_arrival = None;
            for (row, r) in diagram.rows.iter().enumerate() {
                let t = r.text.as_str();
                let at_worker = (1..network).contains(&r.lane) && t.contains(": reply to attempt ");
                let on_network = r.lane == network && t.starts_with("reply to attempt ");
                let receives = if at_worker || on_network {
                    Some(Carries::Reply)
                } else if r.lane == network && t.starts_with("request of ") && t.contains(" lost") {
                    Some(Carries::Request)
                } else if r.lane == provider && t.starts_with("attempt ") {
                    let (head, rest) = t.split_once(": ").unwrap();
                    let arrival = !rest.starts_with("done")
                        && !rest.starts_with("provider crashed")
                        && !rest.starts_with("the request it waited for is done")
                        && last_arrival != Some((head.to_string(), r.at_ms));
                    if arrival {
                        last_arrival = Some((head.to_string(), r.at_ms));
                    }
                    arrival.then_some(Carries::Request)
                } else {
                    None
                };
                if let Some(kind) = receives {
                    let ending = diagram
                        .arrows
                        .iter()
                        .filter(|a| a.to.0 == row && a.carries == kind)
                        .count();
                    assert_eq!(
                        ending,
                        1,
                        "{} seed {seed} row {row} ({kind:?}): {t}",
                        d.name()
                    );
                    received += 1;
                }
            }
            for a in &diagram.arrows {
                assert!(a.from.0 <= a.to.0, "an arrow back in time: {a:?}");
                assert!(a.to.0 < diagram.rows.len(), "{a:?}");
                match (a.carries, a.end) {
                    (Carries::Request, End::Head) => assert_eq!(a.to.1, provider),
                    (_, End::Lost) => assert_eq!(a.to.1, network),
                    (Carries::Reply, End::Head | End::Discarded) => {
                        assert!((1..network).contains(&a.to.1), "{a:?}")
                    }
                    _ => {}
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 20 * retrylab::design::all().len());
    // The check saw messages at all (thousands on this model).
    assert!(received > 1000, "{received}");
}

fn trace_as(design: &str, format: &str) -> String {
    let out = retrylab(&[
        "trace",
        "models/ticket_lost_response.json",
        "--design",
        design,
        "--format",
        format,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn trace_draws_the_seeds_lost_response_run_as_committed() {
    let mut g = golden::Golden::new();
    for design in ["no_dedup", "same_key"] {
        let svg = trace_as(design, "svg");
        assert!(svg.starts_with("<svg "), "{svg}");
        assert_eq!(svg.matches("<svg").count(), 1);
        g.check(&format!("diagrams/lost_response_{design}.svg"), &svg);
    }
    g.stale_under("diagrams");
    g.finish();
}

#[test]
fn the_html_page_puts_the_diagram_beside_the_timeline() {
    let page = trace_as("no_dedup", "html");
    let text = trace_as("no_dedup", "text");
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<svg").count(), 1);
    assert!(!page.contains("<script"));
    // The timeline as `--format text` prints it, escaped.
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    assert!(page.contains(&format!("<pre>{escaped}</pre>")));
    // replay draws the same run.
    let replay = text
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .unwrap()
        .to_string();
    let key = replay.split_once("--choices ").unwrap().1;
    let out = retrylab(&[
        "replay",
        "models/ticket_lost_response.json",
        "--design",
        "no_dedup",
        "--choices",
        key,
        "--format",
        "svg",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let replayed = stdout(&out);
    // Only the title differs (trace of ... seed 0 / replay of ... choices ...).
    let body = |s: &str| s.split_once("</text>").unwrap().1.to_string();
    assert_eq!(body(&replayed), body(&trace_as("no_dedup", "svg")));
}

#[test]
fn an_unknown_format_is_refused() {
    let out = retrylab(&[
        "trace",
        "models/ticket_lost_response.json",
        "--design",
        "no_dedup",
        "--format",
        "png",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid value 'png' for '--format <FORMAT>'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_diagram_takes_no_filter_and_a_key_keeps_its_ties() {
    // A diagram of part of a timeline would show requests never answered: refused.
    let out = retrylab(&[
        "trace",
        "models/ticket_lost_response.json",
        "--design",
        "no_dedup",
        "--format",
        "svg",
        "--component",
        "agent",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--format svg and html draw the whole run"),
        "{}",
        stderr(&out)
    );
    // A key recorded without same-instant order is not replayed with it.
    let digest = Model::load(&root().join("models/ticket_lost_response.json"))
        .unwrap()
        .digest();
    let out = retrylab(&[
        "replay",
        "models/ticket_lost_response.json",
        "--design",
        "no_dedup",
        "--choices",
        &format!("{digest}:"),
        "--ties",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--ties would replay another run"),
        "{}",
        stderr(&out)
    );
}

/// The diagram reads each line's event, never its words: with every text replaced by a
/// word-free stand-in (equal texts stay equal, so folding is unchanged), the lanes, marks,
/// arrows and verdicts are the same.
#[test]
fn a_diagram_is_read_from_the_events_not_the_words() {
    let model = Model::load(&root().join("models/ticket_chaos.json")).unwrap();
    let mut arrows = 0;
    for d in retrylab::design::all() {
        for seed in 0..5 {
            let t = run_traced(&model, d, &mut model.chooser(seed));
            let mut blank = t.clone();
            let mut seen: Vec<String> = Vec::new();
            for (l, _) in &mut blank.lines {
                let n = seen.iter().position(|s| *s == l.text).unwrap_or_else(|| {
                    seen.push(l.text.clone());
                    seen.len() - 1
                });
                l.text = format!("#{n}");
            }
            let (a, b) = (Diagram::of("t", &t, &[]), Diagram::of("t", &blank, &[]));
            let marks = |d: &Diagram| -> Vec<(u64, usize, Mark)> {
                d.rows.iter().map(|r| (r.at_ms, r.lane, r.mark)).collect()
            };
            assert_eq!((&a.lanes, marks(&a)), (&b.lanes, marks(&b)), "{}", d.name());
            assert_eq!(a.arrows, b.arrows, "{} seed {seed}", d.name());
            assert_eq!(a.verdicts, b.verdicts, "{} seed {seed}", d.name());
            arrows += a.arrows.len();
        }
    }
    assert!(arrows > 1000, "{arrows}");
}

/// A call arrow starts at the agent's call line only: a tool timeout or a late result of an
/// earlier call at the same instant (which also name a call) is no call, so a worker taking
/// up the new call gets one arrow, from the new call's row. The text reader this replaced
/// drew it from the timeout's row.
#[test]
fn a_call_arrow_starts_at_the_call_not_at_a_timeout_of_the_same_instant() {
    use retrylab::vocab::ids::{CallId, IntentId, OpId, Params, WorkerId};
    use retrylab::vocab::{AgentEvent, CallStep, Component, OpEvent, TraceLine};
    let model = Model::load(&root().join("models/ticket_lost_response.json")).unwrap();
    let mut t = run_traced(&model, retrylab::design::all()[0], &mut model.chooser(0));
    let call = |call: u32, nth: u32| AgentEvent::Calls {
        call: CallId(call),
        intent: IntentId(0),
        step: CallStep::Only,
        nth,
        params: Params(0),
    };
    let line = |at_ms: u64, component: Component, event: retrylab::vocab::TraceEvent| {
        (TraceLine::new(at_ms, component, event), Some(IntentId(0)))
    };
    t.lines = vec![
        line(0, Component::Agent, call(1, 1).into()),
        line(
            5000,
            Component::Agent,
            AgentEvent::ToolTimeout { call: CallId(1) }.into(),
        ),
        line(5000, Component::Agent, call(2, 2).into()),
        line(
            5000,
            Component::Executor,
            OpEvent::Transition {
                worker: WorkerId(0),
                op: OpId(1),
                from: "proposed",
                to: "dispatched",
                fence: None,
            }
            .into(),
        ),
    ];
    let d = Diagram::of("t", &t, &[]);
    let calls: Vec<&Arrow> = d
        .arrows
        .iter()
        .filter(|a| a.carries == Carries::Call)
        .collect();
    assert_eq!(calls, [&arrow((2, 0), (3, 1), Carries::Call, End::Head)]);
}
