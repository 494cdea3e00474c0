//! The protocol's error codes (docs/executor-protocol.md, the `error` message): a name per
//! number. The numbers are the wire's and never change; a new code is a new number.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};

/// Why the simulator refuses a process (the `code` of an `error` message, and the
/// `[protocol error N]` of the command's message); what each means: [`ErrorCode::meaning`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    NotSupported = 10,
    Malformed = 12,
    Crash = 13,
    TurnRule = 14,
    UnknownCall = 20,
    DuplicateResult = 21,
    BadReceipt = 22,
    UnmappedRequest = 23,
    Nondeterministic = 30,
    Watchdog = 31,
}

impl ErrorCode {
    /// Every code, in the order of their numbers.
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::NotSupported,
        ErrorCode::Malformed,
        ErrorCode::Crash,
        ErrorCode::TurnRule,
        ErrorCode::UnknownCall,
        ErrorCode::DuplicateResult,
        ErrorCode::BadReceipt,
        ErrorCode::UnmappedRequest,
        ErrorCode::Nondeterministic,
        ErrorCode::Watchdog,
    ];

    /// The number on the wire.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// The code's name, as the docs' table and the schema write it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::NotSupported => "not_supported",
            ErrorCode::Malformed => "malformed",
            ErrorCode::Crash => "crash",
            ErrorCode::TurnRule => "turn_rule",
            ErrorCode::UnknownCall => "unknown_call",
            ErrorCode::DuplicateResult => "duplicate_result",
            ErrorCode::BadReceipt => "bad_receipt",
            ErrorCode::UnmappedRequest => "unmapped_request",
            ErrorCode::Nondeterministic => "nondeterministic",
            ErrorCode::Watchdog => "watchdog",
        }
    }

    /// When the simulator answers with the code (the schema's description of it, and
    /// docs/executor-protocol.md's table).
    pub fn meaning(self) -> &'static str {
        match self {
            ErrorCode::NotSupported => {
                "an unknown message `type`, or a protocol version or mode this retrylab does not speak"
            }
            ErrorCode::Malformed => {
                "not JSON, not an object, a missing or unknown field, a field of the wrong type"
            }
            ErrorCode::Crash => {
                "the process exited or closed fd 4 (its exit status and stderr are shown)"
            }
            ErrorCode::TurnRule => {
                "a message that does not fit the turn (a second `http` while one is outstanding in sync mode; `ready` outside `start`; `idle` from a sync process or after `start`; a reused `msg_id`; in async mode an `http` for a call whose `result` was sent, or a `sleep` while no call runs)"
            }
            ErrorCode::UnknownCall => {
                "a `result` or `state` for a call this process was not given, or a `result` for an issue of it that it was not given"
            }
            ErrorCode::DuplicateResult => "a second `result` for the same call and issue",
            ErrorCode::BadReceipt => {
                "a receipt that is not a resource id this provider returned (its face's `id_prefix` and a number: `res_N`, `cus_N`)"
            }
            ErrorCode::UnmappedRequest => {
                "an HTTP request the provider face cannot serve: to another host, or a create that matches no route (fatal unless `--executor-unmapped warn`; a lookup of no route is warned and answered 404)"
            }
            ErrorCode::Nondeterministic => {
                "the determinism check found two runs of the same inputs that differ"
            }
            ErrorCode::Watchdog => "the turn did not end within the watchdog",
        }
    }
}

/// The codes as docs/executor-protocol.md's table shows them (markdown).
#[cfg(test)]
fn error_codes_markdown() -> String {
    let mut out = String::from("| code | name | when |\n|---|---|---|\n");
    for c in ErrorCode::ALL {
        out.push_str(&format!(
            "| {} | `{}` | {} |\n",
            c.number(),
            c.name(),
            c.meaning()
        ));
    }
    out
}

/// The number, as `[protocol error N]` prints it.
impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// On the wire, the number.
impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.number())
    }
}

/// An integer, one of the codes: each a `const` with its name as `title` (for generated
/// bindings' constant names) and its meaning as `description`.
impl JsonSchema for ErrorCode {
    fn schema_name() -> Cow<'static, str> {
        "ErrorCode".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let codes: Vec<serde_json::Value> = ErrorCode::ALL
            .iter()
            .map(|c| {
                serde_json::json!({
                    "const": c.number(),
                    "title": c.name(),
                    "description": c.meaning(),
                })
            })
            .collect();
        json_schema!({
            "description": "Why the simulator refuses a process: the `code` of an `error` message (docs/executor-protocol.md).",
            "type": "integer",
            "oneOf": codes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_the_wire_s_and_names_unique() {
        let numbers: Vec<u32> = ErrorCode::ALL.iter().map(|c| c.number()).collect();
        assert_eq!(numbers, [10, 12, 13, 14, 20, 21, 22, 23, 30, 31]);
        let names: std::collections::BTreeSet<&str> =
            ErrorCode::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        assert_eq!(serde_json::to_string(&ErrorCode::TurnRule).unwrap(), "14");
        assert_eq!(ErrorCode::Watchdog.to_string(), "31");
    }

    #[test]
    fn the_docs_show_the_codes() {
        crate::external::capability::assert_doc_section("error codes", &error_codes_markdown());
    }
}
