//! The real Python packages against the executor presets that model them: the same create
//! tool, written with the package as its users write it (examples/python/packages.py, and
//! stripe-python in examples/python/stripe_sdk.py), runs under the external-executor client
//! on the scenarios the presets are tested on, and makes the same sends as the preset: as
//! many, with the same keys (the same, new, or none), each after a wait the preset could
//! have drawn. The preset's waits are bounded by running it with every backoff draw at its
//! lowest and at its highest; the package draws its jitter from the seeded `random`.
//!
//! The packages are pinned in examples/python/requirements.txt; the interpreter is that of
//! tests/python_examples.rs.

use std::path::PathBuf;

use crate::common;
use crate::common::executors;
use crate::common::python;

use common::{base, faults, model, sends_in, set};
use executors::{args, retrylab};
use retrylab::run::run_traced;
use retrylab::sim::{Alternatives, Chooser, Purpose, RandomChooser};
use serde_json::{Value, json};

/// Seeds per scenario: each run starts a Python process that imports the package (some
/// 2 s on two cores), and the preset's waits are bounded on every seed alike.
const SEEDS: u64 = 1;

/// Every backoff draw at its lowest (or highest) value; every other choice random.
struct Extreme {
    high: bool,
    rest: RandomChooser,
}

impl Chooser for Extreme {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        match purpose {
            Purpose::Backoff if self.high => alternatives.len() - 1,
            Purpose::Backoff => 0,
            _ => self.rest.choose(purpose, alternatives),
        }
    }
}

/// The sends of the design preset `no_dedup` under executor preset `preset` on `v`, with
/// every backoff draw at its lowest or highest.
fn preset_sends(v: &Value, preset: &str, high: bool) -> Vec<(u64, String)> {
    let v = set(v.clone(), "executor.preset", json!(preset));
    let mut chooser = Extreme {
        high,
        rest: RandomChooser::new(0),
    };
    let t = run_traced(&model(&v), common::design("no_dedup"), &mut chooser);
    sends_in(&t.timeline)
}

/// The sends of the external executor `command` on `v`, seed `seed`.
fn package_sends(v: &Value, name: &str, command: &str, seed: u64) -> Vec<(u64, String)> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("package_presets");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}-{seed}.json"));
    std::fs::write(&file, v.to_string()).unwrap();
    let mut a = args(&["trace"]);
    a.push(file.display().to_string());
    a.extend(args(&[
        "--design",
        "pkg",
        "--seed",
        &seed.to_string(),
        "--executor",
    ]));
    a.push(format!("pkg={} {command}", python::python()));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    sends_in(&out.stdout)
}

fn waits(s: &[(u64, String)]) -> Vec<u64> {
    s.windows(2).map(|w| w[1].0 - w[0].0).collect()
}

/// The package makes the preset's sends on `v`, on seeds `0..SEEDS`: the same keys, each wait
/// between the preset's lowest and highest (1 ms of rounding either way: the client sleeps
/// whole milliseconds), and as many sends as the preset makes with its waits at their
/// lowest or highest, or a count between (a deadline counts the time the waits take).
fn same_sends(what: &str, v: &Value, preset: &str, command: &str) {
    let (low, high) = (
        preset_sends(v, preset, false),
        preset_sends(v, preset, true),
    );
    let keys = |s: &[(u64, String)]| s.iter().map(|(_, k)| k.clone()).collect::<Vec<_>>();
    let (fewest, most) = if low.len() <= high.len() {
        (&low, &high)
    } else {
        (&high, &low)
    };
    assert!(
        keys(most).starts_with(&keys(fewest)),
        "{what}: the keys do not depend on waits: {low:?} {high:?}"
    );
    for seed in 0..SEEDS {
        let got = package_sends(v, preset, command, seed);
        assert!(
            (fewest.len()..=most.len()).contains(&got.len()) && keys(most).starts_with(&keys(&got)),
            "{what}, seed {seed}: {command} sent {got:?}; {preset} sends {low:?} to {high:?}"
        );
        for (i, ((w, lo), hi)) in waits(&got)
            .into_iter()
            .zip(waits(&low))
            .zip(waits(&high))
            .enumerate()
        {
            assert!(
                lo.saturating_sub(1) <= w && w <= hi + 1,
                "{what}, seed {seed}: wait {i} of {command} is {w} ms; {preset} waits {lo} to {hi} ms ({got:?})"
            );
        }
    }
}

