//! An external executor's determinism, checked rather than assumed
//! (docs/executor-protocol.md, section 8). Each sampled seed runs twice in new processes,
//! and, as the command's lives are, once more in forked processes (`--executor-lives fork`)
//! or in reused ones that last served another seed and another worker (`reuse`); the
//! message streams must agree line for line. Every seed has a worker crash and restart
//! wherever the model can make one, forced when the seeded draw would not, so that what a
//! life leaves behind (or fails to reset) is compared too. The first difference is
//! reported with both versions, the path of the first differing field and a likely cause
//! read off its shape.

use std::cell::{Cell, RefCell};

use crate::design::Design;
use crate::model::Model;
use crate::sim::{Alternatives, Chooser, Purpose, RandomChooser};
use crate::world::World;

use super::Lives;

/// One protocol line of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Line {
    worker: u32,
    /// Sent to the process (else read from it).
    to_process: bool,
    text: String,
}

thread_local! {
    /// The lines of the run under way on this thread, while a check records them.
    static TRANSCRIPT: RefCell<Option<Vec<Line>>> = const { RefCell::new(None) };
    /// While a check runs its fresh runs: workers get new processes only.
    static FRESH: Cell<bool> = const { Cell::new(false) };
    /// While a check runs its reused runs: every worker gives its process back at the end
    /// of a run, and takes one another worker left.
    static ROTATE: Cell<bool> = const { Cell::new(false) };
}

/// Whether a check on this thread wants new processes only.
pub(crate) fn fresh_only() -> bool {
    FRESH.with(|f| f.get())
}

/// Whether a check on this thread passes reused processes between workers.
pub(crate) fn rotating() -> bool {
    ROTATE.with(|f| f.get())
}

/// Runs `f` with `flag` set.
fn with<T>(flag: &'static std::thread::LocalKey<Cell<bool>>, f: impl FnOnce() -> T) -> T {
    flag.with(|x| x.set(true));
    let out = f();
    flag.with(|x| x.set(false));
    out
}

/// Records a protocol line, if a check on this thread is recording. Message ids are left
/// out: they number the process's requests and decide nothing in the run, so a process that
/// goes on counting them after a reset is not told it leaks.
pub(crate) fn record(worker: u32, to_process: bool, text: &str) {
    TRANSCRIPT.with(|t| {
        if let Some(lines) = t.borrow_mut().as_mut() {
            let text = match serde_json::from_str::<serde_json::Value>(text) {
                Ok(serde_json::Value::Object(mut o)) => {
                    o.remove("msg_id");
                    o.remove("in_reply_to");
                    serde_json::Value::Object(o).to_string()
                }
                _ => text.to_string(),
            };
            lines.push(Line {
                worker,
                to_process,
                text,
            });
        }
    });
}

/// The model's seeded chooser, answering "crash" at the `target`-th worker-crash choice of
/// the run (from 0) unless a crash came first: a check's seed has a crash and a restart
/// wherever the model can make one. The seeded draw is taken either way, so the choices
/// after a forced crash are the seed's own.
struct Forcing {
    inner: RandomChooser,
    target: u32,
    /// Crash choices met.
    seen: u32,
    crashed: bool,
    forced: bool,
}

impl Chooser for Forcing {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let drawn = self.inner.choose(purpose, alternatives);
        if purpose != Purpose::WorkerCrash {
            return drawn;
        }
        let at = self.seen;
        self.seen += 1;
        // `ChooserExt::chance`: alternative 1 is the crash.
        let v = if !self.crashed && drawn == 0 && at == self.target && alternatives.len() == 2 {
            self.forced = true;
            1
        } else {
            drawn
        };
        self.crashed |= v == 1;
        v
    }
}

/// What a run of a check saw.
struct Transcript {
    lines: Vec<Line>,
    /// Crash choices the model offered.
    seen: u32,
    crashed: bool,
    forced: bool,
}

