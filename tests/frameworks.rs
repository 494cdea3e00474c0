//! The findings of reports/frameworks/README.md: the figures each rests on, exactly, from
//! the models of models/frameworks/ (200 seeds; each of these figures is the same on every
//! seed).

use crate::common::cli;

use cli::*;

/// Per stack of `model`: (duplicate effects, completed, unresolved, false failures, remote
/// calls) over 200 seeds, in the model's order.
fn figures(model: &str) -> Vec<(String, [u64; 5])> {
    let run = retrylab(&["run", model, "--seeds", "200", "--format", "json"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let t = &r["totals"];
            let n = |f: &str| t[f].as_u64().unwrap();
            (
                r["design"].as_str().unwrap().to_string(),
                [
                    n("duplicate_effects"),
                    n("completed"),
                    n("unresolved"),
                    n("false_failure"),
                    n("remote_calls"),
                ],
            )
        })
        .collect()
}

fn row(name: &str, figures: [u64; 5]) -> (String, [u64; 5]) {
    (name.to_string(), figures)
}

#[test]
fn on_the_lost_response_each_stack_fares_as_its_finding_says() {
    assert_eq!(
        figures("models/frameworks/lost_response.json"),
        [
            row("no_dedup", [200, 200, 0, 0, 400]),
            // The SDK's 80 s timeout outlasts the tool's 60 s: the replan sends a new key
            // first; the SDK's own resend under its key comes after, and is replayed.
            row("langgraph_stripe", [200, 200, 0, 0, 600]),
            row("langgraph_stripe_20s", [0, 200, 0, 0, 400]),
            row("agents_openai", [200, 200, 0, 0, 400]),
            // A key derived from the request: the model's re-call is answered from its record.
            row("agents_openai_keyed", [0, 200, 0, 0, 400]),
            row("temporal_stripe", [200, 200, 0, 0, 600]),
            row("temporal_stripe_keyed", [0, 200, 0, 0, 600]),
            row("celery_acks_late", [200, 200, 0, 0, 400]),
            row("aws_sdk", [200, 200, 0, 0, 600]),
        ]
    );
}

#[test]
fn celery_acks_late_redelivers_a_crash_under_its_task_id_but_fails_a_lost_reply() {
    let crash = figures("models/frameworks/crash_after_success.json");
    let celery = crash.iter().find(|(d, _)| d == "celery_acks_late").unwrap();
    assert_eq!(celery.1[0], 0, "no duplicate after a crash: {crash:?}");
    for model in [
        "models/frameworks/reply_lost_after_commit.json",
        "models/frameworks/overlapping_attempts.json",
    ] {
        let f = figures(model);
        let celery = f.iter().find(|(d, _)| d == "celery_acks_late").unwrap();
        assert_eq!(
            celery.1[3], 200,
            "{model}: every intent a false failure: {f:?}"
        );
    }
}
