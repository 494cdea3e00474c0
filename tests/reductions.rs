//! The reductions of the exhaustive search never change a verdict (issue 22, item 6).
//!
//! Every search here is made once per *mode*: with every reduction on
//! ([`Reductions::ALL`]), with none ([`Reductions::NONE`], the plain depth-first search that
//! is the reference), and with each reduction alone ([`Reductions::each_alone`], so that a
//! reduction added later is compared without a change here). Each mode is compared with
//! the plain search on:
//! - per property, the verdict: violated or not within the bound, and when violated, the
//!   faults of the first violating run (iterative deepening on faults makes them the fewest
//!   there are, so a reduction that lost a run would show a larger count, or none);
//! - `certified()` of the search over every property at once;
//! - the runs of a search that certifies: a reduction should only spare runs. It does not
//!   always: with `por` on, some searches make a few more runs than the plain one (see
//!   `reduced_searches_never_make_more_runs`, ignored for that reason). The comparisons
//!   print those cases and require only that every mode spares runs somewhere.
//!
//! Why per property: a search stops at its first violating run, and which run comes first
//! depends on the order of the runs, which a reduction changes by leaving runs out. A search
//! over several properties therefore reports only those the first violating run violates:
//! two modes may rightly disagree on that set. The verdict of one property searched alone is
//! what must not change.
//!
//! How per property, at the price of about one search: the order of the runs does not
//! depend on the properties searched for (they only decide where the search stops), so the
//! search of one property alone stops at the first run of that same order that violates it.
//! Each mode therefore searches every property at once, takes the properties the first
//! violating run violates as decided (violated, with that run's faults), and searches the
//! others again, until a search certifies the rest or none is left. The first search is the
//! one whose `certified()` is compared. `peeling_is_searching_each_property_alone` checks
//! this equivalence against literal one-property searches.
//!
//! The properties: every plain one ([`Property::PLAIN`]) and those the model's `expect`
//! names for the design (`resolved_within(T)`, a design's own).
//!
//! A search that stopped at its run cap (or at the events budget) decides nothing. Where
//! one does, the case is compared again with one fault fewer, down to none; a case still
//! undecided is not compared. Both are counted and named, and a test fails when more than a
//! few cases are not compared (for the bundled models, also when compared short of their
//! bound), so that it cannot pass by skipping. Every bundled model is compared within its own `explore` bound (one
//! fault without one), but for two sampling models no search decides at their size: they
//! are compared scaled down ([`scaled_down`]). Sixty generated models keep their timings
//! constant, forty keep ranges, with a retention and an in-progress expiry
//! ([`generated`]).
//!
//! Time: about 60 s for the file in release, its tests side by side on two cores shared
//! with other work (the forty models with timing ranges alone, 4.9 million runs, 29 s);
//! `cargo test`'s profile (`opt-level = 1` for the crate) takes two to three times as long.

use crate::common::strategies;

use std::path::{Path, PathBuf};
use std::time::Instant;

use proptest::prelude::*;
use proptest::strategy::Strategy as _;
use rayon::prelude::*;
use retrylab::check::Property;
use retrylab::design::{self, Design};
use retrylab::explore::{Bound, Reductions, Strategy, explore, shrink_values};
use retrylab::model::Model;
use serde_json::{Value, json};

/// What a mode's searches say of one property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// A run violates it; the first one found has this many faults.
    Violated { faults: u32 },
    /// No run within the bound violates it: a complete search found none.
    Holds,
    /// The search stopped at its run cap or at the events budget before deciding.
    Unknown,
}

/// What the searches of one mode found.
#[derive(Clone, Debug)]
struct Searched {
    /// Per property, in the order asked.
    verdicts: Vec<(Property, Verdict)>,
    /// `certified()` of the first search, over every property at once.
    certified: bool,
    /// The runs of the search that certified the properties that hold, if one did.
    certifying_runs: Option<u64>,
    /// Runs of every search.
    runs: u64,
}

impl Searched {
    fn decided(&self) -> bool {
        self.verdicts.iter().all(|(_, v)| *v != Verdict::Unknown)
    }