/// Runs `seed` on `world`, forcing a crash at choice `target`: its protocol lines.
fn transcript(world: &mut World<'_>, seed: u64, target: u32) -> Transcript {
    TRANSCRIPT.with(|t| *t.borrow_mut() = Some(Vec::new()));
    let mut ch = Forcing {
        inner: world.model().chooser(seed),
        target,
        seen: 0,
        crashed: false,
        forced: false,
    };
    world.run(&mut ch);
    let lines = TRANSCRIPT
        .with(|t| t.borrow_mut().take())
        .unwrap_or_default();
    Transcript {
        lines,
        seen: ch.seen,
        crashed: ch.crashed,
        forced: ch.forced,
    }
}

/// The seeds a check runs.
pub const SEEDS: [u64; 3] = [0, 1, 2];

/// Checks external design `design`, whose worker lives are `lives`, on `seeds` of `model`:
/// the line to print when every stream agreed, or the refusal naming the first difference.
pub fn check(
    model: &Model,
    design: &dyn Design,
    lives: Lives,
    seeds: &[u64],
) -> Result<String, String> {
    let new_run = |seed, target| {
        with(&FRESH, || {
            let mut w = World::new(model, design, false);
            transcript(&mut w, seed, target)
        })
    };
    // The third run's world, kept from seed to seed: its processes (reused ones) last
    // served the previous seed; the first seed's, a warm-up seed's.
    let mut third = (lives != Lives::Fresh).then(|| World::new(model, design, false));
    if lives == Lives::Reuse
        && let Some(w) = third.as_mut()
    {
        let warm = seeds.iter().max().map_or(0, |s| s.wrapping_add(1));
        with(&ROTATE, || transcript(w, warm, 0));
    }
    let (mut crashed, mut forced) = (0, 0);
    for (i, &seed) in seeds.iter().enumerate() {
        // Crash at the first or the second chance, from seed to seed; at the first when
        // the run offers only one.
        let mut target = (i % 2) as u32;
        let mut one = new_run(seed, target);
        if !one.crashed && one.seen > 0 && target >= one.seen {
            target = 0;
            one = new_run(seed, target);
        }
        crashed += usize::from(one.crashed);
        forced += usize::from(one.forced);
        // Two new processes: on the first seed (and every seed when lives are new
        // processes); a third run differs from the first on any seed where they would.
        let two = (i == 0 || third.is_none()).then(|| new_run(seed, target));
        if let Some(two) = &two
            && let Some(e) = diverge(&one.lines, &two.lines, Second::New)
        {
            return Err(report(model, design, seed, e));
        }
        let Some(w) = third.as_mut() else { continue };
        let (again, kind) = match lives {
            Lives::Reuse => (
                with(&ROTATE, || transcript(w, seed, target)),
                Second::Reused,
            ),
            _ => (transcript(w, seed, target), Second::Forked),
        };
        if let Some(e) = diverge(&one.lines, &again.lines, kind) {
            // Before the kind of process is blamed: do two new ones agree?
            let two = two.unwrap_or_else(|| new_run(seed, target));
            let e = diverge(&one.lines, &two.lines, Second::New).unwrap_or(e);
            return Err(report(model, design, seed, e));
        }
    }
    let n = seeds.len();
    let crashes = match (crashed, forced) {
        (0, _) => "the model makes no worker crash to restart from".to_string(),
        (c, 0) => format!("{c} with a worker crash and restart"),
        (c, f) => format!("{c} with a worker crash and restart, {f} of them forced"),
    };
    let runs = match lives {
        Lives::Fork => "each in new processes and in forked ones, the first twice in new ones",
        Lives::Reuse => {
            "each in new processes and in reused ones that last served another seed and worker, the first twice in new ones"
        }
        Lives::Fresh => "each twice in new processes",
    };
    Ok(format!(
        "determinism: {}: executor {}: {n} seed{} ({crashes}), {runs}: the message streams agree",
        model.name,
        design.name(),
        if n == 1 { "" } else { "s" },
    ))
}

