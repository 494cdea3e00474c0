//! Runs drawn as sequence diagrams (`retrylab trace --format svg|html`, and the report's
//! counterexamples): the lanes, arrows and marks read off a run's timeline, exactly for the
//! seeds' lost-response run, as invariants over many runs of the chaos model, and as
//! committed SVG files (`tests/snapshots/diagrams/`, `RETRYLAB_BLESS=1` rewrites them).

#[path = "common/cli.rs"]
mod cli;
#[path = "common/golden.rs"]
mod golden;

use cli::{retrylab, root, stderr, stdout};
use retrylab::design::Registry;
use retrylab::model::Model;
use retrylab::report::sequence::{Arrow, Carries, Diagram, End, Mark};
use retrylab::run::run_traced;
use retrylab::sim::RandomChooser;
use retrylab::vocab::trace::Component;

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
    let t = run_traced(&model, d, &mut RandomChooser::for_model(&model, 0));
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
                true
            ),
            ("violates: no_duplicate".to_string(), true),
        ]
    );
}

/// Over many runs of every design on the chaos model (two workers, lost and duplicated
/// requests, lost replies, crashes): every send starts exactly one request arrow and every
/// duplication one more; every answer of the provider starts exactly one reply arrow; each
/// ends where the timeline says (the provider, a loss on the network, a discard at the
/// worker, or still on its way at the end); marks sit on their component's lane.
#[test]
fn every_message_of_a_chaos_run_is_one_arrow() {
    let model = Model::load(&root().join("models/ticket_chaos.json")).unwrap();
    let mut checked = 0;
    for d in retrylab::design::all() {
        for seed in 0..20 {
            let t = run_traced(&model, d, &mut RandomChooser::for_model(&model, seed));
            let diagram = Diagram::of("chaos", &t, &[]);
            let lines: Vec<_> = t.lines.iter().map(|(l, _)| l).collect();
            let count = |c: Component, f: &dyn Fn(&str) -> bool| {
                lines
                    .iter()
                    .filter(|l| l.component == c && f(&l.text))
                    .count()
            };
            let sends = count(Component::Executor, &|t| t.contains(" sends attempt "));
            let duplicated = count(Component::Network, &|t| t.ends_with(" duplicated"));
            let answers = count(Component::Provider, &|t| {
                t.starts_with("attempt ") && t.contains("-> ")
            });
            let of = |c: Carries| diagram.arrows.iter().filter(|a| a.carries == c).count();
            assert_eq!(
                of(Carries::Request),
                sends + duplicated,
                "{} seed {seed}",
                d.name()
            );
            assert_eq!(of(Carries::Reply), answers, "{} seed {seed}", d.name());
            let provider = diagram.lanes.len() - 2;
            let network = diagram.lanes.len() - 3;
            for a in &diagram.arrows {
                assert!(a.from.0 <= a.to.0, "an arrow back in time: {a:?}");
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
    let escaped = retrylab::report::html::esc(&text);
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
