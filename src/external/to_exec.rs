//! The messages the simulator sends an executor process (docs/executor-protocol.md,
//! section 3). The doc comments below are the descriptions of `api/protocol.schema.json`
//! (`ToExec`).
//!
//! On the wire a message is one JSON object whose keys are in alphabetical order (the order
//! `serde_json`'s map keeps; the lines the protocol has always sent): [`ToExec::line`].

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::code::ErrorCode;

/// A message to the executor process.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToExec {
    /// The answer to `hello`: the model's executor section, the design entry's parameters and
    /// the provider's face. Answered with `init_ok`. Sent once per process.
    Init {
        /// The protocol version the simulator speaks.
        protocol: u32,
        /// The executor's name (`--executor NAME=...`).
        executor: String,
        /// The model's `executor` section, as `show-model` prints it (attempts, backoff,
        /// timeouts, ...; models/schema.json, `ExecutorModel`).
        #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
        config: serde_json::Value,
        /// The design entry's own parameters (`designs[].params` of the model); `{}` when
        /// none.
        #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
        params: serde_json::Value,
        /// Where the provider answers and its HTTP face.
        provider: Provider,
        /// The tool names the agent may call.
        tools: Vec<String>,
    },
    /// A worker's process life begins (`incarnation` 0) or restarts after a crash (1, 2,
    /// ...). Starts a turn, ended by `ready`.
    Start {
        /// The worker's number.
        worker: u32,
        /// 0 at the start of a run; the restart's count after a crash.
        incarnation: u32,
        /// Seeds the process's randomness: a function of the worker and the incarnation.
        seed: u32,
        /// The process was used by an earlier run (or the run was cut): forget everything
        /// of it.
        reset: bool,
        /// Virtual milliseconds since the run began.
        now_ms: u64,
    },
    /// The agent makes a tool call. Starts a turn; answered (eventually) by `result`.
    Invoke {
        /// The call's id (`c1`).
        call: String,
        /// Counts the agent's re-runs of the same call (1, 2, ...).
        issue: u32,
        /// `create` or `compensate`.
        tool: String,
        /// The tool's arguments: `ref`, `tenant`, `authorization` (and `step` of a workflow
        /// step k > 0) for `create`; `target`, `tenant`, `authorization` for `compensate`.
        #[schemars(with = "BTreeMap<String, serde_json::Value>")]
        args: serde_json::Value,
        /// The call was delivered before and is delivered again (a restart, a queue's
        /// redelivery).
        redelivery: bool,
        /// Virtual milliseconds since the run began.
        now_ms: u64,
    },
    /// The agent stopped waiting for an issue of a call (notification): a turn of its own
    /// in async mode only.
    Cancel {
        /// The call's id (`c1`).
        call: String,
        /// The issue the agent stopped waiting for.
        issue: u32,
        /// Virtual milliseconds since the run began.
        now_ms: u64,
    },
    /// The provider's answer to an `http` request. Starts a turn.
    HttpResponse {
        /// The `msg_id` of the request.
        in_reply_to: u64,
        /// The HTTP status.
        status: u16,
        /// The answer's headers.
        headers: BTreeMap<String, String>,
        /// The answer's body.
        body: String,
        /// Virtual milliseconds since the run began.
        now_ms: u64,
    },
    /// A transport error instead of an answer to an `http` request. Starts a turn.
    HttpError {
        /// The `msg_id` of the request.
        in_reply_to: u64,
        /// What went wrong.
        error: TransportError,
        /// Virtual milliseconds since the run began.
        now_ms: u64,
    },
    /// The answer to `sleep`. Starts a turn.
    Wake {
        /// The `msg_id` of the `sleep`.
        in_reply_to: u64,
        /// Virtual milliseconds since the run began.
        now_ms: u64,
    },
    /// The answer to `kv`, inside the turn. Which fields it has depends on the operation:
    /// `get` `value` and `version`; `put` `version`; `cas` `ok`, `value` and `version`;
    /// `delete` `ok`; `list` `entries`.
    KvOk {
        /// The `msg_id` of the `kv` request.
        in_reply_to: u64,
        /// `cas`: whether it wrote; `delete`: whether the key existed; `true` otherwise.
        ok: bool,
        /// `get`, `cas`: the entry's value (after a `cas`), `null` when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<Option<String>>,
        /// `get`, `cas`: the entry's version (0 when absent); `put`: the write's version.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "u64")]
        version: Option<u64>,
        /// `list`: `[key, value, version]` of each entry, in key order.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Vec<(String, String, u64)>")]
        entries: Option<Vec<(String, String, u64)>>,
        /// Virtual milliseconds since the run began.
        now_ms: u64,
    },
    /// The answer to `commit` (to the preloaded shim, section 9): the commit goes on.
    Committed {
        /// The `msg_id` of the `commit`.
        in_reply_to: u64,
        /// Virtual milliseconds since the run began.
        now_ms: u64,
    },
    /// The simulator refuses a message; the process is killed after it.
    Error {
        /// Why.
        code: ErrorCode,
        /// What is wrong, in words.
        text: String,
    },
    /// Asks a zygote (a process that declared `hello.fork`) to fork the process of a worker
    /// life. Answered with `forked`.
    Fork {
        /// The FIFO the child reads its messages from.
        #[serde(rename = "in")]
        input: String,
        /// The FIFO the child writes its messages to.
        out: String,
    },
    /// Exit with status 0 (EOF on the channel means the same). Defined for clients; this
    /// simulator closes the channel instead.
    #[allow(dead_code)] // Part of the protocol clients read; never written here.
    Shutdown {},
}

