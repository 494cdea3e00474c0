//! The messages an executor process sends (docs/executor-protocol.md, section 4), read
//! strictly: an unknown type or field, a missing one, a wrong type is an error naming it.
//! The doc comments below are the descriptions of `api/protocol.schema.json` (`FromExec`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::code::ErrorCode;

/// A message from the executor process.
#[derive(Debug, Deserialize, PartialEq, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromExec {
    /// The first message of a new process: what it speaks and what it handles. Answered
    /// with `init`.
    Hello {
        /// The protocol version it speaks; another than the simulator's is refused (code
        /// 10).
        protocol: u32,
        /// `sync` (one call at a time) or `async` (several at once, turns ended by `idle`);
        /// another value is refused (code 10).
        #[schemars(with = "ModeName")]
        mode: String,
        /// The client library and its version, shown in the design's summary.
        #[serde(default)]
        client: Option<String>,
        /// The tools it handles; an `invoke` of another tool fails at once, with a warning.
        tools: Vec<String>,
        /// The contract assumptions its guarantee rests on, by the names of `retrylab
        /// assumptions`.
        #[serde(default)]
        assumptions: Vec<String>,
        /// The properties it promises where its assumptions hold (needs `assumptions`).
        #[serde(default)]
        guarantee: Vec<String>,
        /// It can be a zygote: it answers `fork` (section 7).
        #[serde(default)]
        fork: bool,
    },
    /// A zygote's answer to `fork`: the child's process id.
    Forked {
        /// The child's process id, already the leader of its own process group.
        pid: u32,
    },
    /// The answer to `init`: the process is initialized.
    InitOk {},
    /// Ends the turn of `start`: the process is up and waits for calls.
    Ready {},
    /// Sends a request to the provider for a call it was given; ends the turn in sync mode.
    /// Answered with `http_response` or `http_error`.
    Http {
        /// The request's id, unique among its outstanding requests (one counter for `kv`,
        /// `http` and `sleep`).
        msg_id: u64,
        /// The call the request serves (`c1`): the world counts its effect for that call's
        /// intent.
        call: String,
        /// The HTTP method (`POST`, `GET`, ...).
        method: String,
        /// The full URL, under the provider's `base_url`.
        url: String,
        /// The request's headers.
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// The body, UTF-8 text.
        #[serde(default)]
        body: Option<String>,
        /// The body in base64, for binary bodies (instead of `body`).
        #[serde(default)]
        body_b64: Option<String>,
        /// The read timeout in milliseconds. Absent: the model's `executor.timeout_ms`;
        /// `null`: none (it waits forever).
        #[serde(default = "absent")]
        #[schemars(with = "Option<u64>")]
        timeout_ms: serde_json::Value,
    },
    /// Sleeps in virtual time; ends the turn in sync mode. Answered with `wake`.
    Sleep {
        /// The request's id (see `http.msg_id`).
        msg_id: u64,
        /// How long, in virtual milliseconds.
        ms: u64,
    },
    /// A request to the durable key-value store, answered inside the turn with `kv_ok`.
    Kv {
        /// The request's id (see `http.msg_id`).
        msg_id: u64,
        /// What to do.
        op: KvOp,
        /// The entry's key (`get`, `put`, `cas`, `delete`).
        #[serde(default)]
        key: Option<String>,
        /// The value to write (`put`, `cas`).
        #[serde(default)]
        value: Option<String>,
        /// `cas`: the version the entry must have for the write to happen (0: absent).
        #[serde(default)]
        expect_version: Option<u64>,
        /// `list`: the prefix of the keys listed (all when absent).
        #[serde(default)]
        prefix: Option<String>,
    },
    /// What the agent is told of a call: the claim the checkers judge. Ends the turn in
    /// sync mode.
    Result {
        /// The call (`c1`).
        call: String,
        /// The issue of the call the result answers.
        issue: u32,
        /// `ok` (the effect exists), `failed` (definite: it does not and never will),
        /// `unknown` (it may exist).
        outcome: Outcome,
        /// With `ok`: the resource id the provider returned.
        #[serde(default)]
        receipt: Option<String>,
        /// A line for the trace (why it failed, or is unknown).
        #[serde(default)]
        detail: Option<String>,
    },
    /// An operation state the executor records about the operation serving `call`, judged
    /// as a built-in design's journal transition.
    State {
        /// The call (`c1`).
        call: String,
        /// The state recorded.
        state: StateName,
        /// With `confirmed`: the resource id.
        #[serde(default)]
        receipt: Option<String>,
    },
    /// A line in the trace, at the current virtual time.
    Log {
        /// The line.
        text: String,
    },
    /// Async mode: the process has nothing runnable; the turn ends.
    Idle {},
    /// Sent by the preloaded shim (section 9), not by a client: the process commits a file of
    /// the run's storage (an `fsync` or `fdatasync` of a descriptor open for writing on it)
    /// during a turn, on the thread that speaks the protocol. It waits in the call for
    /// `committed`; the worker may crash there instead (`workers.crash.at_commit`,
    /// `crash_at_commit`), and the answer never comes.
    Commit {
        /// The request's id (the shim's own, from 2^52).
        msg_id: u64,
        /// The file, relative to the run's storage (`w0/journal.db`, `run/state.json`).
        file: String,
    },
}

