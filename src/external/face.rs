//! The provider's HTTP face (docs/executor-protocol.md, section 6): an executor's HTTP
//! request mapped to the simulator's [`Request`], and the provider's [`Reply`] written back
//! as an HTTP response.
//!
//! Version 1 has one face for every preset: JSON bodies, the key in `Idempotency-Key`.

use std::collections::BTreeMap;

use crate::vocab::ids::{Endpoint, Params, ResourceId};
use crate::vocab::protocol::{LookupQuery, Reply, Request, RequestKind, ToolCall};

/// Where the simulated provider answers.
pub const BASE_URL: &str = "http://provider.sim";
/// The header a key travels in.
pub const KEY_HEADER: &str = "idempotency-key";

/// What a request maps to.
#[derive(Debug, PartialEq)]
pub enum Mapped {
    /// A request to the provider; `key` is the key header's text, if any.
    Send {
        request: Request,
        key: Option<String>,
    },
    /// Nothing the provider knows: answered 404 by the face, with the reason in a warning.
    Unmapped(String),
}

/// The reference of a create with parameters `params`, as the tool's arguments carry it.
pub fn reference(params: Params) -> String {
    format!("r{}", params.0)
}

fn parse_reference(text: &str) -> Option<Params> {
    text.strip_prefix('r')?.parse().ok().map(Params)
}

/// The id of `resource` on the wire.
pub fn resource_id(resource: ResourceId) -> String {
    format!("res_{}", resource.0)
}

/// The resource an id on the wire names.
pub fn parse_resource_id(text: &str) -> Option<ResourceId> {
    text.strip_prefix("res_")?.parse().ok().map(ResourceId)
}

/// The tool name and arguments the agent's `call` reaches an executor as.
pub fn invocation(call: &ToolCall) -> (&'static str, serde_json::Value) {
    let tenant = format!("t{}", call.tenant.0);
    let authorization = format!("a{}", call.auth.0);
    if let Some(target) = call.compensates() {
        return (
            "compensate",
            serde_json::json!({"target": resource_id(target), "tenant": tenant, "authorization": authorization}),
        );
    }
    let mut args = serde_json::json!({"ref": reference(call.params), "tenant": tenant, "authorization": authorization});
    if call.endpoint.0 > 0 {
        args["step"] = serde_json::json!(call.endpoint.0);
    }
    ("create", args)
}

/// The path creates of `endpoint` are posted to.
fn create_path(endpoint: Endpoint) -> String {
    match endpoint.0 {
        0 => "/v1/resources".into(),
        k => format!("/v1/steps/{k}/resources"),
    }
}

/// Maps an executor's request, made for `call`.
pub fn map(
    call: &ToolCall,
    method: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    body: Option<&str>,
) -> Mapped {
    let unmapped = |why: &str| Mapped::Unmapped(format!("{method} {url}: {why}"));
    let Some(rest) = url.strip_prefix(BASE_URL) else {
        return unmapped(&format!(
            "not the simulated provider (its base URL is {BASE_URL})"
        ));
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let key = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(KEY_HEADER))
        .map(|(_, v)| v.clone());
    let lookup = |q: LookupQuery| Mapped::Send {
        request: Request::lookup(call, q),
        key: None,
    };
    let get = method.eq_ignore_ascii_case("GET");
    if let Some(handle) = path.strip_prefix("/v1/operations/") {
        return match handle.strip_prefix("op_").and_then(|h| h.parse().ok()) {
            Some(h) if get => lookup(LookupQuery::Operation(h)),
            Some(_) => unmapped("the status of accepted work is read with a GET"),
            None => unmapped("not an operation handle (op_N)"),
        };
    }
    if let Some(text) = path.strip_prefix("/v1/idempotency/") {
        if !get {
            return unmapped("a key is looked up with a GET");
        }
        return Mapped::Send {
            request: Request::lookup(call, LookupQuery::Key(crate::vocab::ids::Key(0))),
            key: Some(text.to_string()),
        };
    }
    let endpoint = (0..crate::vocab::protocol::MAX_STEPS)
        .map(Endpoint)
        .find(|e| path == create_path(*e) || path.starts_with(&(create_path(*e) + "/")));
    let Some(endpoint) = endpoint else {
        return unmapped("no such endpoint (creates go to /v1/resources)");
    };
    let base = create_path(endpoint);
    let tail = path.strip_prefix(base.as_str()).unwrap_or("");
    match (method.to_ascii_uppercase().as_str(), tail) {
        ("POST", "") | ("POST", "/") => {
            let Some(body) = body else {
                return unmapped("a create needs a JSON body with the call's \"ref\"");
            };
            let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
            let Some(reference) = parsed
                .as_ref()
                .and_then(|b| b.get("ref"))
                .and_then(|r| r.as_str())
            else {
                return unmapped("a create's body must be a JSON object with the call's \"ref\"");
            };
            let Some(params) = parse_reference(reference) else {
                return unmapped(&format!(
                    "\"ref\" {reference:?} is not a reference the agent gave"
                ));
            };
            let mut request = Request::create(call, None);
            request.endpoint = endpoint;
            request.kind = RequestKind::Create { params };
            Mapped::Send { request, key }
        }
        ("DELETE", id) if id.starts_with('/') => {
            let Some(resource) = parse_resource_id(&id[1..]) else {
                return unmapped("not a resource id (res_N)");
            };
            if call.compensates().is_none() {
                return unmapped("a DELETE serves a compensate call only");
            }
            let mut request = Request::create(call, None);
            request.kind = RequestKind::Create {
                params: crate::vocab::protocol::compensation_params(resource),
            };
            Mapped::Send { request, key }
        }
        ("GET", "") | ("GET", "/") => {
            let reference = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("ref="))
                .and_then(parse_reference);
            match reference {
                Some(params) => lookup(LookupQuery::Search { params }),
                None => unmapped("a search needs ?ref= with a reference the agent gave"),
            }
        }
        ("GET", id) if id.starts_with('/') => match parse_resource_id(&id[1..]) {
            Some(r) => lookup(LookupQuery::Resource(r)),
            None => unmapped("not a resource id (res_N)"),
        },
        _ => unmapped("no such route"),
    }
}

