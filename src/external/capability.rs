//! What a Rust design may do and what an external executor may do, side by side: every
//! public method of [`ExecCtx`](crate::design::ExecCtx) (what an executor asks of the world)
//! and of the [`Executor`](crate::design::Executor) trait (what the world tells it), with the
//! protocol messages that carry the same thing. A capability without a message, or a message
//! without a capability, is a row of its own with the reason: never left out silently. The
//! tests below check the table both ways against `src/design/context.rs`, the `Executor`
//! trait, and the protocol's schema, and that docs/executor-protocol.md shows it.

/// One row: a capability of a Rust design and the protocol messages that carry it.
#[derive(Clone, Copy, Debug)]
pub struct Capability {
    /// `ExecCtx::name` or `Executor::name`; empty for messages of the protocol's own
    /// plumbing (a process's handshake, its turns, its lives), which no Rust design needs.
    pub rust: &'static str,
    /// The message `type`s (either way) that carry it; empty when the protocol has none.
    pub messages: &'static [&'static str],
    /// How they correspond, or why one side has nothing.
    pub note: &'static str,
}

const fn row(
    rust: &'static str,
    messages: &'static [&'static str],
    note: &'static str,
) -> Capability {
    Capability {
        rust,
        messages,
        note,
    }
}

/// Every capability of a Rust design beside the protocol messages that carry it (or why
/// none), in the order of docs/executor-protocol.md's table.
pub fn capabilities() -> &'static [Capability] {
    CAPABILITIES
}