/// What the second of two compared runs ran in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Second {
    /// New processes, as the first.
    New,
    /// Reused processes.
    Reused,
    /// Forks of a zygote.
    Forked,
}

/// Where two streams first differ.
struct Divergence {
    index: usize,
    worker: u32,
    to_process: bool,
    one: String,
    two: String,
    second: Second,
}

fn diverge(a: &[Line], b: &[Line], second: Second) -> Option<Divergence> {
    let n = a.len().max(b.len());
    (0..n).find_map(|i| {
        let (x, y) = (a.get(i), b.get(i));
        if x == y {
            return None;
        }
        let any = x.or(y)?;
        let text = |l: Option<&Line>| {
            l.map_or("(no message: the stream ended)".to_string(), |l| {
                l.text.clone()
            })
        };
        Some(Divergence {
            index: i + 1,
            worker: any.worker,
            to_process: any.to_process,
            one: text(x),
            two: text(y),
            second,
        })
    })
}

fn report(model: &Model, design: &dyn Design, seed: u64, d: Divergence) -> String {
    let (first, second) = match d.second {
        Second::Forked => ("new process   ", "forked process"),
        Second::Reused => ("new process   ", "reused process"),
        Second::New => ("run 1", "run 2"),
    };
    let (field, cause) = cause(&d);
    let field = field.map_or(String::new(), |f| format!(", first at field {f}"));
    format!(
        "executor {} is not deterministic (model {}, seed {seed}, worker {}) [protocol error 30]\n  \
         two runs with the same inputs diverged at message #{} ({}){field}:\n    {first}: {}\n    {second}: {}\n  \
         likely cause: {cause}\n  \
         replay, explore and shrinking need an executor that is a function of its messages; \
         --no-determinism-check runs it unchecked (docs/executor-protocol.md, section 8)",
        design.name(),
        model.name,
        d.worker,
        d.index,
        if d.to_process {
            "simulator -> executor"
        } else {
            "executor -> simulator"
        },
        d.one,
        d.two,
    )
}

/// The path of the first field that differs (`headers.idempotency-key`, `body.amount`, or
/// `type` when the messages are of different kinds), if both versions are JSON objects,
/// and a likely cause read off the difference's shape.
fn cause(d: &Divergence) -> (Option<String>, String) {
    let parse = |t: &str| serde_json::from_str::<serde_json::Value>(t).ok();
    let by_kind = kind_cause(d.second);
    let (Some(a), Some(b)) = (parse(&d.one), parse(&d.two)) else {
        return (None, by_kind.into());
    };
    if a["type"] != b["type"] {
        return (Some("type".into()), by_kind.into());
    }
    let mut differing = Vec::new();
    differences(&a, &b, String::new(), &mut differing);
    let Some((first, x, y)) = differing.first() else {
        return (None, by_kind.into());
    };
    let field = first.trim_start_matches('.').to_string();
    // A reused or forked process is blamed only once two new ones agreed on the seed
    // (`check`): then the kind of process is the cause, whatever the value's shape (a key
    // an earlier life drew and kept in memory looks random too).
    if d.second != Second::New {
        return (Some(field), by_kind.into());
    }
    if looks_random(x) || looks_random(y) {
        return (
            Some(field.clone()),
            format!(
                "{field} holds a key-shaped value that differs: an entropy source retrylab does \
                 not serve (the kernel's /proc/sys/kernel/random/uuid, a system call made without \
                 libc, the CPU's RDRAND instruction, a process id or a memory address); draw it \
                 from what retrylab serves from the run's seed (random, uuid.uuid4, os.urandom, \
                 secrets, /dev/urandom, getrandom; Node's crypto) or derive it from the call"
            ),
        );
    }
    if looks_timed(first) {
        return (
            Some(field.clone()),
            format!(
                "{field} holds a time-shaped value that differs: a clock retrylab does not serve \
                 (a system call made without libc, a vDSO page read directly, a static binary), or \
                 jitter from an entropy source retrylab does not serve"
            ),
        );
    }
    (Some(field), by_kind.into())
}

