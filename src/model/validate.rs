//! Checks a parsed model for values that are impossible or inconsistent.
//!
//! Each check yields `(json path, message)`; the caller turns paths into positions.

use super::catalog::Catalog;
use super::schema::*;
use crate::check::Property;

type Problems = Vec<(String, String)>;

/// The longest duration a model may name: about 31 years of virtual time. Far beyond any
/// scenario, and far from overflowing when durations are added to the clock.
pub const MAX_MS: u64 = 1_000_000_000_000;

/// Most intents in one run: the largest the benchmarks use. A run at this bound takes about
/// 90 000 events with the simplest agent, a tenth of [`MAX_EVENTS`](crate::world::MAX_EVENTS).
/// It also bounds the operations a sweeper looks at on each of its rounds.
pub const MAX_INTENTS: u32 = 10_000;

/// Most tenants: more tenants than intents change nothing (intents take them in turn).
pub const MAX_TENANTS: u32 = MAX_INTENTS;

/// Most executor workers. Every run starts each of them, so their number sizes the memory
/// and the time of every run, faults or not.
pub const MAX_WORKERS: u32 = 1_000;

/// Most random worker crashes per run (`workers.max_crashes`). A crash and the recovery
/// after it look at every operation and send of the run so far, so crashes multiply the
/// cost of a long run.
pub const MAX_CRASHES: u32 = 100;

/// Most tool calls per intent (`agent.max_calls`) and read-backs per agent call
/// (`executor.reads`).
pub const MAX_CALLS: u32 = 1_000;

/// Most scripted faults. The world looks them up at each send and each event (pauses), and
/// a scripted crash costs what a random one does, so their number multiplies the cost of a
/// run.
pub const MAX_FAULTS: usize = 100;

/// Most runs of an exhaustive search (`explore.max_runs`): a hundred times the default.
pub const MAX_EXPLORE_RUNS: u64 = 100_000_000;

/// `designs`: the designs the model's names must be among; `None` when they were checked
/// already (a model read and checked, then changed elsewhere).
pub(super) fn check(m: &Model, designs: Option<&dyn Catalog>) -> Problems {
    let mut p = Problems::new();
    if let Ok(v) = serde_json::to_value(m) {
        durations(&mut p, "", &v, false);
    }
    positive(&mut p, "horizon_ms", m.horizon_ms);
    if let (Some(known), DesignList::Listed(names)) = (designs, &m.design_list) {
        self::designs(&mut p, names, known);
    }
    let w = &m.workload;
    within(
        &mut p,
        "workload.intents",
        w.intents.into(),
        MAX_INTENTS.into(),
    );
    within(
        &mut p,
        "workload.tenants",
        w.tenants.into(),
        MAX_TENANTS.into(),
    );
    within(
        &mut p,
        "workload.steps",
        w.steps.into(),
        crate::vocab::protocol::MAX_STEPS.into(),
    );
    agent(&mut p, &m.agent);
    executor(&mut p, &m.executor);
    within(
        &mut p,
        "workers.count",
        m.workers.count.into(),
        MAX_WORKERS.into(),
    );
    at_most(
        &mut p,
        "workers.max_crashes",
        m.workers.max_crashes.into(),
        MAX_CRASHES.into(),
    );
    if m.workers.redelivery_ms == Some(0) {
        p.push((
            "workers.redelivery_ms".into(),
            "must be at least 1: a call redelivered at once would be redelivered forever; leave the field out for no redelivery".into(),
        ));
    }
    provider(&mut p, &m.provider);
    if m.faults.len() > MAX_FAULTS {
        p.push((
            "faults".into(),
            format!(
                "{} faults is more than the limit of {MAX_FAULTS}",
                m.faults.len()
            ),
        ));
    }
    for (i, f) in m.faults.iter().enumerate().take(MAX_FAULTS) {
        fault(&mut p, i, f, m.workers.count);
    }
    expectations(&mut p, m, designs);
    if let Some(e) = &m.explore {
        if e.max_faults > MAX_EXPLORE_FAULTS {
            p.push((
                "explore.max_faults".into(),
                format!(
                    "{} faults per run is more than the limit of {MAX_EXPLORE_FAULTS} for an exhaustive search; sample seeds with `run` instead",
                    e.max_faults
                ),
            ));
        }
        within(&mut p, "explore.max_runs", e.max_runs, MAX_EXPLORE_RUNS);
    }
    p
}