const CAPABILITIES: &[Capability] = &[
    // What the world tells an executor: the callbacks of `Executor`, messages to the process.
    row(
        "Executor::on_start",
        &["start", "ready"],
        "`start` (`incarnation` 0) begins a worker's life; the turn ends with `ready` where a callback returns",
    ),
    row(
        "Executor::on_restart",
        &["start", "invoke"],
        "`start` with `incarnation` > 0; the calls the crashed life had not answered come again as `invoke` with `redelivery: true`. Not carried: an operation the crashed life owned whose calls were all answered has no message to resume it, where a built-in's `on_restart` may (the journal does; `tests/parity.rs` pins the difference)",
    ),
    row(
        "Executor::on_call",
        &["invoke"],
        "the agent's tool call; its answer is a `result`",
    ),
    row(
        "Executor::on_response",
        &["http_response", "http_error"],
        "the transport's answer to an `http`: a reply, or a `read_timeout` or `reset`",
    ),
    row("Executor::on_timer", &["wake"], "the answer to a `sleep`"),
    row(
        "Executor::on_cancel",
        &["cancel"],
        "the agent stopped waiting for an issue of a call",
    ),
    row(
        "Executor::reset",
        &["start"],
        "`start` with `reset: true`: a process an earlier run used forgets that run",
    ),
    row(
        "Executor::fingerprint",
        &[],
        "no message: the simulator hashes the messages it sent the process since its `start` (a process is a function of them, which the determinism check verifies)",
    ),
    row(
        "Executor::snapshot",
        &[],
        "no message: a process's memory cannot be copied; a search re-runs an external executor's runs from their start (`--executor-lives fork` forks a process that ran no call, not a run)",
    ),
    // What an executor asks of the world: the methods of `ExecCtx`, messages from the process.
    row(
        "ExecCtx::now",
        &[
            "start",
            "invoke",
            "cancel",
            "http_response",
            "http_error",
            "wake",
            "kv_ok",
        ],
        "`now_ms` on every message that starts a turn or answers a request; the client's clock reads it",
    ),
    row("ExecCtx::worker", &["start"], "`start.worker`"),
    row("ExecCtx::incarnation", &["start"], "`start.incarnation`"),
    row(
        "ExecCtx::should_retry_header",
        &["http_response"],
        "the header itself, among the answer's `headers`",
    ),
    row(
        "ExecCtx::journal",
        &["kv", "kv_ok"],
        "the executor's own records are the store (`kv` `put`, `cas`, `delete`); the operation records are the simulator's, moved by `state` and `result`, claimed by `http`. Not carried: the simulator opens one operation per tool call, and no message binds a call to an earlier call's operation as a built-in's journal binds every call of an authorization to one (`tests/parity.rs`: per-intent figures agree, per-operation ones differ)",
    ),
    row(
        "ExecCtx::journal_ref",
        &["kv", "kv_ok"],
        "the store read (`kv` `get`, `list`)",
    ),
    row(
        "ExecCtx::transition",
        &["state", "result"],
        "`state` moves the call's operation; a `result` of `ok` or `failed` implies `confirmed` or `failed`",
    ),
    row(
        "ExecCtx::record",
        &[],
        "no message: a fenced write of an operation's state; an external executor fences in the store (`kv` `cas` on a version, a lease) and then sends `state`",
    ),
    row(
        "ExecCtx::abandon",
        &["state"],
        "giving an operation up without its outcome is a `state` (or a `result`) like any other",
    ),
    row(
        "ExecCtx::new_key",
        &[],
        "no message: a process mints its own key text (its randomness seeded by `start.seed`) and sends it in the request, where the face reads it (`ExecCtx::key_named`)",
    ),
    row(
        "ExecCtx::key_named",
        &["http"],
        "the key's text, where the provider's face carries it (a header, a parameter, a body field)",
    ),
    row(
        "ExecCtx::send",
        &["http"],
        "`http` without `timeout_ms`: the model's `executor.timeout_ms`",
    ),
    row(
        "ExecCtx::send_with_timeout",
        &["http"],
        "`http.timeout_ms`; `null` waits forever (`NO_TIMEOUT`)",
    ),
    row(
        "ExecCtx::set_timer",
        &["sleep"],
        "a `sleep` of `ms`; answered by `wake`",
    ),
    row(
        "ExecCtx::set_timer_within",
        &[],
        "no message in version 1: a delay the world chooses within a range; a process's own jitter is drawn from its seed, not enumerated by `explore` (section 10)",
    ),
    row(
        "ExecCtx::set_periodic_timer",
        &[],
        "no message in version 1: background work outside a call (a sweeper) is not in the protocol yet (section 10)",
    ),
    row(
        "ExecCtx::report",
        &["result"],
        "the answer the agent is told, and the claim the checkers judge",
    ),
    row(
        "ExecCtx::declare_threshold",
        &[],
        "no message in version 1: a process cannot yet declare the ages its code compares against",
    ),
    row("ExecCtx::note", &["log"], "a line in the trace"),
    row(
        "ExecCtx::note_on",
        &["log"],
        "a line in the trace about an operation: a `log` of a sync process is about the call it is handling (an async process's, about no call: `log` names none)",
    ),
    row(
        "ExecCtx::note_about",
        &["log"],
        "a line in the trace about an operation or a call: a `log` of a sync process is about the call it is handling (an async process's, about no call: `log` names none)",
    ),
    // The protocol's own plumbing: a process's handshake, turns and lives.
    row(
        "",
        &["hello", "init", "init_ok"],
        "a process's handshake: a Rust design is linked in, and declares its assumptions and guarantee as `Design` methods, which `hello` carries",
    ),
    row(
        "",
        &["idle"],
        "ends an async process's turn, where a Rust callback returns",
    ),
    row(
        "",
        &["error"],
        "the simulator refuses a message that breaks the protocol; a Rust design's calls are checked by the compiler",
    ),
    row(
        "",
        &["fork", "forked"],
        "process lives (`--executor-lives`): a Rust design has no process",
    ),
    row(
        "",
        &["commit", "committed"],
        "a storage commit below the interpreter (an `fsync` of a file of the run's storage), sent by the preloaded shim, not by clients: a crash point (`workers.crash.at_commit`). A Rust design's journal writes are part of its turn",
    ),
    row(
        "",
        &["shutdown"],
        "defined for clients (exit 0); this simulator closes the channel instead, which means the same",
    ),
];

/// The table as docs/executor-protocol.md shows it (markdown).
pub fn capabilities_markdown() -> String {
    let mut out = String::from("| Rust design | protocol messages | how |\n|---|---|---|\n");
    for c in CAPABILITIES {
        let rust = if c.rust.is_empty() {
            "—".to_string()
        } else {
            format!("`{}`", c.rust)
        };
        let messages = if c.messages.is_empty() {
            "—".to_string()
        } else {
            c.messages
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!("| {rust} | {messages} | {} |\n", c.note));
    }
    out
}

