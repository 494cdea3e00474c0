//! An external executor's determinism, checked rather than assumed
//! (docs/executor-protocol.md, section 8): each sampled seed runs twice in fresh processes
//! and once more in a reused one (with `--executor-fork-restarts`, in forks of a zygote),
//! and the message streams both ways must agree line for line. The first difference is
//! reported with both versions and a likely cause.

use std::cell::RefCell;

use crate::design::Design;
use crate::model::Model;
use crate::world::World;

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
    static FRESH: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether a process was forked from a zygote on this thread since the last look.
    static FORKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Notes that a worker life on this thread runs in a fork of a zygote.
pub(crate) fn note_fork() {
    FORKED.with(|f| f.set(true));
}

/// Whether a check on this thread wants new processes only.
pub(crate) fn fresh_only() -> bool {
    FRESH.with(|f| f.get())
}

/// Runs `f` with new processes only.
fn fresh<T>(f: impl FnOnce() -> T) -> T {
    FRESH.with(|x| x.set(true));
    let out = f();
    FRESH.with(|x| x.set(false));
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

/// Runs `seed` on `world` and returns its protocol lines.
fn transcript(world: &mut World<'_>, seed: u64) -> Vec<Line> {
    TRANSCRIPT.with(|t| *t.borrow_mut() = Some(Vec::new()));
    let mut random = world.model().chooser(seed);
    world.run(&mut random);
    TRANSCRIPT
        .with(|t| t.borrow_mut().take())
        .unwrap_or_default()
}

/// The seeds a check runs.
pub const SEEDS: [u64; 5] = [0, 1, 2, 3, 4];

/// Checks external design `design` on `seeds` of `model`: the line to print when every
/// stream agreed, or the first difference.
pub fn check(model: &Model, design: &dyn Design, seeds: &[u64]) -> Result<String, String> {
    let mut forked = false;
    for &seed in seeds {
        let mut first = fresh(|| World::new(model, design, false));
        let fresh_run = fresh(|| transcript(&mut first, seed));
        // The same processes again, reset by their `start` (and a crash's restart takes a
        // process left by another worker, as outside the check); with fork restarts, forks
        // of the zygote instead.
        FORKED.with(|f| f.set(false));
        let reused = transcript(&mut first, seed);
        forked = forked || FORKED.with(|f| f.replace(false));
        drop(first);
        let again = fresh(|| {
            let mut second = World::new(model, design, false);
            transcript(&mut second, seed)
        });
        if let Some(e) = diverge(&fresh_run, &again, false) {
            return Err(report(model, design, seed, e));
        }
        if let Some(mut e) = diverge(&fresh_run, &reused, true) {
            e.forked = forked;
            return Err(report(model, design, seed, e));
        }
    }
    Ok(format!(
        "determinism: {}: executor {}: {} seeds, each twice in fresh processes and once in a {} one: the message streams agree",
        model.name,
        design.name(),
        seeds.len(),
        if forked { "forked" } else { "reused" }
    ))
}

/// Where two streams first differ.
struct Divergence {
    index: usize,
    worker: u32,
    to_process: bool,
    one: String,
    two: String,
    reused: bool,
    /// The second run's processes were forked from a zygote, not reused.
    forked: bool,
}

fn diverge(a: &[Line], b: &[Line], reused: bool) -> Option<Divergence> {
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
            reused,
            forked: false,
        })
    })
}

fn report(model: &Model, design: &dyn Design, seed: u64, d: Divergence) -> String {
    let (first, second) = if d.forked {
        ("fresh process ", "forked process")
    } else if d.reused {
        ("fresh process ", "reused process")
    } else {
        ("run 1", "run 2")
    };
    format!(
        "executor {} is not deterministic (model {}, seed {seed}, worker {}) [protocol error 30]\n  \
         two runs with the same inputs diverged at message #{} ({}):\n    {first}: {}\n    {second}: {}\n  \
         likely cause: {}\n  replay, explore and shrinking need an executor that is a function of its messages",
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
        cause(&d)
    )
}

/// A likely cause, read off the two versions of the first differing message.
fn cause(d: &Divergence) -> &'static str {
    if d.forked {
        return "state a forked process inherits from its zygote that a new one does not have \
                (a thread started at import, which a fork does not copy; a value read from the \
                process id; something done in `init` only once per process)";
    }
    if d.reused {
        return "state left from the previous run in a reused process (a cache, a counter, a \
                connection pool): reset it in the client's on_reset hook";
    }
    let parse = |t: &str| serde_json::from_str::<serde_json::Value>(t).ok();
    let (Some(a), Some(b)) = (parse(&d.one), parse(&d.two)) else {
        return "the order or the number of messages differs: threads, hash order or real I/O";
    };
    if a["type"] != b["type"] {
        return "the order or the number of messages differs: threads, hash order or real I/O";
    }
    let mut differing = Vec::new();
    differences(&a, &b, String::new(), &mut differing);
    if differing
        .iter()
        .any(|(_, x, y)| looks_random(x) || looks_random(y))
    {
        return "a value from an unseeded entropy source (uuid.uuid4, os.urandom, SystemRandom, \
                crypto.randomUUID) outside the client's patches: draw it from the client's seeded \
                randomness";
    }
    if differing
        .iter()
        .any(|(k, _, _)| k.ends_with("ms") || k.contains("time") || k.contains("date"))
    {
        return "a sleep length or a timestamp: the real clock, or jitter from an unseeded RNG";
    }
    "a value that differs between processes: an unseeded entropy source, the real clock, \
     threads or hash order"
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

    fn cause_of(one: &str, two: &str) -> &'static str {
        let d = diverge(&[line(one)], &[line(two)], false).unwrap();
        cause(&d)
    }

    #[test]
    fn causes_read_off_the_difference() {
        let key = |k: &str| {
            format!(r#"{{"type":"http","msg_id":1,"headers":{{"idempotency-key":"{k}"}}}}"#)
        };
        assert!(
            cause_of(
                &key("ad65c147-1111-4c2b-9a51-0d8a4a3f2e10"),
                &key("bb742483-2222-4c2b-9a51-0d8a4a3f2e10")
            )
            .starts_with("a value from an unseeded entropy source")
        );
        assert!(
            cause_of(
                r#"{"type":"sleep","msg_id":2,"ms":730}"#,
                r#"{"type":"sleep","msg_id":2,"ms":412}"#
            )
            .starts_with("a sleep length or a timestamp")
        );
        assert!(
            cause_of(
                r#"{"type":"sleep","msg_id":2,"ms":730}"#,
                r#"{"type":"kv","msg_id":2,"op":"get","key":"a"}"#
            )
            .starts_with("the order or the number of messages")
        );
        let d = diverge(&[line("a"), line("b")], &[line("a")], true).unwrap();
        assert_eq!(d.index, 2);
        assert_eq!(d.two, "(no message: the stream ended)");
        assert!(cause(&d).starts_with("state left from the previous run"));
        assert!(diverge(&[line("a")], &[line("a")], false).is_none());
    }
}
