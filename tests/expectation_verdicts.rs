//! Verdicts: `check` on the bundled models, a wrong expectation shrunk to a counterexample
//! whose printed replay command reproduces it, `run --fail-on` and `--show-failures`, the
//! JSON verdict fields, and the same bytes for any thread count.

use crate::common::cli;

use std::path::{Path, PathBuf};
use std::process::Command;

use cli::*;

use retrylab::check::{Metrics, Property};
use retrylab::design;
use retrylab::explore::{Spec, shrink_seed, sweep};
use retrylab::model::Model;
use retrylab::sim::ReplayChooser;
use retrylab::world::World;

fn model_path(name: &str) -> String {
    root()
        .join("models")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn load(name: &str) -> Model {
    Model::load(Path::new(&model_path(name))).unwrap_or_else(|e| panic!("{e}"))
}

/// A model file in a scratch directory, removed when dropped.
struct TempModel(PathBuf);

impl TempModel {
    fn new(name: &str, text: &str) -> TempModel {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("retrylab-verdicts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        TempModel(path)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempModel {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `models/ticket_chaos.json` expecting `same_key` to hold `no_duplicate`, which it does not
/// (a volatile journal forgets the key when its worker crashes).
fn wrong_chaos() -> String {
    let text = std::fs::read_to_string(model_path("ticket_chaos.json")).unwrap();
    let (head, tail) = text.split_once("\"same_key\": {").unwrap();
    let tail = tail
        .replacen(
            "\"hold\": [\"no_false_success\",",
            "\"hold\": [\"no_duplicate\", \"no_false_success\",",
            1,
        )
        .replacen(
            "\"violate\": [\"no_duplicate\", \"no_drift\"",
            "\"violate\": [\"no_drift\"",
            1,
        );
    let text = format!("{head}\"same_key\": {{{tail}");
    assert!(text.contains("\"hold\": [\"no_duplicate\", \"no_false_success\""));
    text
}

#[test]
fn check_passes_on_every_bundled_model() {
    let mut args = vec!["check".to_string(), "--seeds".into(), "200".into()];
    for dir in ["models", "models/windows"] {
        let mut files: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        files.sort();
        args.extend(files);
    }
    // What the models expect, counted from the files: every expectation, and a line of
    // assumptions per model and design it expects something of that states a guarantee.
    let (mut expected, mut guarded, mut models) = (0, 0, 0);
    // models/schema.json is the schema, which `check` skips with a line.
    for file in args[3..].iter().filter(|f| !f.ends_with("schema.json")) {
        models += 1;
        let m = retrylab::model::Model::load(std::path::Path::new(file)).unwrap();
        for (design, e) in &m.expect {
            // With an explore bound, each design is also certified within it: one more.
            expected += e.hold.len() + e.violate.len() + usize::from(m.explore.is_some());
            let d = retrylab::design::find(design).unwrap();
            guarded += usize::from(!d.assumptions().is_empty());
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = retrylab(&args);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    let last = text.lines().last().unwrap();
    assert_eq!(
        last,
        format!("{expected} expectations in {models} models: {expected} met, 0 not met"),
        "{last}"
    );
    assert!(expected > 1_000, "the models expect something: {expected}");
    assert!(!text.contains("FAIL"), "{text}");
    let reported = text
        .lines()
        .filter(|l| l.contains(" assumptions: "))
        .count();
    assert_eq!(reported, guarded, "{text}");
}

#[test]
fn wrong_expectation_fails_with_a_shrunk_counterexample_that_replays_as_printed() {
    let model = TempModel::new("wrong_chaos.json", &wrong_chaos());
    let out = retrylab(&["check", model.arg()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(stderr(&out).contains("1 expectation(s) not met"));
    assert!(
        text.contains("  FAIL  same_key                 hold     no_duplicate               788 of 1000 seeds violate it"),
        "{text}"
    );
    assert!(text.contains("first violating seed: 0\n"), "{text}");
    // The vector is shrunk from the seed's 151 decisions to 23: twenty-two defaults, then
    // the worker crash before the third dispatch, which loses the volatile journal's keys
    // of the two creates already sent.
    assert!(
        text.contains("shrunk to 23 choices (from 151, in 465 runs): 23=1\n"),
        "{text}"
    );
    let timeline = text
        .split("timeline of the shrunk run:\n")
        .nth(1)
        .unwrap()
        .split("\noutcome: ")
        .next()
        .unwrap();
    assert!(
        timeline.contains("crashes before_dispatch of attempt 3"),
        "{timeline}"
    );
    let replay = text
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay line");
    assert!(
        replay.contains(&format!(
            "replay {} --design same_key --choices {}:23=1",
            model.arg(),
            Model::from_json(&wrong_chaos(), "wrong_chaos.json")
                .unwrap()
                .digest()
        )),
        "{replay}"
    );
    // Exactly as printed: the same timeline, and the run violates the property.
    let again = shell(replay);
    let again_text = stdout(&again);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(again_text.contains(timeline), "{again_text}");
    assert!(
        again_text.contains("violates: no_duplicate, resolved_within(60000)\n"),
        "{again_text}"
    );
    // And the seed command printed beside it traces the unshrunk failure.
    let seed_line = text
        .lines()
        .find(|l| l.trim_start().contains(" trace ") && l.contains("--seed 0"))
        .expect("a trace command for the seed");
    let traced = stdout(&shell(seed_line.trim()));
    assert!(traced.contains("violates: no_duplicate"), "{traced}");
}

#[test]
fn an_unmet_violate_expectation_fails_too() {
    let text = std::fs::read_to_string(model_path("windows/reply_lost_after_commit.json")).unwrap();
    let text = text.replacen(
        "\"same_key\": {\n      \"hold\": [\n        \"no_duplicate\",",
        "\"same_key\": {\n      \"violate\": [\"no_duplicate\"],\n      \"hold\": [",
        1,
    );
    let model = TempModel::new("wrong_violate.json", &text);
    let out = retrylab(&["check", model.arg(), "--seeds", "50"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("FAIL reply_lost_after_commit same_key: expected at least one seed to violate no_duplicate, but none of 50 did"),
        "{text}"
    );
}

#[test]
fn shrinking_reaches_the_known_minimal_vectors() {
    // A scripted fault with constant timings: every decision at its default still loses the
    // reply, so the minimal failing vector is empty.
    let m = load("windows/reply_lost_after_commit.json");
    for seed in [0, 7, 999] {
        let s = shrink_seed(
            &m,
            design::find("no_dedup").unwrap(),
            Property::NoDuplicate,
            seed,
        )
        .expect("every seed duplicates");
        assert_eq!(s.vector.0, Vec::<u64>::new(), "seed {seed}");
    }
    // The lost-response model draws latencies and think times; its duplicate needs none of
    // them, so every one is lowered to the default and dropped.
    let m = load("ticket_lost_response.json");
    let s = shrink_seed(
        &m,
        design::find("new_key_after_replan").unwrap(),
        Property::NoDuplicate,
        3,
    )
    .unwrap();
    assert_eq!((s.original.0.len(), s.vector.0.len()), (6, 0));
    // same_key never duplicates there: nothing to shrink.
    assert_eq!(
        shrink_seed(
            &m,
            design::find("same_key").unwrap(),
            Property::NoDuplicate,
            3
        ),
        None
    );
    // Chaos: the duplicate needs one worker crash, the 23rd decision of the run.
    let m = load("ticket_chaos.json");
    let d = design::find("same_key").unwrap();
    let s = shrink_seed(&m, d, Property::NoDuplicate, 0).unwrap();
    let mut crash_23rd = vec![0; 22];
    crash_23rd.push(1);
    assert_eq!(s.vector.0, crash_23rd);
    // The shrunk vector replays strictly, to a run that still violates the property.
    let mut world = World::new(&m, d, false);
    let mut replay = ReplayChooser::new(s.vector.clone());
    world.run(&mut replay);
    assert_eq!(replay.finish(), Ok(()));
    let run = Metrics::default().add_outcome(&world.outcome());
    assert!(!Property::NoDuplicate.holds(&run));
    // Every entry is needed: dropping the crash, or any earlier default, loses the failure.
    for cut in 0..s.vector.0.len() {
        let mut shorter = s.vector.0.clone();
        shorter.remove(cut);
        let mut world = World::new(&m, d, false);
        world.run(&mut ReplayChooser::lenient(&shorter));
        let run = Metrics::default().add_outcome(&world.outcome());
        assert!(Property::NoDuplicate.holds(&run), "without entry {cut}");
    }
}

#[test]
fn fail_on_sets_the_exit_code() {
    let m = model_path("ticket_lost_response.json");
    let out = retrylab(&[
        "run",
        &m,
        "--seeds",
        "100",
        "--fail-on",
        "no_duplicate,no_false_success",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "--fail-on: no_dedup: no_duplicate violated on 100 of 100 seeds\n--fail-on: new_key_after_replan: no_duplicate violated on 100 of 100 seeds\n"
    );
    assert!(stdout(&out).starts_with("model ticket_lost_response"));
    let out = retrylab(&["run", &m, "--seeds", "100", "--fail-on", "no_false_success"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = retrylab(&[
        "run",
        &m,
        "--design",
        "same_key",
        "--fail-on",
        "no_duplicate",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = retrylab(&["run", &m, "--fail-on", "no_dupe"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown property \"no_dupe\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn show_failures_lists_seeds_with_commands_that_replay_them() {
    let m = model_path("ticket_chaos.json");
    let out = retrylab(&["run", &m, "--design", "same_key", "--show-failures", "2"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        text.contains("\nsame_key violates no_drift on 423 of 1000 seeds; the first 2:\n"),
        "{text}"
    );
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("same_key violates no_drift"))
        .skip(1)
        .take(2)
        .collect();
    for line in lines {
        let command = line.split_once(": ").unwrap().1;
        let traced = stdout(&shell(command));
        assert!(traced.contains("no_drift"), "{command}\n{traced}");
    }
}

#[test]
fn json_carries_properties_and_failures() {
    let m = model_path("ticket_lost_response.json");
    let out = retrylab(&[
        "run",
        &m,
        "--seeds",
        "10",
        "--show-failures",
        "1",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let no_dedup = &v["results"][0];
    assert_eq!(no_dedup["properties"][0]["property"], "no_duplicate");
    assert_eq!(no_dedup["properties"][0]["violating_seeds"], 10);
    assert_eq!(no_dedup["properties"][0]["expect"], "violate");
    assert_eq!(no_dedup["properties"][0]["met"], true);
    assert_eq!(no_dedup["failures"].as_array().unwrap().len(), 2);
    assert_eq!(no_dedup["failures"][0]["property"], "no_duplicate");
    assert_eq!(no_dedup["failures"][0]["seed"], 0);
    let replay = no_dedup["failures"][0]["replay"].as_str().unwrap();
    assert!(replay.ends_with(" --design no_dedup --seed 0"), "{replay}");
    let same_key = &v["results"][1];
    assert_eq!(same_key["failures"].as_array().unwrap().len(), 0);
    let rates = &same_key["rates"];
    let sum: f64 = [
        "completed",
        "true_failure",
        "false_success",
        "false_failure",
        "unresolved",
    ]
    .iter()
    .map(|k| rates[k]["rate"].as_f64().unwrap())
    .sum();
    assert_eq!(sum, 1.0);
    assert_eq!(rates["completed"]["low"], 0.722467);
}

#[test]
fn same_bytes_for_any_thread_count() {
    let m = model_path("ticket_chaos.json");
    let args = [
        "run",
        &m,
        "--seeds",
        "3000",
        "--format",
        "json",
        "--show-failures",
        "3",
    ];
    let one = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    let three = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .env("RAYON_NUM_THREADS", "3")
        .output()
        .unwrap();
    let default = retrylab(&args);
    assert!(one.status.success() && three.status.success() && default.status.success());
    assert_eq!(one.stdout, default.stdout);
    assert_eq!(three.stdout, default.stdout);
    // The sweep itself, on pools of 1, 2 and 4 threads.
    let model = load("ticket_chaos.json");
    let props = Property::PLAIN;
    let results: Vec<_> = [1, 2, 4]
        .iter()
        .map(|&n| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap();
            pool.install(|| {
                sweep(
                    &Spec {
                        model: &model,
                        design: design::find("same_key").unwrap(),
                        seeds: (100, 2_099),
                        properties: &props,
                        keep_failures: 5,
                    },
                    &|_| {},
                )
            })
        })
        .collect();
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0], results[2]);
    assert_eq!(results[0].metrics.seeds, 2_000);
}

#[test]
fn no_progress_bar_in_pipes() {
    let m = model_path("ticket_lost_response.json");
    let out = retrylab(&["run", &m, "--seeds", "300000"]);
    assert!(out.status.success());
    assert_eq!(stderr(&out), "");
}

#[test]
fn determinism_self_check_passes_on_bundled_models() {
    let m = model_path("ticket_chaos.json");
    let out = retrylab(&["run", &m, "--seeds", "500", "--check-determinism"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // (same_key's guarantee does not apply to the chaos model: stderr says why, first.)
    assert_eq!(
        stderr(&out),
        "\
warning: ticket_chaos: same_key: assumption atomic_dedup does not hold (atomicity key_then_effect: a crash between key and effect leaves a key without its effect): the design's guarantee does not apply
warning: ticket_chaos: same_key: assumption retention_covers_retries does not hold (provider.retention_ms 4000 < the retry horizon 51200 ms (bounded by agent calls, sends, restarts and pauses)): the design's guarantee does not apply
warning: ticket_chaos: same_key: assumption durable_journal does not hold (workers.journal volatile and workers can crash: a crash forgets the key): the design's guarantee does not apply
determinism: ticket_chaos: 16 seeds x 3 designs: silent, traced twice and replayed runs agree
"
    );
}

/// A design with state that outlives its run (a static counter): the self-check catches it.
mod leaky {
    use std::sync::atomic::{AtomicU64, Ordering};

    use retrylab::design::{Design, ExecCtx, Executor};
    use retrylab::model::ExecutorModel;
    use retrylab::vocab::ids::{AttemptId, OpId};
    use retrylab::vocab::protocol::{Response, ToolCall, ToolResult};

    /// Its counter: a static of the test that uses it (two tests sharing one would see
    /// each other's calls).
    pub struct Leaky(pub &'static AtomicU64);

    impl Design for Leaky {
        fn name(&self) -> &str {
            "leaky"
        }
        fn summary(&self) -> &str {
            "answers from a counter that survives across runs"
        }
        fn executor(&self, _: &ExecutorModel) -> Box<dyn Executor> {
            Box::new(Leaky(self.0))
        }
    }

    impl Executor for Leaky {
        fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
            let result = match self.0.fetch_add(1, Ordering::Relaxed) % 2 {
                0 => ToolResult::Success { resource: None },
                _ => ToolResult::Failure,
            };
            ctx.report(&call, result);
        }
        fn on_response(&mut self, _: &mut ExecCtx<'_>, _: OpId, _: AttemptId, _: Response) {}
        /// Its memory is a static counter, outside the world: it cannot say.
        fn fingerprint(&self, _: &mut dyn std::hash::Hasher) -> bool {
            false
        }
    }
}

#[test]
fn a_failed_self_check_refuses_the_run_with_exit_2_and_no_table() {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static LEAKY: leaky::Leaky = leaky::Leaky(&CALLS);
    let m = model_path("ticket_lost_response.json");
    let out = retrylab::cli::run_with(
        [
            "retrylab",
            "run",
            &m,
            "--design",
            "leaky",
            "--seeds",
            "50",
            "--check-determinism",
        ],
        &[&LEAKY],
    );
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "error: ticket_lost_response: determinism: leaky seed 0: tracing changed the run\n"
    );
}

#[test]
fn determinism_self_check_catches_state_that_outlives_a_run() {
    use retrylab::explore::determinism::{sample, self_check};
    let model = load("ticket_lost_response.json");
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let err = self_check(&model, &leaky::Leaky(&CALLS), &sample(0, 99)).unwrap_err();
    assert_eq!((err.design.as_str(), err.seed), ("leaky", 0));
    assert_eq!(err.what, "tracing changed the run");
    // A real design passes on the same seeds.
    assert_eq!(
        self_check(&model, design::find("same_key").unwrap(), &sample(0, 99)),
        Ok(())
    );
}

/// A violation the model's search finds is said once, as a violation: the `FAIL` line names
/// the property, and the shrunk run, when it is the seeds' counterexample printed above, is
/// not printed again.
#[test]
fn a_violation_found_by_the_search_is_said_once() {
    let text = std::fs::read_to_string(model_path("bad/lost_reply_rare.json")).unwrap();
    let wrong = text.replace(
        "\"hold\": [\"no_false_success\", \"no_false_failure\", \"no_false_resolution\"],\n      \"violate\": [\"no_duplicate\"]",
        "\"hold\": [\"no_duplicate\", \"no_false_success\", \"no_false_failure\", \"no_false_resolution\"]",
    );
    assert_ne!(wrong, text);
    let model = TempModel::new("lost_reply_rare_wrong.json", &wrong);
    let out = retrylab(&["check", model.arg(), "--seeds", "200"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(!text.contains("not certified"), "{text}");
    assert!(
        text.contains("FAIL lost_reply_rare new_key_after_replan (explore, within the model's bound): no_duplicate violated by a run with 1 fault"),
        "{text}"
    );
    assert_eq!(text.matches("timeline").count(), 1, "{text}");
    assert!(
        text.contains("the same run as seed 39's shrunk counterexample above\n"),
        "{text}"
    );
}