/// Every expectation names a design the model lists and known properties, each once.
fn expectations(p: &mut Problems, m: &Model, designs: Option<&dyn Catalog>) {
    for (name, e) in &m.expect {
        if !m.designs.contains(name) {
            let why = match designs {
                Some(known) if known.listing(name).is_none() => format!(
                    "unknown design; known designs: {}",
                    known.names().join(", ")
                ),
                _ => "is not listed in `designs`; list it there to check it".to_string(),
            };
            p.push((format!("expect.{name}"), format!("design \"{name}\" {why}")));
        }
        if let Some(runs) = e.explore_max_runs {
            let path = format!("expect.{name}.explore_max_runs");
            if m.explore.is_none() {
                p.push((
                    path,
                    "the model has no `explore` bound, so `check` searches nothing; add \"explore\": {\"max_faults\": K} or remove this field".into(),
                ));
            } else if e.hold.is_empty() {
                p.push((
                    path,
                    "the design has no `hold` list: `check` searches only for violations of properties that must hold".into(),
                ));
            } else {
                within(p, &path, runs, MAX_EXPLORE_RUNS);
            }
        }
        let mut seen: Vec<Property> = Vec::new();
        for (list, names) in [("hold", &e.hold), ("violate", &e.violate)] {
            for (i, text) in names.iter().enumerate() {
                let path = format!("expect.{name}.{list}[{i}]");
                match parse_for(text, name, designs) {
                    Err(why) => p.push((path, why)),
                    Ok(prop) if seen.contains(&prop) => {
                        p.push((path, format!("{prop} is named twice for this design")))
                    }
                    Ok(prop) => seen.push(prop),
                }
            }
        }
    }
}

/// A property named in `expect` for `design`: a built-in one, or one that design brings (a
/// property another design brings is refused, naming the design that brings it).
fn parse_for(text: &str, design: &str, designs: Option<&dyn Catalog>) -> Result<Property, String> {
    let Some(registry) = designs else {
        return text.parse();
    };
    let own = registry.listing(design).map_or(&[][..], |d| d.properties);
    let own: Vec<&'static crate::check::PropertyDef> = own.iter().collect();
    match Property::parse_with(text, &own) {
        Ok(p) => Ok(p),
        Err(why) => match registry.property_owner(text.trim()) {
            Some(owner) => Err(format!(
                "property \"{}\" is brought by design \"{owner}\", not by \"{design}\"; expect it of {owner}",
                text.trim()
            )),
            None => Err(why),
        },
    }
}

/// Every duration (a field ending in `_ms`, a fault's `ms`, and the bounds of a range under
/// such a field) must be at most [`MAX_MS`].
fn durations(p: &mut Problems, path: &str, v: &serde_json::Value, in_ms: bool) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        serde_json::Value::Object(map) => {
            for (k, child) in map {
                let ms = k.ends_with("_ms") || k == "ms" || (in_ms && (k == "min" || k == "max"));
                durations(p, &join(k), child, ms);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                durations(p, &format!("{path}[{i}]"), child, false);
            }
        }
        serde_json::Value::Number(n) if in_ms && n.as_u64().is_some_and(|x| x > MAX_MS) => {
            p.push((
                path.to_string(),
                format!("{n} ms is longer than the limit of {MAX_MS} ms (about 31 years)"),
            ));
        }
        _ => {}
    }
}

fn positive(p: &mut Problems, path: &str, v: u64) {
    if v == 0 {
        p.push((path.into(), "must be at least 1".into()));
    }
}

/// A count that must be at most `max`.
fn at_most(p: &mut Problems, path: &str, v: u64, max: u64) {
    if v > max {
        p.push((path.into(), format!("{v} is more than the limit of {max}")));
    }
}

/// A count from 1 to `max`.
fn within(p: &mut Problems, path: &str, v: u64, max: u64) {
    positive(p, path, v);
    at_most(p, path, v, max);
}

fn designs(p: &mut Problems, names: &[String], known: &dyn Catalog) {
    if names.is_empty() {
        p.push((
            "designs".into(),
            format!(
                "list at least one design; known designs: {}",
                known.names().join(", ")
            ),
        ));
    }
    for (i, name) in names.iter().enumerate() {
        if known.listing(name).is_none() {
            p.push((
                format!("designs[{i}]"),
                format!(
                    "unknown design \"{name}\"; known designs: {}",
                    known.names().join(", ")
                ),
            ));
        } else if names[..i].contains(name) {
            p.push((
                format!("designs[{i}]"),
                format!("design \"{name}\" is listed twice"),
            ));
        }
    }
}

