//! The provider's HTTP face: how its API reads on the wire to an external executor
//! (docs/executor-protocol.md, section 6). Which method and path create, read back and
//! search; where the idempotency key travels; how bodies are written; which status and
//! error code each answer of the contract gets; the replay marker. Every preset has its
//! own face (its JSON file's `http` object); a model changes single fields of it with
//! `"provider": {"preset": "stripe_v1", "http": {"create": "POST /v1/charges"}}`.
//!
//! The face only translates: what the provider *does* is the contract's knobs. A field the
//! executor adds beside the tool's arguments (a timestamp, a client header) takes no part in
//! the mismatch rule: the parameters compared under a key are the request's reference.

use serde::{Deserialize, Serialize};

use schemars::JsonSchema;

/// Where the idempotency key travels in a create (its name is `key_name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyIn {
    /// The provider takes no key (a key sent anyway is ignored).
    None,
    /// A request header (`Idempotency-Key`, `PayPal-Request-Id`); matched without regard
    /// to case, as HTTP header names are.
    Header,
    /// A parameter of the query string or of a form body (EC2's `ClientToken`).
    Param,
    /// A field of the JSON body, a dotted path (`ClientRequestToken`; Calendar's event
    /// `id`).
    Body,
}

/// Where the key travels, with its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyCarrier {
    None,
    Header(String),
    Param(String),
    Body(String),
}

/// How request bodies are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BodyFormat {
    /// A JSON object.
    Json,
    /// `application/x-www-form-urlencoded` (Stripe v1, the AWS Query API).
    Form,
}

/// How answers are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerFormat {
    /// JSON; an error is `{"error": {"type", "code", "message"}}`.
    Json,
    /// JSON; an error is an RFC 9457 problem (`application/problem+json`: `type`, `title`,
    /// `status`), as the IETF idempotency draft answers.
    ProblemJson,
    /// XML, as the AWS Query API answers (`<Response><Errors><Error><Code>`).
    Xml,
}

/// The status and error code of one answer of the contract.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The provider's error code (`idempotency_key_in_use`, `IdempotentParameterMismatch`).
    pub code: String,
    /// The error's type or class, where the provider has one (Stripe's
    /// `idempotency_error`); empty: none.
    #[serde(default = "String::new")]
    pub kind: String,
}

impl ErrorAnswer {
    fn new(status: u16, code: &str) -> Self {
        Self {
            status,
            code: code.into(),
            kind: String::new(),
        }
    }
}