    fn verdict(&self, p: Property) -> Verdict {
        self.verdicts.iter().find(|(q, _)| *q == p).unwrap().1
    }
}

/// Every property's verdict in one mode, by searching all of them at once and again
/// without those decided (see the file's header).
fn search(model: &Model, design: &dyn Design, properties: &[Property], bound: Bound) -> Searched {
    let mut left = properties.to_vec();
    let mut verdicts = Vec::new();
    let (mut certified, mut certifying_runs, mut runs) = (None, None, 0);
    while !left.is_empty() {
        let e = explore(model, design, &left, Strategy::Dfs, bound);
        runs += e.runs();
        certified.get_or_insert(e.certified());
        if e.violations.is_empty() {
            let v = if e.certified() {
                certifying_runs = Some(e.runs());
                Verdict::Holds
            } else {
                Verdict::Unknown
            };
            verdicts.extend(left.drain(..).map(|p| (p, v)));
            break;
        }
        for v in &e.violations {
            verdicts.push((v.property, Verdict::Violated { faults: v.faults }));
            left.retain(|&p| p != v.property);
        }
    }
    verdicts.sort_by_key(|(p, _)| properties.iter().position(|q| q == p));
    Searched {
        verdicts,
        certified: certified.unwrap_or(false),
        certifying_runs,
        runs,
    }
}

/// Every mode: all reductions, none, then each alone.
fn modes() -> Vec<(&'static str, Reductions)> {
    let mut m = vec![("all", Reductions::ALL), ("none", Reductions::NONE)];
    m.extend(Reductions::each_alone());
    m
}

/// The command-line switches that leave exactly `r` on.
fn switches(r: Reductions) -> String {
    if r == Reductions::NONE {
        return " --no-reductions".into();
    }
    let on = r.names();
    Reductions::ALL
        .names()
        .into_iter()
        .filter(|n| !on.contains(n))
        .map(|n| format!(" --no-{n}"))
        .collect()
}

/// One search to compare across modes: a model file (its path, for the replay line), a
/// design, the properties and the bound.
#[derive(Clone)]
struct Case<'a> {
    /// What the model is, for messages: its path, or how it was made.
    about: String,
    /// The model file, relative to the crate; for a model made by the test, the file it is
    /// written to when a comparison fails (under the target directory).
    path: String,
    /// The text of a model made by the test, written to `path` when a comparison fails.
    text: Option<String>,
    model: &'a Model,
    design: &'static dyn Design,
    properties: Vec<Property>,
    bound: Bound,
}

impl Case<'_> {
    fn name(&self) -> String {
        format!(
            "{} {} (max_faults {})",
            self.about,
            self.design.name(),
            self.bound.max_faults
        )
    }

    /// The command that repeats mode `r`'s search of `p`.
    fn replay(&self, r: Reductions, p: Property) -> String {
        format!(
            "retrylab explore {} --design {} --max-faults {} --max-runs {} --property '{p}'{}",
            self.path,
            self.design.name(),
            self.bound.max_faults,
            self.bound.max_runs,
            switches(r)
        )
    }
}