/// The modes a `hello` may name (the schema of `hello.mode`; read as text, so that another
/// mode is refused with code 10, not 12).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum ModeName {
    /// One call at a time; `http`, `sleep` and `result` end the turn.
    Sync,
    /// Several calls and requests outstanding at once; `idle` ends the turn.
    Async,
}

/// The marker of a field left out (distinct from `null`).
fn absent() -> serde_json::Value {
    serde_json::Value::String("\u{0}absent".into())
}

/// Whether `v` is the marker of a field left out.
pub fn is_absent(v: &serde_json::Value) -> bool {
    v.as_str() == Some("\u{0}absent")
}

/// How a process runs its calls (`hello.mode`, docs/executor-protocol.md section 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// One call at a time; `http`, `sleep` and `result` end the turn.
    #[default]
    Sync,
    /// Several calls and requests outstanding at once; `idle` ends the turn.
    Async,
}

impl Mode {
    /// The mode a `hello` names, if this retrylab speaks it.
    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "sync" => Some(Mode::Sync),
            "async" => Some(Mode::Async),
            _ => None,
        }
    }
}

/// A store operation (`kv.op`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KvOp {
    /// Reads `key`: its value and version.
    Get,
    /// Writes `value` under `key` (the next version of the store).
    Put,
    /// Writes `value` under `key` only if the entry's version is `expect_version`.
    Cas,
    /// Removes `key`.
    Delete,
    /// Lists the entries whose keys start with `prefix`, in key order.
    List,
}

/// What a `result` claims.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The effect exists.
    Ok,
    /// Definite: the effect does not exist and never will.
    Failed,
    /// Indefinite: the effect may exist.
    Unknown,
}

/// An operation state a `state` records.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StateName {
    /// The effect exists.
    Confirmed,
    /// The effect does not exist and never will.
    Failed,
    /// Handed to a human: the executor stops resolving it.
    Escalated,
}

impl FromExec {
    /// The message's `type`, as written.
    pub fn kind(&self) -> &'static str {
        match self {
            FromExec::Hello { .. } => "hello",
            FromExec::InitOk {} => "init_ok",
            FromExec::Ready {} => "ready",
            FromExec::Http { .. } => "http",
            FromExec::Sleep { .. } => "sleep",
            FromExec::Kv { .. } => "kv",
            FromExec::Result { .. } => "result",
            FromExec::State { .. } => "state",
            FromExec::Log { .. } => "log",
            FromExec::Idle {} => "idle",
            FromExec::Forked { .. } => "forked",
            FromExec::Commit { .. } => "commit",
        }
    }
}

/// Every message `type` of [`FromExec`], as written (the schema's test checks it is all of
/// them).
pub const KINDS: [&str; 12] = [
    "hello", "init_ok", "ready", "http", "sleep", "kv", "result", "state", "log", "idle", "forked",
    "commit",
];