fn agent(p: &mut Problems, a: &AgentModel) {
    positive(p, "agent.tool_timeout_ms", a.tool_timeout_ms);
    within(p, "agent.max_calls", a.max_calls.into(), MAX_CALLS.into());
    for (field, r) in [("on_failure", &a.on_failure), ("on_unknown", &a.on_unknown)] {
        if r.weights().iter().all(|&w| w == 0) {
            p.push((
                format!("agent.{field}"),
                "every reaction weight is 0; give at least one of retry_same, replan, change_args, give_up, ask_user a positive weight".into(),
            ));
        }
    }
}

/// More transport attempts than this is a configuration mistake, and it keeps backoff
/// arithmetic far from overflow. Each retry layer of `layered_retries` has the same limit.
pub const MAX_ATTEMPTS: u32 = 32;

fn executor(p: &mut Problems, e: &ExecutorModel) {
    within(
        p,
        "executor.attempts",
        e.attempts.into(),
        MAX_ATTEMPTS.into(),
    );
    positive(p, "executor.timeout_ms", e.timeout_ms);
    within(p, "executor.reads", e.reads.into(), MAX_CALLS.into());
    positive(p, "executor.poll_ms", e.poll_ms);
    positive(p, "executor.lease_ms", e.lease_ms);
    within(
        p,
        "executor.layers.tool",
        e.layers.tool.into(),
        MAX_ATTEMPTS.into(),
    );
    within(
        p,
        "executor.layers.queue",
        e.layers.queue.into(),
        MAX_ATTEMPTS.into(),
    );
    if let Some(sweep) = e.sweep_ms
        && sweep <= e.timeout_ms
    {
        p.push((
            "executor.sweep_ms".into(),
            format!(
                "{sweep} is not longer than timeout_ms {}: the sweeper would take operations whose request is still out",
                e.timeout_ms
            ),
        ));
    }
    if e.deadline_ms == Some(0) {
        p.push((
            "executor.deadline_ms".into(),
            "must be at least 1; leave it out for no deadline".into(),
        ));
    }
    if e.assumed_retention_ms == Some(0) {
        p.push((
            "executor.assumed_retention_ms".into(),
            "must be at least 1; leave it out when keys are believed to be kept forever".into(),
        ));
    }
    if e.max_backoff_ms < e.backoff_ms {
        p.push((
            "executor.max_backoff_ms".into(),
            format!("{} is below backoff_ms {}", e.max_backoff_ms, e.backoff_ms),
        ));
    }
    if let Some(stack) = &e.stack {
        p.extend(stack.problems("executor.stack", false));
    }
    if let Some(preset) = &e.preset {
        p.extend(preset_problems(e, preset));
    } else if let Some(first) = e.overrides.keys().next() {
        p.push((
            format!("executor.overrides.{first}"),
            "overrides change the layers of an executor preset: give executor.preset too (or write the layer in executor.stack)".into(),
        ));
    }
    if e.reconcile == Lookup::None {
        p.push((
            "executor.reconcile".into(),
            "\"none\" is not a way to read back; use by_key, by_resource_id or search".into(),
        ));
    }
}

fn provider(p: &mut Problems, v: &ProviderModel) {
    p.extend(v.http.problems());
    p.extend(v.should_retry.problems());
    if v.retention_ms == Some(0) {
        p.push((
            "provider.retention_ms".into(),
            "must be at least 1; leave the field out for keys that are kept forever".into(),
        ));
    }
    match (v.retention_ms, v.retention_max_ms) {
        (None, Some(_)) => p.push((
            "provider.retention_max_ms".into(),
            "needs retention_ms: it is the latest moment of pruning after the retention floor; set retention_ms too".into(),
        )),
        (Some(floor), Some(max)) if max < floor => p.push((
            "provider.retention_max_ms".into(),
            format!("{max} is below retention_ms {floor}: records cannot be pruned before the floor"),
        )),
        _ => {}
    }
    if v.dedup == Dedup::None && v.require_key {
        p.push((
            "provider.require_key".into(),
            "a provider without deduplication (dedup \"none\") cannot require a key".into(),
        ));
    }
}