/// A likely cause of a difference that has no telling shape, by what the second run ran in.
fn kind_cause(second: Second) -> &'static str {
    match second {
        Second::Reused => {
            "state left from an earlier life in a reused process (a cache, a counter, a \
             client object): forget it in the client's on_reset hook, or run without \
             --executor-lives reuse"
        }
        Second::Forked => {
            "state a forked process inherits from its zygote that a new one does not have (a \
             thread started at import, which a fork does not copy; a value read from the \
             process id; something done in `init` only once per process)"
        }
        Second::New => {
            "the order, the number or the content of messages differs between two new \
             processes: threads, hash order, real I/O, the process's id, an entropy source or \
             a clock retrylab does not serve"
        }
    }
}

/// A field whose name says it holds a time: `ms`, `at`, `time`, `date`, `timestamp`.
fn looks_timed(path: &str) -> bool {
    let leaf = path.rsplit('.').next().unwrap_or(path).to_ascii_lowercase();
    leaf.ends_with("ms")
        || leaf.ends_with("_at")
        || leaf.contains("time")
        || leaf.contains("date")
        || leaf == "ts"
}

/// The leaves where `a` and `b` differ: (path, a's text, b's text).
fn differences(
    a: &serde_json::Value,
    b: &serde_json::Value,
    path: String,
    out: &mut Vec<(String, String, String)>,
) {
    match (a, b) {
        (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
            for (k, v) in x {
                let w = y.get(k).unwrap_or(&serde_json::Value::Null);
                differences(v, w, format!("{path}.{k}"), out);
            }
            for (k, w) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                differences(&serde_json::Value::Null, w, format!("{path}.{k}"), out);
            }
        }
        (serde_json::Value::String(x), serde_json::Value::String(y)) if x != y => {
            // A JSON body inside a string: compare its fields too.
            match (
                serde_json::from_str::<serde_json::Value>(x),
                serde_json::from_str::<serde_json::Value>(y),
            ) {
                (Ok(p), Ok(q)) if p.is_object() => differences(&p, &q, path, out),
                _ => out.push((path, x.clone(), y.clone())),
            }
        }
        _ if a != b => out.push((path, a.to_string(), b.to_string())),
        _ => {}
    }
}