/// What comparing one case found.
#[derive(Debug, Default)]
struct Compared {
    /// A verdict or a certificate that a reduction changed: the failures.
    changed: Vec<String>,
    /// A reduced search that certified with more runs than the plain one.
    more_runs: Vec<String>,
    /// Cases with a mode not compared, because it or the plain search decided nothing.
    skipped: Vec<String>,
    /// Cases compared with fewer faults than asked, because a search with more stopped at
    /// its run cap.
    lowered: Vec<String>,
    /// Per reduced mode (in [`modes`] order, the plain one left out): the comparisons made
    /// on a certifying search, and those where the mode made strictly fewer runs.
    fewer_runs: Vec<(&'static str, u32, u32)>,
    /// Property verdicts compared: (violated, holds).
    compared: (u32, u32),
    /// Runs of every mode's searches.
    runs: u64,
}

/// Searches `case` in every mode and compares each with the plain search; where a search
/// stops at the run cap, again with one fault fewer, down to none.
fn compare(case: &Case<'_>) -> Compared {
    let mut wasted = 0;
    let mut lowered = case.clone();
    loop {
        let mut out = compare_at(&lowered);
        out.runs += wasted;
        let k = lowered.bound.max_faults;
        if out.skipped.is_empty() || k == 0 {
            if k < case.bound.max_faults {
                out.lowered
                    .push(format!("{}: compared with {k} faults", case.name()));
            }
            return out;
        }
        wasted = out.runs;
        lowered.bound.max_faults = k - 1;
    }
}

/// Searches `case` in every mode and compares each with the plain search.
fn compare_at(case: &Case<'_>) -> Compared {
    let mut out = Compared::default();
    let searched: Vec<(&str, Reductions, Searched)> = modes()
        .into_par_iter()
        .map(|(name, r)| {
            let bound = Bound {
                reductions: r,
                ..case.bound
            };
            (
                name,
                r,
                search(case.model, case.design, &case.properties, bound),
            )
        })
        .collect();
    out.runs = searched.iter().map(|(_, _, s)| s.runs).sum();
    let (_, _, plain) = searched
        .iter()
        .find(|(_, r, _)| *r == Reductions::NONE)
        .unwrap();
    let mut undecided = Vec::new();
    for (name, r, s) in &searched {
        if *r == Reductions::NONE {
            continue;
        }
        let mut fewer = (*name, 0, 0);
        if !(s.decided() && plain.decided()) {
            undecided.push(*name);
        }
        for &p in &case.properties {
            let (a, b) = (s.verdict(p), plain.verdict(p));
            if a == Verdict::Unknown || b == Verdict::Unknown {
                continue;
            }
            if a != b {
                out.changed.push(format!(
                    "{}, {p}: {name} says {a:?}, none says {b:?}\n  {}\n  {}",
                    case.name(),
                    case.replay(*r, p),
                    case.replay(Reductions::NONE, p),
                ));
            } else if b == Verdict::Holds {
                out.compared.1 += 1;
            } else {
                out.compared.0 += 1;
            }
        }
        if s.decided() && plain.decided() && s.certified != plain.certified {
            out.changed.push(format!(
                "{}: certified() {} with {name}, {} with none",
                case.name(),
                s.certified,
                plain.certified
            ));
        }
        if let (Some(a), Some(b)) = (s.certifying_runs, plain.certifying_runs) {
            fewer.1 += 1;
            if a < b {
                fewer.2 += 1;
            }
            if a > b {
                out.more_runs.push(format!(
                    "{}: {name} certified in {a} runs, none in {b}",
                    case.name()
                ));
            }
        }
        out.fewer_runs.push(fewer);
    }
    if !undecided.is_empty() {
        out.skipped.push(format!(
            "{}: not compared with {} (a search stopped at its run cap)",
            case.name(),
            undecided.join(", ")
        ));
    }
    if let (false, Some(text)) = (out.changed.is_empty(), &case.text) {
        write_model(&case.path, text);
    }
    out
}

/// Where a model the test made is written when a comparison of it fails: under the target
/// directory, named by its content.
fn model_path(text: &str) -> String {
    format!(
        "{}/reductions/model-{}.json",
        env!("CARGO_TARGET_TMPDIR"),
        retrylab::sim::Fnv1a::hex(text.as_bytes())
    )
}

fn write_model(path: &str, text: &str) {
    let path = Path::new(path);
    let written = std::fs::create_dir_all(path.parent().unwrap())
        .and_then(|()| std::fs::write(path, format!("{text}\n")));
    if let Err(e) = written {
        eprintln!("{} not written: {e}", path.display());
    }
}

/// Sums the comparisons of many cases.
fn merge(all: Vec<Compared>) -> Compared {
    let mut out = Compared::default();
    for c in all {
        out.changed.extend(c.changed);
        out.more_runs.extend(c.more_runs);
        out.skipped.extend(c.skipped);
        out.lowered.extend(c.lowered);
        out.compared.0 += c.compared.0;
        out.compared.1 += c.compared.1;
        out.runs += c.runs;
        for (name, n, fewer) in c.fewer_runs {
            match out.fewer_runs.iter_mut().find(|(m, _, _)| *m == name) {
                Some(f) => {
                    f.1 += n;
                    f.2 += fewer;
                }
                None => out.fewer_runs.push((name, n, fewer)),
            }
        }
    }
    out
}

/// The plain properties, then those `model`'s expectations for `design` add.
fn properties(model: &Model, design: &str) -> Vec<Property> {
    let mut ps = Property::PLAIN.to_vec();
    for (p, _) in model.expectations(design) {
        if !ps.contains(&p) {
            ps.push(p);
        }
    }
    ps
}

/// Every bundled model file, sorted, as a path relative to the crate (for replay lines).
fn bundled_paths() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for dir in [
        "models",
        "models/windows",
        "models/guarantees",
        "models/bad",
    ] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p: PathBuf = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".json") && name != "schema.json" {
                paths.push(format!("{dir}/{name}"));
            }
        }
    }
    paths.sort();
    paths
}