fn fault(p: &mut Problems, i: usize, f: &Fault, workers: u32) {
    let at = |field: &str| format!("faults[{i}].{field}");
    let attempt = match f {
        Fault::DropRequest { attempt } => Some(("drop_request", *attempt)),
        Fault::DropReply { attempt } => Some(("drop_reply", *attempt)),
        Fault::CrashWorker { attempt, .. } => Some(("crash_worker", *attempt)),
        Fault::CrashProvider { attempt } => Some(("crash_provider", *attempt)),
        Fault::SlowProcessing { attempt, .. } => Some(("slow_processing", *attempt)),
        Fault::Reroute { attempt, .. } => Some(("reroute", *attempt)),
        Fault::Reject { attempt } => Some(("reject", *attempt)),
        Fault::Pause { .. } | Fault::CrashAtCommit { .. } => None,
    };
    if let Some((kind, 0)) = attempt {
        p.push((
            at(&format!("{kind}.attempt")),
            "attempts are numbered from 1".into(),
        ));
    }
    match f {
        Fault::CrashWorker {
            point: CrashPoint::AtCommit,
            ..
        } => p.push((
            at("crash_worker.point"),
            "at_commit is not a point of an attempt: a crash at a storage commit is scripted as crash_at_commit {commit: N} (the run's Nth commit), or drawn with workers.crash.at_commit".into(),
        )),
        Fault::CrashWorker {
            worker: Some(w), ..
        } if *w >= workers => p.push((
            at("crash_worker.worker"),
            format!("worker {w} does not exist: workers.count is {workers} (workers are numbered from 0)"),
        )),
        Fault::CrashAtCommit { commit: 0, .. } => p.push((
            at("crash_at_commit.commit"),
            "storage commits are numbered from 1".into(),
        )),
        Fault::CrashAtCommit {
            worker: Some(w), ..
        } if *w >= workers => p.push((
            at("crash_at_commit.worker"),
            format!("worker {w} does not exist: workers.count is {workers} (workers are numbered from 0)"),
        )),
        Fault::Pause { duration_ms: 0, .. } => {
            p.push((at("pause.duration_ms"), "must be at least 1".into()))
        }
        Fault::Pause {
            worker: Some(w),
            component,
            ..
        } => {
            if *component != Paused::Executor {
                p.push((
                    at("pause.worker"),
                    "a worker can only be named when the executor is paused".into(),
                ));
            } else if *w >= workers {
                p.push((
                    at("pause.worker"),
                    format!("worker {w} does not exist: workers.count is {workers}"),
                ));
            }
        }
        _ => {}
    }
}

/// What is wrong with `executor.preset` (and `executor.overrides`, which change its layers).
fn preset_problems(e: &ExecutorModel, preset: &PresetRef) -> Vec<(String, String)> {
    let names = preset.names();
    let at = |i: usize| match preset {
        PresetRef::One(_) => "executor.preset".to_string(),
        PresetRef::Stacked(_) => format!("executor.preset[{i}]"),
    };
    let mut p = Vec::new();
    if names.is_empty() {
        p.push((
            "executor.preset".into(),
            "an empty list; name one executor preset or several (retrylab executors)".into(),
        ));
    }
    let mut found = Vec::new();
    for (i, name) in names.iter().enumerate() {
        match super::executor_preset::find(name) {
            Some(preset) => found.push(preset),
            None => p.push((
                at(i),
                format!(
                    "unknown executor preset \"{name}\"; known presets (retrylab executors): {}",
                    super::executor_preset::names().join(", ")
                ),
            )),
        }
    }
    if e.stack.is_some() {
        p.push((
            "executor.preset".into(),
            "give a preset or a stack, not both: the preset is a stack".into(),
        ));
    }
    if !p.is_empty() {
        return p;
    }
    let stacked = super::stack::StackSpec {
        layers: found.iter().flat_map(|f| f.stack.layers.clone()).collect(),
        gives_up: found[0].stack.gives_up,
    };
    if found.len() > 1 {
        // A preset's own layers read without problems: what is left is how they stack (a
        // client timeout above the innermost layer, too many layers).
        for (path, message) in stacked.problems("", false) {
            p.push((
                "executor.preset".into(),
                format!("stacked, {path}: {message}"),
            ));
        }
    }
    p.extend(stacked.override_problems("executor.overrides", &e.overrides));
    p
}