/// Where the provider answers, and its face (`init.provider`).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Provider {
    /// The URL every request goes to (`http://provider.sim`).
    pub base_url: String,
    /// The header the idempotency key travels in; `null` when the key is not a header.
    pub key_header: Option<String>,
    /// The provider's whole HTTP face (models/schema.json, `HttpFace`): routes, where the
    /// key travels, bodies, answers.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub http: serde_json::Value,
}

/// A transport error (`http_error.error`). The world produces `read_timeout` and `reset`;
/// the others are vocabulary clients know for the network knobs to come.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransportError {
    /// No connection within the connect timeout: not applied (not produced yet).
    ConnectTimeout,
    /// Connection refused: not applied (not produced yet).
    Refused,
    /// Connected and sent, no answer within the timeout: it may have been applied.
    ReadTimeout,
    /// The connection was reset after the request was sent: it may have been applied.
    Reset,
}

impl ToExec {
    /// The line sent: one JSON object, its keys in alphabetical order.
    pub fn line(&self) -> String {
        self.value().to_string()
    }

    /// The message as a JSON value (a map of sorted keys).
    pub fn value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a protocol message is JSON")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines the `json!` literals these types replace wrote, byte for byte.
    #[test]
    fn lines_are_the_protocol_s_as_before() {
        let start = ToExec::Start {
            worker: 0,
            incarnation: 1,
            seed: 7,
            reset: true,
            now_ms: 5,
        };
        assert_eq!(
            start.line(),
            r#"{"incarnation":1,"now_ms":5,"reset":true,"seed":7,"type":"start","worker":0}"#
        );
        let err = ToExec::Error {
            code: ErrorCode::TurnRule,
            text: "x".into(),
        };
        assert_eq!(err.line(), r#"{"code":14,"text":"x","type":"error"}"#);
        let get = ToExec::KvOk {
            in_reply_to: 2,
            ok: true,
            value: Some(None),
            version: Some(0),
            entries: None,
            now_ms: 9,
        };
        assert_eq!(
            get.line(),
            r#"{"in_reply_to":2,"now_ms":9,"ok":true,"type":"kv_ok","value":null,"version":0}"#
        );
        let list = ToExec::KvOk {
            in_reply_to: 3,
            ok: true,
            value: None,
            version: None,
            entries: Some(vec![("k".into(), "v".into(), 4)]),
            now_ms: 9,
        };
        assert_eq!(
            list.line(),
            r#"{"entries":[["k","v",4]],"in_reply_to":3,"now_ms":9,"ok":true,"type":"kv_ok"}"#
        );
        let fork = ToExec::Fork {
            input: "/t/in".into(),
            out: "/t/out".into(),
        };
        assert_eq!(
            fork.line(),
            r#"{"in":"/t/in","out":"/t/out","type":"fork"}"#
        );
        let e = ToExec::HttpError {
            in_reply_to: 3,
            error: TransportError::ReadTimeout,
            now_ms: 1,
        };
        assert_eq!(
            e.line(),
            r#"{"error":"read_timeout","in_reply_to":3,"now_ms":1,"type":"http_error"}"#
        );
    }
}