macro_rules! face_fields {
    ($( $(#[$doc:meta])* $name:ident : $ty:ty = $default:expr; )*) => {
        /// The provider's HTTP face: every field, with the generic face's values by default.
        #[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields, default)]
        pub struct HttpFace {
            $( $(#[$doc])* pub $name: $ty, )*
        }

        impl Default for HttpFace {
            fn default() -> Self {
                Self { $( $name: $default, )* }
            }
        }

        /// Fields a preset or a model sets; the others keep their value.
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct HttpFacePatch {
            $( #[serde(default)] $name: Option<$ty>, )*
        }

        impl HttpFacePatch {
            pub(crate) fn apply_to(self, base: &mut HttpFace) {
                $( if let Some(v) = self.$name { base.$name = v; } )*
            }
        }
    };
}

face_fields! {
    /// The route of a create: `METHOD /path`, then optionally `?name=value&...` (parameters
    /// that must be present, in the query string or a form body) and `; Header: value` (a
    /// header that must be present, as DynamoDB's `X-Amz-Target`). Workflow step k > 0
    /// posts to `/steps/k` followed by this path. No placeholder.
    create: String = "POST /v1/resources".into();
    /// The route of a compensation (an undo of `{id}`), empty when the API has none.
    compensate: String = "DELETE /v1/resources/{id}".into();
    /// The route of a read by resource id (`{id}`), empty when the API has none.
    read: String = "GET /v1/resources/{id}".into();
    /// The route of a search by the request's reference (`{ref}`); the visibility lag
    /// applies. Empty when the API has none.
    search: String = "GET /v1/resources?ref={ref}".into();
    /// The route of a read by idempotency key (`{key}`), empty when the API has none.
    key_lookup: String = "GET /v1/idempotency/{key}".into();
    /// The route of the status of accepted (202) work (`{handle}`).
    operation: String = "GET /v1/operations/{handle}".into();
    /// Where the idempotency key travels: `none`, a `header`, a `param` (query string or
    /// form body), or a `body` field of a JSON body.
    key_in: KeyIn = KeyIn::Header;
    /// The header, parameter or body field (a dotted path) the key travels in.
    key_name: String = "Idempotency-Key".into();
    /// The header that carries when the client first sent the request (Azure's
    /// `Repeatability-First-Sent`, an IMF-fixdate); the provider's retention window runs
    /// from it when `retention_from` is `client_first_sent`, and a create without it is
    /// refused with the `missing_key` answer. Empty: none.
    first_sent_header: String = String::new();
    /// How a create's body is written.
    body: BodyFormat = BodyFormat::Json;
    /// Where a create's body carries the request's reference: a dotted path in a JSON body
    /// (`ref`, `metadata.ref`, `TransactItems.0.Put.Item.ref.S`), a parameter name in a form
    /// body (`metadata[ref]`).
    ref_field: String = "ref".into();
    /// What a resource id starts with on the wire (`res_` then its number: `res_3`).
    id_prefix: String = "res_".into();
    /// How answers are written.
    answer: AnswerFormat = AnswerFormat::Json;
    /// The status of a create's success (Stripe, EC2 and Adyen answer 200; others 201).
    created_status: u16 = 201;
    /// The header and value that mark an answer replayed from the key record
    /// (`Idempotent-Replayed: true`); empty: none.
    replay_header: String = "Idempotent-Replayed: true".into();
    /// Answers echo the request's key header (Adyen).
    echo_key: bool = false;
    /// A request with this key is still in progress.
    in_progress: ErrorAnswer = ErrorAnswer::new(409, "in_progress");
    /// The key was first used with other parameters.
    mismatch: ErrorAnswer = ErrorAnswer::new(422, "idempotency_key_reused_with_other_parameters");
    /// The key is outside the provider's window.
    expired: ErrorAnswer = ErrorAnswer::new(412, "idempotency_key_expired");
    /// A create without the key (or the first-sent header) the provider requires.
    missing_key: ErrorAnswer = ErrorAnswer::new(400, "idempotency_key_required");
    /// Refused on its merits; nothing was done.
    rejected: ErrorAnswer = ErrorAnswer::new(400, "rejected");
    /// A replay that says only that the resource exists.
    already_exists: ErrorAnswer = ErrorAnswer::new(409, "already_exists");
    /// Indeterminate: the effect may or may not exist.
    server_error: ErrorAnswer = ErrorAnswer::new(500, "server_error");
    /// A lookup that found nothing (not proof of absence while the index lags).
    not_found: ErrorAnswer = ErrorAnswer::new(404, "not_found");
    /// Refused by a rate limit; the answer carries `Retry-After` (whole seconds, rounded up)
    /// when the model's `retry_after_ms` is set.
    throttled: ErrorAnswer = ErrorAnswer::new(429, "rate_limited");
    /// The server gave up waiting for the request.
    request_timeout: ErrorAnswer = ErrorAnswer::new(408, "request_timeout");
}

/// One route of the face, parsed: `METHOD /path/{placeholder}?param=value; Header: value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub method: String,
    pub path: String,
    /// Parameters that must be present (query string or form body), value templates.
    pub params: Vec<(String, String)>,
    /// A header that must be present, with its value.
    pub header: Option<(String, String)>,
}

/// The placeholders a route may use.
const PLACEHOLDERS: [&str; 4] = ["{id}", "{ref}", "{key}", "{handle}"];

impl Route {
    /// Parses `text`; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Route, String> {
        let (main, header) = match text.split_once(';') {
            Some((m, h)) => {
                let Some((name, value)) = h.split_once(':') else {
                    return Err(format!(
                        "{text:?}: after ';' comes a header the request must carry, as \"Name: value\""
                    ));
                };
                (
                    m.trim(),
                    Some((name.trim().to_string(), value.trim().to_string())),
                )
            }
            None => (text.trim(), None),
        };
        let Some((method, target)) = main.split_once(' ') else {
            return Err(format!(
                "{text:?}: expected \"METHOD /path\", e.g. \"POST /v1/resources\""
            ));
        };
        let method = method.trim();
        if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method) {
            return Err(format!(
                "{text:?}: the method {method:?} is not one of GET, POST, PUT, PATCH, DELETE"
            ));
        }
        let target = target.trim();
        if !target.starts_with('/') {
            return Err(format!("{text:?}: the path must start with '/'"));
        }
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let mut params = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            params.push((k.to_string(), v.to_string()));
        }
        let mut rest = text.to_string();
        for p in PLACEHOLDERS {
            rest = rest.replace(p, "");
        }
        if rest.contains('{') || rest.contains('}') {
            return Err(format!(
                "{text:?}: a placeholder is one of {}",
                PLACEHOLDERS.join(", ")
            ));
        }
        Ok(Route {
            method: method.to_string(),
            path: path.to_string(),
            params,
            header,
        })
    }
}

impl HttpFace {
    /// Where the key travels, with its name.
    pub fn key(&self) -> KeyCarrier {
        let n = self.key_name.clone();
        match self.key_in {
            KeyIn::None => KeyCarrier::None,
            KeyIn::Header => KeyCarrier::Header(n),
            KeyIn::Param => KeyCarrier::Param(n),
            KeyIn::Body => KeyCarrier::Body(n),
        }
    }

    /// The routes by field name, empty ones left out.
    pub fn routes(&self) -> Vec<(&'static str, &str)> {
        [
            ("create", self.create.as_str()),
            ("compensate", self.compensate.as_str()),
            ("read", self.read.as_str()),
            ("search", self.search.as_str()),
            ("key_lookup", self.key_lookup.as_str()),
            ("operation", self.operation.as_str()),
        ]
        .into_iter()
        .filter(|(_, r)| !r.is_empty())
        .collect()
    }

    /// What is wrong with the face, as (field, message) pairs.
    pub fn problems(&self) -> Vec<(String, String)> {
        // The order is the order a user reads the face in: routes, then the fields that
        // shape a create, then the key, then the answers' statuses.
        let mut out = Vec::new();
        self.route_problems(&mut out);
        self.create_field_problems(&mut out);
        self.key_problems(&mut out);
        self.answer_problems(&mut out);
        out
    }

    /// Each route that does not parse, then each route that lacks, repeats or misplaces
    /// the placeholder it alone may carry.
    fn route_problems(&self, out: &mut Vec<(String, String)>) {
        for (field, text) in self.routes() {
            if let Err(e) = Route::parse(text) {
                out.push((at(field), e));
            }
        }
        let needs = [
            ("create", "", self.create.as_str()),
            ("compensate", "{id}", self.compensate.as_str()),
            ("read", "{id}", self.read.as_str()),
            ("search", "{ref}", self.search.as_str()),
            ("key_lookup", "{key}", self.key_lookup.as_str()),
            ("operation", "{handle}", self.operation.as_str()),
        ];
        for (field, placeholder, text) in needs {
            if field == "create" && text.is_empty() {
                out.push((at(field), "a provider's face needs a create route".into()));
            }
            if text.is_empty() {
                continue;
            }
            if let Some(why) = placeholder_problem(field, placeholder, text) {
                out.push((at(field), why));
            }
        }
    }

    /// The fields that say how a create's answer is read: where the reference is, what an
    /// id looks like, which status means created, how a replay is marked.
    fn create_field_problems(&self, out: &mut Vec<(String, String)>) {
        if self.ref_field.is_empty() {
            out.push((
                at("ref_field"),
                "must name where a create's body carries the reference".into(),
            ));
        }
        if self.id_prefix.is_empty()
            || self
                .id_prefix
                .chars()
                .any(|c| c.is_ascii_digit() || c == '/')
        {
            out.push((
                at("id_prefix"),
                format!(
                    "{:?}: a resource id is this prefix and a number: it must be non-empty, without digits or '/'",
                    self.id_prefix
                ),
            ));
        }
        if !(200..=299).contains(&self.created_status) {
            out.push((
                at("created_status"),
                format!(
                    "{} is not a success status (200 to 299)",
                    self.created_status
                ),
            ));
        }
        if !self.replay_header.is_empty() && !self.replay_header.contains(':') {
            out.push((
                at("replay_header"),
                format!(
                    "{:?}: expected \"Name: value\", e.g. \"Idempotent-Replayed: true\"",
                    self.replay_header
                ),
            ));
        }
    }

    /// The idempotency key needs a name, and a body field only exists in a JSON body.
    fn key_problems(&self, out: &mut Vec<(String, String)>) {
        match self.key() {
            KeyCarrier::Header(n) | KeyCarrier::Param(n) | KeyCarrier::Body(n) if n.is_empty() => {
                out.push((
                    at("key_name"),
                    format!(
                        "names no {:?}: give the key's header, parameter or field",
                        self.key_in
                    ),
                ))
            }
            KeyCarrier::Body(_) if self.body == BodyFormat::Form => out.push((
                at("key_in"),
                "a key in a body field needs a JSON body; with a form body use \"param\"".into(),
            )),
            _ => {}
        }
    }

    /// Each answer's status is an HTTP status, and an error one, except already-exists:
    /// it is a replay that says the resource exists, which a provider may answer as a success.
    fn answer_problems(&self, out: &mut Vec<(String, String)>) {
        for (name, a) in [
            ("in_progress", &self.in_progress),
            ("mismatch", &self.mismatch),
            ("expired", &self.expired),
            ("missing_key", &self.missing_key),
            ("rejected", &self.rejected),
            ("already_exists", &self.already_exists),
            ("server_error", &self.server_error),
            ("not_found", &self.not_found),
            ("throttled", &self.throttled),
            ("request_timeout", &self.request_timeout),
        ] {
            if !(100..=599).contains(&a.status) {
                out.push((
                    format!("provider.http.{name}.status"),
                    format!("{} is not an HTTP status (100 to 599)", a.status),
                ));
            } else if a.status < 400 && name != "already_exists" {
                out.push((
                    format!("provider.http.{name}.status"),
                    format!("{} is not an error status (400 to 599)", a.status),
                ));
            }
        }
    }
}

/// The path a problem in field `f` of the face is reported under.
fn at(f: &str) -> String {
    format!("provider.http.{f}")
}

/// What is wrong with a non-empty route's placeholders, if anything: it must carry its own
/// placeholder (none for create), exactly once, in the path or a parameter's value. Any
/// other would be captured and dropped, or compared as text and never match.
fn placeholder_problem(field: &str, placeholder: &str, text: &str) -> Option<String> {
    if !placeholder.is_empty() && !text.contains(placeholder) {
        return Some(format!("{text:?} does not say where {placeholder} goes"));
    }
    let others: Vec<&str> = PLACEHOLDERS
        .iter()
        .copied()
        .filter(|p| *p != placeholder && text.contains(p))
        .collect();
    let header = text.split_once(';').map_or("", |(_, h)| h);
    if !others.is_empty() {
        Some(format!(
            "{text:?}: {} has no meaning in the {field} route{}",
            others.join(", "),
            if placeholder.is_empty() {
                String::new()
            } else {
                format!(" (only {placeholder})")
            }
        ))
    } else if !placeholder.is_empty() && text.matches(placeholder).count() > 1 {
        Some(format!("{text:?}: {placeholder} stands more than once"))
    } else if header.contains('{') {
        Some(format!(
            "{text:?}: a header after ';' is matched as written; a placeholder goes in the path or a parameter"
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_parse_with_parameters_and_a_header() {
        let r = Route::parse("POST /?Action=RunInstances; X-Amz-Target: Foo.Bar").unwrap();
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/");
        assert_eq!(r.params, vec![("Action".into(), "RunInstances".into())]);
        assert_eq!(r.header, Some(("X-Amz-Target".into(), "Foo.Bar".into())));
        assert!(Route::parse("/v1/x").unwrap_err().contains("METHOD /path"));
        assert!(Route::parse("FETCH /v1").unwrap_err().contains("FETCH"));
        assert!(
            Route::parse("GET v1")
                .unwrap_err()
                .contains("start with '/'")
        );
        assert!(
            Route::parse("GET /v1/{nope}")
                .unwrap_err()
                .contains("placeholder")
        );
    }

    #[test]
    fn the_generic_face_is_valid_and_a_bad_one_says_where() {
        assert_eq!(HttpFace::default().problems(), vec![]);
        let bad = HttpFace {
            read: "GET /v1/resources".into(),
            id_prefix: "r2_".into(),
            ..HttpFace::default()
        };
        let p = bad.problems();
        assert_eq!(p[0].0, "provider.http.read");
        assert!(p[0].1.contains("{id}"), "{p:?}");
        assert_eq!(p[1].0, "provider.http.id_prefix");
        // A placeholder a route cannot use would be captured and dropped, or compared as
        // text and never match: refused.
        for (face, field, words) in [
            (
                HttpFace {
                    create: "PUT /v1/things/{key}".into(),
                    ..HttpFace::default()
                },
                "provider.http.create",
                "{key} has no meaning in the create route",
            ),
            (
                HttpFace {
                    search: "GET /v1/r?ref={ref}&also={ref}".into(),
                    ..HttpFace::default()
                },
                "provider.http.search",
                "{ref} stands more than once",
            ),
            (
                HttpFace {
                    read: "GET /v1/r/{id}; X-Ref: {id}".into(),
                    ..HttpFace::default()
                },
                "provider.http.read",
                "stands more than once",
            ),
            (
                HttpFace {
                    key_lookup: "GET /v1/k/{key}; X-Tenant: {ref}".into(),
                    ..HttpFace::default()
                },
                "provider.http.key_lookup",
                "{ref} has no meaning in the key_lookup route (only {key})",
            ),
            (
                HttpFace {
                    created_status: 302,
                    ..HttpFace::default()
                },
                "provider.http.created_status",
                "302 is not a success status",
            ),
        ] {
            let p = face.problems();
            assert_eq!(p.len(), 1, "{p:?}");
            assert_eq!(p[0].0, field);
            assert!(p[0].1.contains(words), "{p:?}");
        }
    }
}