/// Fails unless docs/executor-protocol.md shows `expected` between the markers of section
/// `name` (`<!-- NAME: generated ... -->` and `<!-- end of NAME -->`); `RETRYLAB_BLESS=1`
/// rewrites it there.
#[cfg(test)]
pub(crate) fn assert_doc_section(name: &str, expected: &str) {
    // Two tests check sections of the same file: one at a time, so that a blessing one
    // never reads the file while the other writes it.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/executor-protocol.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let begin = format!("<!-- {name}: generated from src/external/");
    let end = format!("<!-- end of {name} -->");
    let a = doc
        .find(&begin)
        .unwrap_or_else(|| panic!("no marker {begin:?}"));
    let a = a + doc[a..].find('\n').unwrap() + 1;
    let b = doc
        .find(&end)
        .unwrap_or_else(|| panic!("no marker {end:?}"));
    if doc[a..b] != *expected {
        if std::env::var_os("RETRYLAB_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&path, format!("{}{expected}{}", &doc[..a], &doc[b..])).unwrap();
            return;
        }
        panic!(
            "docs/executor-protocol.md's {name} table is not the code's (RETRYLAB_BLESS=1 rewrites it); it should be:\n{expected}"
        );
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::*;

    fn source(path: &str) -> syn::File {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        let text = std::fs::read_to_string(&path).unwrap();
        syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The public methods of `ExecCtx` (every `impl ExecCtx` block of
    /// src/design/context.rs).
    fn exec_ctx_methods() -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for item in source("src/design/context.rs").items {
            let syn::Item::Impl(i) = item else { continue };
            let syn::Type::Path(p) = &*i.self_ty else {
                continue;
            };
            if i.trait_.is_some() || p.path.segments.last().unwrap().ident != "ExecCtx" {
                continue;
            }
            for it in &i.items {
                if let syn::ImplItem::Fn(f) = it
                    && matches!(f.vis, syn::Visibility::Public(_))
                {
                    out.insert(format!("ExecCtx::{}", f.sig.ident));
                }
            }
        }
        out
    }

    /// The methods of the `Executor` trait (src/design/mod.rs).
    fn executor_methods() -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for item in source("src/design/mod.rs").items {
            if let syn::Item::Trait(t) = item
                && t.ident == "Executor"
            {
                for it in &t.items {
                    if let syn::TraitItem::Fn(f) = it {
                        out.insert(format!("Executor::{}", f.sig.ident));
                    }
                }
            }
        }
        out
    }

    /// Every message `type` of the protocol, both ways, from its schema.
    fn message_kinds() -> BTreeSet<String> {
        let schema = super::super::protocol_schema();
        let mut out = BTreeSet::new();
        for def in ["FromExec", "ToExec"] {
            for k in schema["$defs"][def]["oneOf"].as_array().unwrap() {
                out.insert(
                    k["properties"]["type"]["const"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                );
            }
        }
        out
    }

    #[test]
    fn every_capability_of_a_rust_design_has_its_row() {
        let rust: BTreeSet<String> = exec_ctx_methods()
            .into_iter()
            .chain(executor_methods())
            .collect();
        assert!(rust.len() > 25, "{rust:?}");
        let rows: BTreeSet<String> = CAPABILITIES
            .iter()
            .filter(|c| !c.rust.is_empty())
            .map(|c| c.rust.to_string())
            .collect();
        let missing: Vec<_> = rust.difference(&rows).collect();
        assert!(
            missing.is_empty(),
            "a capability of a Rust design without a row in CAPABILITIES (its messages, or why none): {missing:?}"
        );
        let stale: Vec<_> = rows.difference(&rust).collect();
        assert!(stale.is_empty(), "rows naming no method: {stale:?}");
        let twice = CAPABILITIES.len() - rows.len();
        let plumbing = CAPABILITIES.iter().filter(|c| c.rust.is_empty()).count();
        assert_eq!(twice, plumbing, "a method with two rows");
    }

    #[test]
    fn every_message_of_the_protocol_has_its_row() {
        let kinds = message_kinds();
        let named: BTreeSet<String> = CAPABILITIES
            .iter()
            .flat_map(|c| c.messages.iter().map(|m| m.to_string()))
            .collect();
        let missing: Vec<_> = kinds.difference(&named).collect();
        assert!(
            missing.is_empty(),
            "a message with no row in CAPABILITIES (its capability, or why none): {missing:?}"
        );
        let stale: Vec<_> = named.difference(&kinds).collect();
        assert!(stale.is_empty(), "rows naming no message: {stale:?}");
        for c in CAPABILITIES {
            assert!(!c.note.is_empty(), "{c:?}: no note");
            assert!(
                !(c.rust.is_empty() && c.messages.is_empty()),
                "an empty row: {c:?}"
            );
            if c.messages.is_empty() {
                assert!(c.note.starts_with("no message"), "{c:?}: say why none");
            }
        }
    }

    #[test]
    fn the_docs_show_the_table() {
        assert_doc_section("capabilities", &capabilities_markdown());
    }
}