/// Bundled models written for sampling (`run`, no `explore` bound) whose search at their
/// own size decides nothing within any cap a test can pay: the changes that scale each
/// down (JSON pointer, value) and the fault budget it is then searched with. With one
/// intent, `no_dedup` on `provider_comparison` makes more than 10 000 000 runs at 0 faults
/// (a latency menu of 5 to 1 500 ms on every message is what multiplies them);
/// `ticket_chaos` makes more than 2 000 000 at 0 faults with its five intents, and still
/// more than 5 000 000 for `no_dedup` with one intent and a constant latency, its agent
/// calling up to three times with two attempts each.
fn scaled_down(path: &str) -> Option<(Vec<(&'static str, Value)>, u32)> {
    let small = vec![
        ("/workload/intents", json!(1)),
        ("/network/latency_ms", json!(200)),
    ];
    match path {
        "models/provider_comparison.json" => Some((small, 1)),
        "models/ticket_chaos.json" => {
            let mut changes = small;
            changes.extend([
                ("/agent/max_calls", json!(2)),
                ("/executor/attempts", json!(1)),
            ]);
            Some((changes, 0))
        }
        _ => None,
    }
}

/// A bundled model as searched here: what it is (for messages), its path (or where its
/// scaled-down text is written), the scaled-down text, the model, and its fault budget.
struct Bundled {
    about: String,
    path: String,
    text: Option<String>,
    model: Model,
    max_faults: u32,
}

fn bundled() -> Vec<Bundled> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    bundled_paths()
        .into_iter()
        .map(|path| {
            let model = Model::load(&root.join(&path)).unwrap_or_else(|e| panic!("{e}"));
            let Some((changes, max_faults)) = scaled_down(&path) else {
                let max_faults = model.explore.map_or(1, |e| e.max_faults);
                return Bundled {
                    about: path.clone(),
                    path,
                    text: None,
                    model,
                    max_faults,
                };
            };
            assert!(model.explore.is_none(), "{path} has an explore bound now");
            let mut v: Value =
                serde_json::from_str(&std::fs::read_to_string(root.join(&path)).unwrap()).unwrap();
            v.as_object_mut().unwrap().remove("$schema");
            let mut about = format!("{path} scaled down (");
            for (i, (pointer, value)) in changes.iter().enumerate() {
                *v.pointer_mut(pointer).unwrap() = value.clone();
                about.push_str(&format!(
                    "{}{pointer} {value}",
                    if i > 0 { ", " } else { "" }
                ));
            }
            about.push(')');
            let text = serde_json::to_string_pretty(&v).unwrap();
            let model = Model::from_json(&text, &path).unwrap_or_else(|e| panic!("{e}"));
            Bundled {
                about,
                path: model_path(&text),
                text: Some(text),
                model,
                max_faults,
            }
        })
        .collect()
}

/// Every built-in design each bundled model lists (external ones are skipped), with the
/// properties it is judged on.
fn bundled_cases(models: &[Bundled]) -> Vec<Case<'_>> {
    let mut cases = Vec::new();
    for b in models {
        for design in b.model.designs.iter().filter_map(|d| design::find(d)) {
            cases.push(Case {
                about: b.about.clone(),
                path: b.path.clone(),
                text: b.text.clone(),
                model: &b.model,
                design,
                properties: properties(&b.model, design.name()),
                bound: Bound {
                    max_faults: b.max_faults,
                    max_runs: BUNDLED_MAX_RUNS,
                    ..Bound::default()
                },
            });
        }
    }
    cases
}