/// An HTTP response: status, headers, body.
pub struct HttpReply {
    pub status: u16,
    pub headers: BTreeMap<&'static str, String>,
    pub body: String,
}

/// How the provider's `reply` reads on the wire.
pub fn answer(reply: Reply) -> HttpReply {
    let mut headers = BTreeMap::new();
    headers.insert("content-type", "application/json".to_string());
    let error = |e: &str| serde_json::json!({ "error": e }).to_string();
    let body = match reply {
        Reply::Created { resource, replayed } => {
            if replayed {
                headers.insert("idempotent-replayed", "true".into());
            }
            serde_json::json!({"id": resource_id(resource)}).to_string()
        }
        Reply::Found { resource } => serde_json::json!({"id": resource_id(resource)}).to_string(),
        Reply::Accepted { handle } => {
            serde_json::json!({"operation": format!("op_{handle}"), "status": "pending"})
                .to_string()
        }
        Reply::Pending => serde_json::json!({"status": "pending"}).to_string(),
        Reply::OperationFailed => serde_json::json!({"status": "failed"}).to_string(),
        Reply::AlreadyExists => error("already_exists"),
        Reply::InProgress => error("in_progress"),
        Reply::Mismatch => error("idempotency_key_reused_with_other_parameters"),
        Reply::Expired => error("idempotency_key_expired"),
        Reply::Rejected => error("rejected"),
        Reply::MissingKey => error("idempotency_key_required"),
        Reply::ServerError { replayed } => {
            if replayed {
                headers.insert("idempotent-replayed", "true".into());
            }
            error("server_error")
        }
        Reply::NotFound => error("not_found"),
        Reply::Unsupported => error("unsupported"),
    };
    let status = match reply {
        // The status of accepted work is read with a GET: 200 with the status in the body.
        Reply::OperationFailed => 200,
        r => r.status(),
    };
    HttpReply {
        status,
        headers,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::ids::Key;

    fn call() -> ToolCall {
        ToolCall::for_tests(6)
    }

    fn map_simple(method: &str, url: &str, body: Option<&str>) -> Mapped {
        let mut h = BTreeMap::new();
        h.insert("Idempotency-Key".to_string(), "k-1".to_string());
        map(&call(), method, url, &h, body)
    }

    #[test]
    fn a_create_carries_the_reference_and_the_key() {
        let (tool, args) = invocation(&call());
        assert_eq!(tool, "create");
        assert_eq!(
            args,
            serde_json::json!({"ref": "r7", "tenant": "t0", "authorization": "a6"})
        );
        let body = args.to_string();
        match map_simple("POST", "http://provider.sim/v1/resources", Some(&body)) {
            Mapped::Send { request, key } => {
                assert_eq!(request.kind, RequestKind::Create { params: Params(7) });
                assert_eq!(key.as_deref(), Some("k-1"));
            }
            m => panic!("{m:?}"),
        }
    }

    #[test]
    fn lookups_and_what_does_not_map() {
        let get = |u: &str| map_simple("GET", u, None);
        let q = |m: Mapped| match m {
            Mapped::Send { request, .. } => request.kind,
            m => panic!("{m:?}"),
        };
        assert_eq!(
            q(get("http://provider.sim/v1/resources/res_4")),
            RequestKind::Lookup(LookupQuery::Resource(ResourceId(4)))
        );
        assert_eq!(
            q(get("http://provider.sim/v1/resources?ref=r7")),
            RequestKind::Lookup(LookupQuery::Search { params: Params(7) })
        );
        assert_eq!(
            q(get("http://provider.sim/v1/operations/op_2")),
            RequestKind::Lookup(LookupQuery::Operation(2))
        );
        assert_eq!(
            q(get("http://provider.sim/v1/idempotency/k-1")),
            RequestKind::Lookup(LookupQuery::Key(Key(0)))
        );
        let no = |m: Mapped| match m {
            Mapped::Unmapped(why) => why,
            m => panic!("{m:?}"),
        };
        assert_eq!(
            no(get("https://api.example.com/v1/resources")),
            "GET https://api.example.com/v1/resources: not the simulated provider (its base URL is http://provider.sim)"
        );
        assert!(
            no(map_simple(
                "POST",
                "http://provider.sim/v1/resources",
                Some("{}")
            ))
            .contains("\"ref\"")
        );
        assert!(no(get("http://provider.sim/v2/things")).contains("no such endpoint"));
    }

    #[test]
    fn replies_read_as_a_provider_writes_them() {
        let a = answer(Reply::Created {
            resource: ResourceId(3),
            replayed: true,
        });
        assert_eq!(a.status, 201);
        assert_eq!(a.body, r#"{"id":"res_3"}"#);
        assert_eq!(
            a.headers.get("idempotent-replayed").map(String::as_str),
            Some("true")
        );
        assert_eq!(answer(Reply::InProgress).status, 409);
        assert_eq!(answer(Reply::ServerError { replayed: false }).status, 500);
        assert_eq!(answer(Reply::NotFound).status, 404);
    }
}