/// A UUID, or a long run of hex or base64 digits.
fn looks_random(s: &str) -> bool {
    let s = s.trim_matches('"');
    let hexish = s.chars().filter(|c| c.is_ascii_hexdigit()).count();
    let uuid = s.len() == 36 && s.chars().filter(|&c| c == '-').count() == 4;
    uuid || (s.len() >= 16 && hexish * 10 >= s.len() * 9)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line {
        Line {
            worker: 0,
            to_process: false,
            text: text.to_string(),
        }
    }

    fn cause_of(one: &str, two: &str, second: Second) -> (Option<String>, String) {
        cause(&diverge(&[line(one)], &[line(two)], second).unwrap())
    }

    #[test]
    fn causes_read_off_the_shape_of_the_first_differing_field() {
        let key = |k: &str| {
            format!(
                r#"{{"type":"http","msg_id":1,"body":"{{\"n\":1}}","headers":{{"idempotency-key":"{k}"}}}}"#
            )
        };
        let (one, two) = (
            key("ad65c147-1111-4c2b-9a51-0d8a4a3f2e10"),
            key("bb742483-2222-4c2b-9a51-0d8a4a3f2e10"),
        );
        let (field, why) = cause_of(&one, &two, Second::New);
        assert_eq!(field.as_deref(), Some("headers.idempotency-key"));
        assert!(
            why.starts_with("headers.idempotency-key holds a key-shaped value that differs: an entropy source retrylab does not serve"),
            "{why}"
        );
        // The same difference where two new processes agreed: a key an earlier life kept.
        let (field, why) = cause_of(&one, &two, Second::Reused);
        assert_eq!(field.as_deref(), Some("headers.idempotency-key"));
        assert!(why.starts_with("state left from an earlier life in a reused process"));
        // A JSON body inside a string: its own fields' paths.
        let (field, _) = cause_of(
            r#"{"type":"http","body":"{\"ref\":\"7f3a9c2e11b04d6e8a5f\"}"}"#,
            r#"{"type":"http","body":"{\"ref\":\"0c1d2e3f4a5b6c7d8e9f\"}"}"#,
            Second::New,
        );
        assert_eq!(field.as_deref(), Some("body.ref"));
        let (field, why) = cause_of(
            r#"{"type":"sleep","msg_id":2,"ms":730}"#,
            r#"{"type":"sleep","msg_id":2,"ms":412}"#,
            Second::New,
        );
        assert_eq!(field.as_deref(), Some("ms"));
        assert!(
            why.starts_with(
                "ms holds a time-shaped value that differs: a clock retrylab does not serve"
            ),
            "{why}"
        );
        let (field, why) = cause_of(
            r#"{"type":"sleep","msg_id":2,"ms":730}"#,
            r#"{"type":"kv","msg_id":2,"op":"get","key":"a"}"#,
            Second::New,
        );
        assert_eq!(field.as_deref(), Some("type"));
        assert!(why.starts_with("the order, the number or the content of messages"));
        // A small value with no telling shape: the kind of process decides.
        let (field, why) = cause_of(
            r#"{"type":"http","headers":{"idempotency-key":"k1"}}"#,
            r#"{"type":"http","headers":{"idempotency-key":"k3"}}"#,
            Second::Reused,
        );
        assert_eq!(field.as_deref(), Some("headers.idempotency-key"));
        assert!(why.starts_with("state left from an earlier life in a reused process"));
        // A field only the second version has.
        let (field, _) = cause_of(
            r#"{"type":"log"}"#,
            r#"{"type":"log","extra":1}"#,
            Second::Forked,
        );
        assert_eq!(field.as_deref(), Some("extra"));
        let d = diverge(&[line("a"), line("b")], &[line("a")], Second::Reused).unwrap();
        assert_eq!(d.index, 2);
        assert_eq!(d.two, "(no message: the stream ended)");
        assert!(cause(&d).1.starts_with("state left from an earlier life"));
        assert!(diverge(&[line("a")], &[line("a")], Second::New).is_none());
    }

    #[test]
    fn the_forcing_chooser_crashes_at_its_target_unless_a_crash_came_first() {
        let forcing = |target| Forcing {
            inner: RandomChooser::new(0),
            target,
            seen: 0,
            crashed: false,
            forced: false,
        };
        let answers = |f: &mut Forcing, weights: &[u32]| -> Vec<u64> {
            (0..3)
                .map(|_| f.choose(Purpose::WorkerCrash, Alternatives::Weighted(weights)))
                .collect()
        };
        // A crash almost never drawn: forced at the second chance only.
        let mut f = forcing(1);
        assert_eq!(answers(&mut f, &[u32::MAX, 1]), vec![0, 1, 0]);
        assert!(f.crashed && f.forced && f.seen == 3);
        // A crash almost always drawn: the first is the seed's own; nothing is forced.
        let mut f = forcing(1);
        assert_eq!(answers(&mut f, &[1, u32::MAX]), vec![1, 1, 1]);
        assert!(f.crashed && !f.forced);
        // Other choices pass through.
        let mut f = forcing(0);
        let mut plain = RandomChooser::new(0);
        assert_eq!(
            f.choose(Purpose::Latency, Alternatives::Uniform(1000)),
            plain.choose(Purpose::Latency, Alternatives::Uniform(1000))
        );
        assert_eq!(f.seen, 0);
    }
}