/// Reads one line: the message, or the protocol error code and what is wrong.
pub fn parse(line: &str) -> Result<FromExec, (ErrorCode, String)> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        (
            ErrorCode::Malformed,
            format!("not a JSON line ({e}); print to stdout or stderr, not to fd 4"),
        )
    })?;
    let Some(obj) = value.as_object() else {
        return Err((
            ErrorCode::Malformed,
            "a message must be a JSON object".into(),
        ));
    };
    match obj.get("type").and_then(|t| t.as_str()) {
        None => {
            return Err((
                ErrorCode::Malformed,
                "a message needs a string field \"type\"".into(),
            ));
        }
        Some(t) if !KINDS.contains(&t) => {
            return Err((
                ErrorCode::NotSupported,
                format!(
                    "unknown message type {t:?}; protocol 1 knows {}",
                    KINDS.join(", ")
                ),
            ));
        }
        Some(_) => {}
    }
    serde_json::from_value(value).map_err(|e| (ErrorCode::Malformed, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_strictly() {
        let m = parse(r#"{"type":"sleep","msg_id":3,"ms":1000}"#).unwrap();
        assert_eq!(
            m,
            FromExec::Sleep {
                msg_id: 3,
                ms: 1000
            }
        );
        let e = parse(r#"{"type":"sleep","msg_id":3,"ms":1000,"extra":1}"#).unwrap_err();
        assert_eq!(e.0, ErrorCode::Malformed);
        assert!(e.1.contains("unknown field `extra`"), "{}", e.1);
        let e = parse(r#"{"type":"jump"}"#).unwrap_err();
        assert_eq!(e.0, ErrorCode::NotSupported);
        let e = parse("hello world").unwrap_err();
        assert_eq!(e.0, ErrorCode::Malformed);
        assert!(e.1.contains("not a JSON line"), "{}", e.1);
        assert_eq!(parse(r#"{"type":"idle"}"#).unwrap(), FromExec::Idle {});
        let e = parse(r#"{"type":"idle","next_timer_ms":5}"#).unwrap_err();
        assert_eq!(e.0, ErrorCode::Malformed);
        let e = parse(r#"{"type":"result","call":"c1","issue":1,"outcome":"maybe"}"#).unwrap_err();
        assert!(e.1.contains("unknown variant `maybe`"), "{}", e.1);
    }

    #[test]
    fn fork_is_an_optional_capability_and_forked_carries_a_pid() {
        let hello = |extra: &str| {
            parse(&format!(
                r#"{{"type":"hello","protocol":1,"mode":"sync","tools":["create"]{extra}}}"#
            ))
        };
        assert!(matches!(hello(""), Ok(FromExec::Hello { fork: false, .. })));
        assert!(matches!(
            hello(r#","fork":true"#),
            Ok(FromExec::Hello { fork: true, .. })
        ));
        assert_eq!(
            hello(r#","fork":"yes""#).unwrap_err().0,
            ErrorCode::Malformed
        );
        assert_eq!(
            parse(r#"{"type":"forked","pid":4242}"#).unwrap(),
            FromExec::Forked { pid: 4242 }
        );
        assert_eq!(
            parse(r#"{"type":"forked"}"#).unwrap_err().0,
            ErrorCode::Malformed
        );
        assert_eq!(
            parse(r#"{"type":"forked","pid":4242,"ppid":1}"#)
                .unwrap_err()
                .0,
            ErrorCode::Malformed
        );
    }

    #[test]
    fn an_absent_timeout_differs_from_null() {
        let http = |t: &str| {
            let line = format!(
                r#"{{"type":"http","msg_id":1,"call":"c1","method":"GET","url":"http://provider.sim/x"{t}}}"#
            );
            match parse(&line).unwrap() {
                FromExec::Http { timeout_ms, .. } => timeout_ms,
                m => panic!("{m:?}"),
            }
        };
        assert!(is_absent(&http("")));
        assert!(http(r#","timeout_ms":null"#).is_null());
        assert_eq!(http(r#","timeout_ms":250"#).as_u64(), Some(250));
    }
}