/// One call, every create answered 500 after its commit.
fn every_500() -> Value {
    let v = set(base(), "agent.max_calls", json!(1));
    set(v, "provider.error_after_commit", json!(1))
}

/// One call, every create refused by a rate limit with `Retry-After: 1` (s).
fn every_429() -> Value {
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "provider.throttle", json!(1));
    set(v, "provider.retry_after_ms", json!(1_000))
}

/// One call, its first five creates refused with a 400.
fn every_400() -> Value {
    let v = set(base(), "agent.max_calls", json!(1));
    let rejects: Vec<Value> = (1..=5)
        .map(|a| json!({ "reject": { "attempt": a } }))
        .collect();
    faults(v, json!(rejects))
}

/// One call, every reply lost: each send times out after the client's 5 s.
fn every_reply_lost() -> Value {
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "agent.tool_timeout_ms", json!(600_000));
    set(v, "network.reply_loss", json!(1))
}

/// `v` with a should-retry header `header: value` on every answer of class `class`.
fn hinted(v: Value, header: &str, class: &str, value: bool) -> Value {
    set(
        v,
        "provider.should_retry",
        json!({ "header": header, "on": { class: value } }),
    )
}

/// The scenarios, those with a should-retry header naming it `header` (the SDK's own).
fn scenarios_with(header: &str) -> [(&'static str, Value); 6] {
    [
        ("500s", every_500()),
        ("429s", every_429()),
        ("400s", every_400()),
        ("lost replies", every_reply_lost()),
        (
            "500s that should not be retried",
            hinted(every_500(), header, "server_error", false),
        ),
        (
            "400s that should be retried",
            hinted(every_400(), header, "refused", true),
        ),
    ]
}

fn scenarios() -> [(&'static str, Value); 6] {
    scenarios_with("x-should-retry")
}

fn script(name: &str) -> String {
    ["examples", "python", name]
        .iter()
        .collect::<PathBuf>()
        .display()
        .to_string()
}

/// `examples/python/packages.py package` makes `preset`'s sends on every scenario.
fn package_sends_as(package: &str, preset: &str) {
    for (what, v) in scenarios() {
        let command = format!("{} {package}", script("packages.py"));
        same_sends(what, &v, preset, &command);
    }
}

#[test]
fn langgraph_with_httpx_sends_as_langgraph_py_httpx() {
    package_sends_as("langgraph_httpx", "langgraph_py_httpx");
}

#[test]
fn langgraph_with_requests_sends_as_langgraph_py_requests() {
    package_sends_as("langgraph_requests", "langgraph_py_requests");
}

#[test]
fn stamina_sends_as_stamina_default() {
    package_sends_as("stamina", "stamina_default");
}

#[test]
fn the_openai_sdk_sends_as_openai_sdk() {
    package_sends_as("openai", "openai_sdk");
}

#[test]
fn the_anthropic_sdk_sends_as_anthropic_sdk() {
    package_sends_as("anthropic", "anthropic_sdk");
}

#[test]
fn botocore_sends_as_aws_standard_and_aws_legacy() {
    // EC2's RunInstances against the simulated EC2 API, its ClientToken filled by botocore.
    for (what, v) in scenarios() {
        let v = set(v, "provider.preset", json!("aws_ec2"));
        let command = format!("{} botocore", script("packages.py"));
        same_sends(what, &v, "aws_standard", &command);
        let command = format!("{} botocore_legacy", script("packages.py"));
        same_sends(what, &v, "aws_legacy", &command);
    }
}

#[test]
fn tenacity_sends_as_tenacity_default() {
    // It retries forever without waiting: the scenarios end after 1 s, or after three
    // timeouts of 5 s where every reply is lost.
    for (what, v) in scenarios() {
        let horizon = if what == "lost replies" {
            16_000
        } else {
            1_000
        };
        let v = set(v, "horizon_ms", json!(horizon));
        let command = format!("{} tenacity", script("packages.py"));
        same_sends(what, &v, "tenacity_default", &command);
    }
}

#[test]
fn stripe_python_sends_as_stripe_client_and_stripe_client_retries() {
    for (what, v) in scenarios_with("Stripe-Should-Retry") {
        // Against the simulated Stripe API; the SDK's request timeout (80 s) is the presets'.
        let v = set(v, "provider.preset", json!("stripe_v1"));
        let shipped = script("stripe_sdk.py");
        same_sends(what, &v, "stripe_client", &shipped);
        let retries = format!("{shipped} --max-network-retries 2");
        same_sends(what, &v, "stripe_client_retries", &retries);
    }
}
