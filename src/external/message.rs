//! The messages an executor process sends (docs/executor-protocol.md, section 4), read
//! strictly: an unknown type or field, a missing one, a wrong type is an error naming it.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A message from the executor process.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromExec {
    Hello {
        protocol: u32,
        mode: String,
        #[serde(default)]
        client: Option<String>,
        tools: Vec<String>,
        #[serde(default)]
        assumptions: Vec<String>,
        #[serde(default)]
        guarantee: Vec<String>,
        /// It can be a zygote: it answers `fork` (section 7).
        #[serde(default)]
        fork: bool,
    },
    /// A zygote's answer to `fork`: the child's process id.
    Forked {
        pid: u32,
    },
    InitOk {},
    Ready {},
    Http {
        msg_id: u64,
        call: String,
        method: String,
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
        #[serde(default)]
        body: Option<String>,
        #[serde(default)]
        body_b64: Option<String>,
        /// Absent: the model's `executor.timeout_ms`; `null`: none.
        #[serde(default = "absent")]
        timeout_ms: serde_json::Value,
    },
    Sleep {
        msg_id: u64,
        ms: u64,
    },
    Kv {
        msg_id: u64,
        op: KvOp,
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        value: Option<String>,
        #[serde(default)]
        expect_version: Option<u64>,
        #[serde(default)]
        prefix: Option<String>,
    },
    Result {
        call: String,
        issue: u32,
        outcome: Outcome,
        #[serde(default)]
        receipt: Option<String>,
        #[serde(default)]
        detail: Option<String>,
    },
    State {
        call: String,
        state: StateName,
        #[serde(default)]
        receipt: Option<String>,
    },
    Log {
        text: String,
    },
    /// Async mode: the process has nothing runnable; the turn ends.
    Idle {},
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

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KvOp {
    Get,
    Put,
    Cas,
    Delete,
    List,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    Failed,
    Unknown,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StateName {
    Confirmed,
    Failed,
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
        }
    }
}

/// Reads one line: the message, or the protocol error code and what is wrong.
pub fn parse(line: &str) -> Result<FromExec, (u32, String)> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        (
            12,
            format!("not a JSON line ({e}); print to stdout or stderr, not to fd 4"),
        )
    })?;
    let Some(obj) = value.as_object() else {
        return Err((12, "a message must be a JSON object".into()));
    };
    let known = [
        "hello", "init_ok", "ready", "http", "sleep", "kv", "result", "state", "log", "idle",
        "forked",
    ];
    match obj.get("type").and_then(|t| t.as_str()) {
        None => return Err((12, "a message needs a string field \"type\"".into())),
        Some(t) if !known.contains(&t) => {
            return Err((
                10,
                format!(
                    "unknown message type {t:?}; protocol 1 knows {}",
                    known.join(", ")
                ),
            ));
        }
        Some(_) => {}
    }
    serde_json::from_value(value).map_err(|e| (12, e.to_string()))
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
        assert_eq!(e.0, 12);
        assert!(e.1.contains("unknown field `extra`"), "{}", e.1);
        let e = parse(r#"{"type":"jump"}"#).unwrap_err();
        assert_eq!(e.0, 10);
        let e = parse("hello world").unwrap_err();
        assert_eq!(e.0, 12);
        assert!(e.1.contains("not a JSON line"), "{}", e.1);
        assert_eq!(parse(r#"{"type":"idle"}"#).unwrap(), FromExec::Idle {});
        let e = parse(r#"{"type":"idle","next_timer_ms":5}"#).unwrap_err();
        assert_eq!(e.0, 12);
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
        assert_eq!(hello(r#","fork":"yes""#).unwrap_err().0, 12);
        assert_eq!(
            parse(r#"{"type":"forked","pid":4242}"#).unwrap(),
            FromExec::Forked { pid: 4242 }
        );
        assert_eq!(parse(r#"{"type":"forked"}"#).unwrap_err().0, 12);
        assert_eq!(
            parse(r#"{"type":"forked","pid":4242,"ppid":1}"#)
                .unwrap_err()
                .0,
            12
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