/// Compares every case, two at a time; with `RETRYLAB_REDUCTIONS_TIMES` set, prints each
/// case's time and runs.
fn compare_all(cases: &[Case<'_>]) -> Compared {
    let timed: Vec<(Compared, f64)> = cases
        .par_iter()
        .map(|c| {
            let t = Instant::now();
            let r = compare(c);
            (r, t.elapsed().as_secs_f64())
        })
        .collect();
    if std::env::var_os("RETRYLAB_REDUCTIONS_TIMES").is_some() {
        for (c, (r, s)) in cases.iter().zip(&timed) {
            eprintln!("{s:8.2} s {:>10} runs  {}", r.runs, c.name());
        }
    }
    merge(timed.into_iter().map(|(r, _)| r).collect())
}

/// Most runs of one search of a bundled model.
const BUNDLED_MAX_RUNS: u64 = 200_000;

/// Cases left undecided (a run cap) that a test tolerates, named in its output.
const MAX_SKIPPED: usize = 3;

/// Every bundled model, every built-in design it lists, within its `explore` bound (one
/// fault without one; see [`SCALED_DOWN`]): no reduction changes a verdict or a
/// certificate.
#[test]
fn no_reduction_changes_a_verdict_on_the_bundled_models() {
    let started = Instant::now();
    let models = bundled();
    let cases = bundled_cases(&models);
    let all = compare_all(&cases);
    eprintln!(
        "{} cases, {} runs in {:.1} s; verdicts compared: {} violated, {} holding; not compared: {:?}; compared with fewer faults: {:?}; certifying searches (with fewer runs) per mode: {:?}",
        cases.len(),
        all.runs,
        started.elapsed().as_secs_f64(),
        all.compared.0,
        all.compared.1,
        all.skipped,
        all.lowered,
        all.fewer_runs,
    );
    if !all.more_runs.is_empty() {
        eprintln!(
            "certified with more runs than the plain search (see reduced_searches_never_make_more_runs):\n{}",
            all.more_runs.join("\n")
        );
    }
    assert!(
        all.changed.is_empty(),
        "a reduction changed a verdict:\n{}",
        all.changed.join("\n")
    );
    // A case compared with fewer faults than its bound counts too: a model that grows out
    // of the cap goes to `scaled_down` rather than silently losing its fault budget.
    let short: Vec<&String> = all.skipped.iter().chain(&all.lowered).collect();
    assert!(
        short.len() <= MAX_SKIPPED,
        "{} cases not compared, or not within their bound (a search stopped at its run cap), more than {MAX_SKIPPED}:\n{short:#?}",
        short.len(),
    );
    // Not vacuous: both kinds of verdict were compared, and every reduction spared runs
    // somewhere.
    assert!(
        all.compared.0 > 0 && all.compared.1 > 0,
        "{:?}",
        all.compared
    );
    for (name, n, fewer) in &all.fewer_runs {
        // Snapshots spare the replay of a run's start, not runs: the same search, faster
        // (tests/explore_bounded.rs compares the two explorations whole).
        if *name == "snapshots" {
            continue;
        }
        assert!(
            *fewer > 0,
            "{name} never spared a run in {n} certifying searches"
        );
    }
}

/// The same searches, asserting what `no_reduction_changes_a_verdict_on_the_bundled_models`
/// only prints: no reduced search certifies with more runs than the plain one.
#[test]
#[ignore = "fails: with por on alone, 16 certifying searches of the bundled models make up to 3.6 % more runs than the plain search (lease_outlasts_request same_key: 1334 runs against 1288); the verdicts agree"]
fn reduced_searches_never_make_more_runs() {
    let models = bundled();
    let all = compare_all(&bundled_cases(&models));
    assert!(
        all.more_runs.is_empty(),
        "{} reduced searches certified with more runs than the plain one:\n{}",
        all.more_runs.len(),
        all.more_runs.join("\n")
    );
}

/// Most runs of one search of a generated model.
const GENERATED_MAX_RUNS: u64 = 50_000;

/// A small model from `models/ticket_lost_response.json`: one or two intents, one or two
/// workers, random losses and crashes off or at one in ten, the provider's dedup, in-flight
/// rule, lookup and lag, the executor's timeout, read-back and recovery sweeper (every three
/// timeouts, or none: with two workers, the one that lets them take each other's
/// operations), a scripted lost reply, pause or none; with a built-in design. The model's latency, processing and think time are made
/// constant (40, 100 and 500 ms): with their ranges, two intents on two workers make more
/// than 1 000 000 runs at one fault; constant, they also bring more events due at the same
/// instant, which is where the partial-order reduction acts.
///
/// With `ranged`, the timings keep ranges instead (latency 5–80 ms, processing 20–300 ms,
/// think time 200–1 500 ms), with one worker, the intents over one or two tenants (two
/// intents alone in their tenants are twins to the symmetry reduction), and the provider
/// may keep its key records
/// for a retention (a floor, or a floor and a maximum, from the first request or from
/// completion) and expire an in-progress record: the moments the timing equivalence
/// abstracts ([`retrylab::sim::Moments`]) then differ between runs that reach the same
/// state, and the constants they are compared with are in play.
fn generated(
    ranged: bool,
) -> impl proptest::strategy::Strategy<Value = (Value, &'static str, String)> {
    let ratio = || prop_oneof![Just(json!(0)), Just(json!("1/10"))];
    let workload = (
        1..=2u32,
        prop_oneof![
            Just(json!({ "min": 0, "max": 500 })),
            // Fixed, at a sum of the constant timings below, or not: events of the two
            // intents then fall due at the same instant, or never.
            prop::sample::select(vec![0u64, 40, 80, 140, 333, 500]).prop_map(|ms| json!(ms)),
        ],
        1..=2u32,
    );
    let provider = (
        prop_oneof![Just("by_key"), Just("none")],
        prop_oneof![Just("reject"), Just("wait"), Just("process_both")],
        prop_oneof![Just("none"), Just("by_key"), Just("search")],
        prop_oneof![Just(json!(0)), Just(json!({ "min": 0, "max": 2000 }))],
    );
    let executor = (
        prop_oneof![Just(1_000u64), Just(5_000)],
        prop_oneof![Just("by_key"), Just("search")],
        any::<bool>(),
    );
    // Scripted: none, the first reply lost, or the first worker's executor frozen for 3 s
    // from 5 ms (its events then all fall due at once when it wakes).
    let scripted = prop_oneof![
        Just(json!([])),
        Just(json!([{ "drop_reply": { "attempt": 1 } }])),
        Just(
            json!([{ "pause": { "component": "executor", "from_ms": 5, "duration_ms": 3000, "worker": 0 } }])
        ),
    ];
    (
        workload,
        (ratio(), ratio(), ratio()),
        provider,
        executor,
        scripted,
        prop::sample::select(design::names()),
        (
            prop::sample::select(vec![0u64, 1_500, 3_000]),
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(vec![0u64, 1_000]),
            1..=2u32,
        ),
    )
        .prop_map(
            move |(
                (intents, spacing, workers),
                (reply_loss, request_loss, crash),
                (dedup, in_flight, lookup, lag),
                (timeout, reconcile, sweep),
                faults,
                design,
                (retention, retention_max, from_completion, in_progress_expiry, tenants),
            )| {
                let root = Path::new(env!("CARGO_MANIFEST_DIR"));
                let text =
                    std::fs::read_to_string(root.join("models/ticket_lost_response.json")).unwrap();
                let mut m: Value = serde_json::from_str(&text).unwrap();
                let o = m.as_object_mut().unwrap();
                o.remove("$schema");
                o.remove("expect");
                m["name"] = json!("generated");
                m["designs"] = json!([design]);
                m["explore"] = json!({ "max_faults": 1 });
                let tenants = if ranged { tenants } else { 1 };
                // With ranges for every delay, a range of spacings too makes the plain
                // search of two intents pass its cap: one spacing, 0 (the twins') if drawn
                // as a range.
                let spacing = if ranged && spacing.is_object() {
                    json!(0)
                } else {
                    spacing
                };
                m["workload"] = json!({ "intents": intents, "spacing_ms": spacing, "tenants": tenants });
                let workers = if ranged { 1 } else { workers };
                if ranged {
                    m["network"]["latency_ms"] = json!({ "min": 5, "max": 80 });
                    m["provider"]["processing_ms"] = json!({ "min": 20, "max": 300 });
                    m["agent"]["think_ms"] = json!({ "min": 200, "max": 1500 });
                } else {
                    m["network"]["latency_ms"] = json!(40);
                    m["provider"]["processing_ms"] = json!(100);
                    m["agent"]["think_ms"] = json!(500);
                }
                m["workers"] = json!({ "count": workers, "journal": "durable",
                                       "crash": { "after_send": crash } });
                m["network"]["reply_loss"] = reply_loss;
                m["network"]["request_loss"] = request_loss;
                let p = &mut m["provider"];
                p["dedup"] = json!(dedup);
                p["in_flight"] = json!(in_flight);
                p["lookup"] = json!(lookup);
                p["visibility_lag_ms"] = lag;
                m["executor"]["timeout_ms"] = json!(timeout);
                m["executor"]["reconcile"] = json!(reconcile);
                if sweep {
                    m["executor"]["sweep_ms"] = json!(3 * timeout);
                }
                m["faults"] = faults;
                let mut kept = String::new();
                if ranged && retention > 0 {
                    p_set(&mut m, "retention_ms", json!(retention));
                    if retention_max {
                        p_set(&mut m, "retention_max_ms", json!(2 * retention));
                    }
                    if from_completion {
                        p_set(&mut m, "retention_from", json!("completion"));
                    }
                    kept = format!(
                        ", retention {retention}{} from {}",
                        if retention_max { " to twice that" } else { "" },
                        if from_completion { "completion" } else { "the first request" }
                    );
                }
                if ranged && in_progress_expiry > 0 {
                    p_set(&mut m, "in_progress_expiry_ms", json!(in_progress_expiry));
                    kept.push_str(&format!(", in-progress expiry {in_progress_expiry}"));
                }
                let about = format!(
                    "generated model ({}{intents} intents spaced {spacing} over {tenants} tenants, {workers} workers, reply loss {}, request loss {}, crash after send {}, dedup {dedup}, in flight {in_flight}, lookup {lookup} lag {}{kept}, timeout {timeout}, reconcile {reconcile}{}, scripted {})",
                    if ranged { "timing ranges, " } else { "" },
                    m["network"]["reply_loss"],
                    m["network"]["request_loss"],
                    m["workers"]["crash"]["after_send"],
                    m["provider"]["visibility_lag_ms"],
                    if sweep { ", a sweeper" } else { "" },
                    m["faults"],
                );
                (m, design, about)
            },
        )
}

/// Sets the provider's knob `name` of model `m`.
fn p_set(m: &mut Value, name: &str, value: Value) {
    m["provider"][name] = value;
}

/// Generated small models (fixed seed, see `tests/common/strategies.rs`), one fault: no
/// reduction changes a verdict or a certificate.
#[test]
fn no_reduction_changes_a_verdict_on_generated_models() {
    compare_generated(
        false,
        60,
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/reductions.txt"
        ),
    );
}

/// The same with timing ranges, retention and in-progress expiry ([`generated`]): where
/// the timing equivalence has moments to abstract.
#[test]
fn no_reduction_changes_a_verdict_on_generated_models_with_timing_ranges() {
    compare_generated(
        true,
        40,
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/reductions_ranged.txt"
        ),
    );
}

fn compare_generated(ranged: bool, cases: u32, regressions: &'static str) {
    let started = Instant::now();
    let all = std::sync::Mutex::new(Vec::new());
    let mut runner = proptest::test_runner::TestRunner::new(strategies::config(cases, regressions));
    let result = runner.run(&generated(ranged), |(m, design, about)| {
        let text = serde_json::to_string_pretty(&m).unwrap();
        let model = Model::from_json(&text, "generated").unwrap_or_else(|e| panic!("{e}"));
        let design = design::find(design).unwrap();
        let case = Case {
            about,
            path: model_path(&text),
            text: Some(text),
            properties: properties(&model, design.name()),
            model: &model,
            design,
            bound: Bound {
                max_faults: 1,
                max_runs: GENERATED_MAX_RUNS,
                ..Bound::default()
            },
        };
        let c = compare(&case);
        prop_assert!(
            c.changed.is_empty(),
            "a reduction changed a verdict (the model is written to {}):\n{}",
            case.path,
            c.changed.join("\n")
        );
        all.lock().unwrap().push(c);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let all = merge(all.into_inner().unwrap());
    eprintln!(
        "{} runs in {:.1} s; verdicts compared: {} violated, {} holding; not compared: {:?}; compared with fewer faults: {:?}; certifying searches (with fewer runs) per mode: {:?}; with more runs: {:?}",
        all.runs,
        started.elapsed().as_secs_f64(),
        all.compared.0,
        all.compared.1,
        all.skipped,
        all.lowered,
        all.fewer_runs,
        all.more_runs,
    );
    // Two intents taken up together with every delay a range: the plain search of a few
    // passes its cap even without a fault. No more than one case in seven.
    let most = if ranged { 6 } else { MAX_SKIPPED };
    assert!(
        all.skipped.len() <= most,
        "{} cases not compared, more than {most}:\n{}",
        all.skipped.len(),
        all.skipped.join("\n")
    );
    assert!(
        all.compared.0 > 0 && all.compared.1 > 0,
        "{:?}",
        all.compared
    );
}

/// Known violations, with no fault choice, one and two: found under every mode with the
/// same faults, and shrunk to a counterexample of the same length.
#[test]
fn a_known_violation_is_found_with_every_reduction() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, name, faults, shrunk_len) in [
        // The lost reply is scripted: no fault choice is needed.
        ("models/ticket_lost_response.json", "no_dedup", 0, 0),
        (
            "models/bad/lost_reply_rare.json",
            "new_key_after_replan",
            1,
            3,
        ),
        (
            "models/guarantees/authorization_survives.json",
            "journal",
            2,
            16,
        ),
    ] {
        let model = Model::load(&root.join(path)).unwrap();
        let design = design::find(name).unwrap();
        for (mode, r) in modes() {
            let bound = Bound {
                max_faults: 2,
                reductions: r,
                ..Bound::default()
            };
            let e = explore(
                &model,
                design,
                &[Property::NoDuplicate],
                Strategy::Dfs,
                bound,
            );
            let v = &e.violations[..];
            assert_eq!(v.len(), 1, "{path} {name} {mode}: {e:?}");
            assert_eq!(v[0].faults, faults, "{path} {name} {mode}: {e:?}");
            let s = shrink_values(&model, design, Property::NoDuplicate, &v[0].values, true)
                .unwrap_or_else(|| panic!("{path} {name} {mode}: the run does not replay"));
            assert_eq!(
                s.vector.0.len(),
                shrunk_len,
                "{path} {name} {mode}: shrunk to {:?}",
                s.vector
            );
        }
    }
}

/// The file's method: the verdicts of one search of every property, then of the properties
/// left, are those of searching each property alone, in every mode.
#[test]
fn peeling_is_searching_each_property_alone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut violated = 0;
    for path in [
        "models/ticket_lost_response.json",
        "models/bad/lost_reply_rare.json",
        "models/windows/two_workers_recovering.json",
    ] {
        let model = Model::load(&root.join(path)).unwrap();
        for design in model.designs.iter().filter_map(|d| design::find(d)) {
            let ps = properties(&model, design.name());
            for (mode, r) in modes() {
                let bound = Bound {
                    max_faults: 1,
                    reductions: r,
                    ..Bound::default()
                };
                let peeled = search(&model, design, &ps, bound);
                for &p in &ps {
                    let alone = search(&model, design, &[p], bound).verdicts[0].1;
                    assert_eq!(
                        peeled.verdict(p),
                        alone,
                        "{path} {} {p} {mode}",
                        design.name()
                    );
                    assert_ne!(
                        alone,
                        Verdict::Unknown,
                        "{path} {} {p} {mode}",
                        design.name()
                    );
                    violated += u32::from(alone != Verdict::Holds);
                }
            }
        }
    }
    assert!(violated > 0);
}
