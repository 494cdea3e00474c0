//! The provider's HTTP face (docs/executor-protocol.md, section 6): an executor's HTTP
//! request mapped to the simulator's [`Request`], and the provider's [`Reply`] written back
//! as an HTTP response, both as the model's [`HttpFace`] says (each preset has its own:
//! Stripe's form bodies, EC2's Query API and XML, Azure's `Repeatability-*` headers...).

use std::collections::BTreeMap;

use crate::model::http_face::{AnswerFormat, BodyFormat, ErrorAnswer, HttpFace, KeyCarrier, Route};
use crate::sim::Millis;
use crate::vocab::ids::{Endpoint, Key, Params, ResourceId};
use crate::vocab::protocol::{LookupQuery, Reply, Request, RequestKind, ToolCall};

/// Where the simulated provider answers.
pub const BASE_URL: &str = "http://provider.sim";

/// What a request maps to.
#[derive(Debug, PartialEq)]
pub enum Mapped {
    /// A request to the provider; `key` is the key's text as sent, if any;
    /// `first_sent_ms` the time the first-sent header names, on a face that has one.
    Send {
        request: Request,
        key: Option<String>,
        first_sent_ms: Option<Millis>,
    },
    /// Answered by the face itself, before the provider (a required header is missing).
    Local(Reply),
    /// Nothing the provider knows: answered 404 by the face, with the reason in a warning
    /// (a lookup the face has no route for, as the real API answers).
    Unmapped(String),
    /// A request the face cannot serve (to another host, or a create that matches no route
    /// of the face): bad input, which stops the command unless the user asked for leniency;
    /// the reason names the `provider.http` field to set.
    Refused(String),
}

/// A face ready to map requests: the model's [`HttpFace`] with its routes parsed.
#[derive(Clone, Debug)]
pub struct Face {
    pub spec: HttpFace,
    /// The should-retry header some answers carry (`provider.should_retry`).
    pub should_retry: crate::model::provider::ShouldRetry,
    create: Option<Route>,
    compensate: Option<Route>,
    read: Option<Route>,
    search: Option<Route>,
    key_lookup: Option<Route>,
    operation: Option<Route>,
}

/// The reference of a create with parameters `params`, as the tool's arguments carry it.
pub fn reference(params: Params) -> String {
    format!("r{}", params.0)
}

fn parse_reference(text: &str) -> Option<Params> {
    text.strip_prefix('r')?.parse().ok().map(Params)
}

/// The value a route's placeholder `p` caught (empty when it caught none).
fn caught_value(caught: &[(&str, String)], p: &str) -> String {
    caught
        .iter()
        .find(|(n, _)| *n == p)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// The virtual wall clock's origin: `now_ms` 0 is 2026-01-01T00:00:00Z.
const EPOCH_DAYS: i64 = 20_454;

/// Days since 1970-01-01 of a civil date (proleptic Gregorian; H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The virtual time an IMF-fixdate names (`Thu, 01 Jan 2026 00:00:05 GMT`), in ms since
/// the run began; `None` when it is not one, or names a time before the run.
pub fn parse_imf_fixdate(text: &str) -> Option<Millis> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|x| x == month)? as i64 + 1;
    let (d, y): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, mi, s] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&d) || *h > 23 || *mi > 59 || *s > 60 {
        return None;
    }
    let secs = (days_from_civil(y, m, d) - EPOCH_DAYS) * 86_400 + h * 3_600 + mi * 60 + s;
    u64::try_from(secs).ok().map(|s| s * 1_000)
}

/// Percent-decodes `text`; `plus` also turns `+` into a space (form encoding).
fn decode(text: &str, plus: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' if plus => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `a=1&b=2`, decoded, in order.
fn pairs(text: &str, plus: bool) -> Vec<(String, String)> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k, plus), decode(v, plus))
        })
        .collect()
}

/// Matches `text` against `template` with at most one placeholder: the captured value.
fn capture<'t>(template: &str, text: &'t str) -> Option<Option<(&'static str, &'t str)>> {
    for p in ["{id}", "{ref}", "{key}", "{handle}"] {
        if let Some((before, after)) = template.split_once(p) {
            let rest = text.strip_prefix(before)?.strip_suffix(after)?;
            return (!rest.is_empty()).then_some(Some((p, rest)));
        }
    }
    (template == text).then_some(None)
}

/// A JSON value at a dotted path (`metadata.ref`, `TransactItems.0.Put`).
fn at_path<'v>(v: &'v serde_json::Value, path: &str) -> Option<&'v serde_json::Value> {
    path.split('.')
        .try_fold(v, |v, part| match part.parse::<usize>() {
            Ok(i) if v.is_array() => v.get(i),
            _ => v.get(part),
        })
}

/// A request as the face reads it: decoded parameters, headers and body.
struct Incoming<'a> {
    method: String,
    path: String,
    params: Vec<(String, String)>,
    headers: &'a BTreeMap<String, String>,
    json: Option<serde_json::Value>,
}

impl Incoming<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the request's method and path are `route`'s (its parameters and header
    /// aside).
    fn path_fits(&self, route: &Route) -> bool {
        let want: Vec<&str> = route.path.split('/').collect();
        let got: Vec<&str> = self.path.split('/').collect();
        self.method.eq_ignore_ascii_case(&route.method)
            && want.len() == got.len()
            && want
                .iter()
                .zip(&got)
                .all(|(w, g)| capture(w, &decode(g, false)).is_some())
    }

    /// The placeholder values if `route` matches, else `None`.
    fn matches(&self, route: &Route) -> Option<Vec<(&'static str, String)>> {
        if !self.method.eq_ignore_ascii_case(&route.method) {
            return None;
        }
        let want: Vec<&str> = route.path.split('/').collect();
        let got: Vec<&str> = self.path.split('/').collect();
        if want.len() != got.len() {
            return None;
        }
        let mut caught = Vec::new();
        for (w, g) in want.iter().zip(&got) {
            if let Some(c) = capture(w, &decode(g, false))? {
                caught.push((c.0, c.1.to_string()));
            }
        }
        for (name, template) in &route.params {
            let value = self.param(name)?;
            if let Some(c) = capture(template, value)? {
                caught.push((c.0, c.1.to_string()));
            }
        }
        if let Some((name, value)) = &route.header
            && self.header(name).is_none_or(|v| v.trim() != value)
        {
            return None;
        }
        Some(caught)
    }
}

fn parsed(text: &str) -> Option<Route> {
    (!text.is_empty())
        .then(|| Route::parse(text).ok())
        .flatten()
}

impl Face {
    /// The face of `spec` (validated with the model: a route that does not parse matches
    /// nothing).
    pub fn new(spec: &HttpFace) -> Face {
        Face {
            spec: spec.clone(),
            should_retry: Default::default(),
            create: parsed(&spec.create),
            compensate: parsed(&spec.compensate),
            read: parsed(&spec.read),
            search: parsed(&spec.search),
            key_lookup: parsed(&spec.key_lookup),
            operation: parsed(&spec.operation),
        }
    }

    /// The id of `resource` on the wire.
    pub fn resource_id(&self, resource: ResourceId) -> String {
        format!("{}{}", self.spec.id_prefix, resource.0)
    }

    /// The resource an id on the wire names.
    pub fn parse_resource_id(&self, text: &str) -> Option<ResourceId> {
        text.strip_prefix(self.spec.id_prefix.as_str())?
            .parse()
            .ok()
            .map(ResourceId)
    }

    /// The tool name and arguments the agent's `call` reaches an executor as.
    pub fn invocation(&self, call: &ToolCall) -> (&'static str, serde_json::Value) {
        let tenant = format!("t{}", call.tenant.0);
        let authorization = format!("a{}", call.auth.0);
        if let Some(target) = call.compensates() {
            return (
                "compensate",
                serde_json::json!({"target": self.resource_id(target), "tenant": tenant, "authorization": authorization}),
            );
        }
        let mut args = serde_json::json!({"ref": reference(call.params), "tenant": tenant, "authorization": authorization});
        if call.endpoint.0 > 0 {
            args["step"] = serde_json::json!(call.endpoint.0);
        }
        ("create", args)
    }

    /// What `init` tells the process of the provider: where it answers, and its face.
    pub fn describe(&self) -> super::to_exec::Provider {
        let key_header = match self.spec.key() {
            KeyCarrier::Header(h) => Some(h),
            _ => None,
        };
        super::to_exec::Provider {
            base_url: BASE_URL.to_string(),
            key_header,
            http: serde_json::to_value(&self.spec).unwrap_or(serde_json::Value::Null),
        }
    }

    /// Maps an executor's request, made for `call` at virtual time `now`.
    pub fn map(
        &self,
        now: Millis,
        call: &ToolCall,
        method: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
        body: Option<&str>,
    ) -> Mapped {
        let unmapped = |why: &str| Mapped::Unmapped(format!("{method} {url}: {why}"));
        let Some(rest) = url.strip_prefix(BASE_URL) else {
            let host = url.split_once("://").map_or(url, |(_, r)| r);
            let host = host.split(['/', '?']).next().unwrap_or(host);
            if let Some((exporter, switch)) = exporter(host, url) {
                return Mapped::Refused(format!(
                    "{method} {url}: host {host:?} is not the simulated provider's: this looks \
                     like {exporter}, switched on by the environment the executor inherits \
                     (docs/your-executor.md, \"The executor's environment\"): {switch}"
                ));
            }
            return Mapped::Refused(format!(
                "{method} {url}: host {host:?} is not the simulated provider's (its base URL is \
                 {BASE_URL}): send the provider's requests to the base_url that init gives, on \
                 the routes of the model's provider.http ({})",
                self.field_for(method)
            ));
        };
        let (endpoint, incoming) = self.incoming(method, rest, headers, body);
        if let Some(_caught) = self.create.as_ref().and_then(|r| incoming.matches(r)) {
            return self.map_create(now, call, endpoint, &incoming, &unmapped);
        }
        if self.create_shaped(&incoming) {
            let create = &self.spec.create;
            return Mapped::Refused(format!(
                "{method} {url}: a create that matches no route of the provider's face: set \
                 the model's provider.http.create to its route (now {create:?})"
            ));
        }
        if endpoint.0 > 0 {
            return unmapped("only a create is sent to a workflow step's /steps/{k} path");
        }
        self.map_other(call, &incoming, &unmapped)
    }

    /// The request as the face reads it (its path, the parameters of its query string and
    /// form body, its JSON body), and the workflow step its path names (`/steps/{k}` before
    /// the create path; step 0 without).
    fn incoming<'a>(
        &self,
        method: &str,
        rest: &str,
        headers: &'a BTreeMap<String, String>,
        body: Option<&str>,
    ) -> (Endpoint, Incoming<'a>) {
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let path = if path.is_empty() { "/" } else { path };
        // A query string is form-encoded too: `+` is a space (requests writes it so).
        let mut params = pairs(query, true);
        let form = headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("content-type")
                && v.starts_with("application/x-www-form-urlencoded")
        }) || (self.spec.body == BodyFormat::Form
            && body.is_some_and(|b| !b.trim_start().starts_with('{')));
        let json = match body {
            Some(b) if !form => serde_json::from_str(b).ok(),
            _ => None,
        };
        if form && let Some(b) = body {
            params.extend(pairs(b, true));
        }
        let (endpoint, path) = match path.strip_prefix("/steps/").and_then(|r| {
            let (k, tail) = r.split_once('/').unwrap_or((r, ""));
            Some((k.parse::<u32>().ok()?, tail))
        }) {
            Some((k, tail)) if k > 0 && k < crate::vocab::protocol::MAX_STEPS => {
                (Endpoint(k), format!("/{tail}"))
            }
            _ => (Endpoint(0), path.to_string()),
        };
        let incoming = Incoming {
            method: method.to_ascii_uppercase(),
            path,
            params,
            headers,
            json,
        };
        (endpoint, incoming)
    }

    /// Maps a request that is not a create: a compensation, or a lookup (a search by
    /// reference, a read by id, a lookup by key, an accepted operation's status). A route
    /// matches only where its placeholders parse (`/v1/customers/search` is not a read of a
    /// customer whose id is "search"); when none does, the first near miss is the hint, else
    /// the face's routes are.
    fn map_other(
        &self,
        call: &ToolCall,
        incoming: &Incoming<'_>,
        unmapped: &dyn Fn(&str) -> Mapped,
    ) -> Mapped {
        let found = |r: &Option<Route>| r.as_ref().and_then(|r| incoming.matches(r));
        let lookup = |q: LookupQuery| Mapped::Send {
            request: Request::lookup(call, q),
            key: None,
            first_sent_ms: None,
        };
        let mut hint: Option<String> = None;
        let id_of = |caught: &[(&str, String)], hint: &mut Option<String>| {
            let r = self.parse_resource_id(&caught_value(caught, "{id}"));
            if r.is_none() && hint.is_none() {
                *hint = Some(format!(
                    "{:?} is not a resource id ({}N)",
                    caught_value(caught, "{id}"),
                    self.spec.id_prefix
                ));
            }
            r
        };
        if let Some(caught) = found(&self.compensate)
            && let Some(resource) = id_of(&caught, &mut hint)
        {
            return self.map_compensate(call, resource, incoming, unmapped);
        }
        if let Some(caught) = found(&self.search) {
            match parse_reference(&caught_value(&caught, "{ref}")) {
                Some(params) => return lookup(LookupQuery::Search { params }),
                None => {
                    hint.get_or_insert_with(|| "a search needs a reference the agent gave".into());
                }
            }
        }
        if let Some(caught) = found(&self.read)
            && let Some(r) = id_of(&caught, &mut hint)
        {
            return lookup(LookupQuery::Resource(r));
        }
        if let Some(caught) = found(&self.key_lookup) {
            return Mapped::Send {
                request: Request::lookup(call, LookupQuery::Key(Key(0))),
                key: Some(caught_value(&caught, "{key}")),
                first_sent_ms: None,
            };
        }
        if let Some(caught) = found(&self.operation) {
            match caught_value(&caught, "{handle}")
                .strip_prefix("op_")
                .and_then(|h| h.parse().ok())
            {
                Some(h) => return lookup(LookupQuery::Operation(h)),
                None => {
                    hint.get_or_insert_with(|| "not an operation handle (op_N)".into());
                }
            }
        }
        unmapped(&hint.unwrap_or_else(|| self.no_route()))
    }

    /// A compensation of `resource`: a create of its undoing, for a compensate call only.
    fn map_compensate(
        &self,
        call: &ToolCall,
        resource: ResourceId,
        incoming: &Incoming<'_>,
        unmapped: &dyn Fn(&str) -> Mapped,
    ) -> Mapped {
        if call.compensates().is_none() {
            return unmapped("a compensation serves a compensate call only");
        }
        let mut request = Request::create(call, None);
        request.kind = RequestKind::Create {
            params: crate::vocab::protocol::compensation_params(resource),
        };
        Mapped::Send {
            request,
            key: self.key_of(incoming),
            first_sent_ms: None,
        }
    }

    /// Whether a request that matched no route is a create: the create route's method, on
    /// a path no route of the face has (a lookup sent with the same method, as DynamoDB's
    /// `POST /` with another `X-Amz-Target`, shares a route's path and stays a lookup).
    fn create_shaped(&self, incoming: &Incoming<'_>) -> bool {
        let Some(create) = &self.create else {
            return false;
        };
        let routes = [
            &self.create,
            &self.compensate,
            &self.read,
            &self.search,
            &self.key_lookup,
            &self.operation,
        ];
        incoming.method.eq_ignore_ascii_case(&create.method)
            && !routes
                .iter()
                .filter_map(|r| r.as_ref())
                .any(|r| incoming.path_fits(r))
    }

    /// The `provider.http` field(s) whose route a request of `method` would match: the
    /// create's for the create's method, else the lookups' and the compensation's.
    fn field_for(&self, method: &str) -> String {
        match &self.create {
            Some(c) if c.method.eq_ignore_ascii_case(method) => format!(
                "set provider.http.create to the create's route; now {:?}",
                self.spec.create
            ),
            _ => "set provider.http.read, search, key_lookup, operation or compensate".into(),
        }
    }

    /// Why a request matched no route: the face's routes, to compare it with.
    fn no_route(&self) -> String {
        let routes: Vec<String> = self
            .spec
            .routes()
            .iter()
            .map(|(f, r)| format!("{f} {r:?}"))
            .collect();
        format!(
            "no route of this provider's face matches (provider.http: {})",
            routes.join(", ")
        )
    }

    fn key_of(&self, incoming: &Incoming<'_>) -> Option<String> {
        match self.spec.key() {
            KeyCarrier::None => None,
            KeyCarrier::Header(h) => incoming.header(&h).map(str::to_string),
            KeyCarrier::Param(p) => incoming.param(&p).map(str::to_string),
            KeyCarrier::Body(f) => incoming
                .json
                .as_ref()
                .and_then(|j| at_path(j, &f))
                .and_then(|v| v.as_str())
                .map(str::to_string),
        }
    }

    fn map_create(
        &self,
        now: Millis,
        call: &ToolCall,
        endpoint: Endpoint,
        incoming: &Incoming<'_>,
        unmapped: &dyn Fn(&str) -> Mapped,
    ) -> Mapped {
        let field = &self.spec.ref_field;
        let reference = match &incoming.json {
            Some(j) => at_path(j, field)
                .and_then(|v| v.as_str())
                .map(str::to_string),
            None => incoming.param(field).map(str::to_string),
        };
        let Some(reference) = reference else {
            let how = match self.spec.body {
                BodyFormat::Json => format!("a JSON body with the call's reference at {field:?}"),
                BodyFormat::Form => format!("a form body with the call's reference in {field:?}"),
            };
            return unmapped(&format!("a create needs {how}"));
        };
        let Some(params) = parse_reference(&reference) else {
            return unmapped(&format!(
                "the reference {reference:?} is not one the agent gave"
            ));
        };
        if call.compensates().is_some() {
            return unmapped("a compensate call undoes a resource; it does not create one");
        }
        let mut first_sent_ms = None;
        let key = self.key_of(incoming);
        if !self.spec.first_sent_header.is_empty() {
            // Both headers of a repeatable request are mandatory (OASIS Repeatable Requests).
            let (Some(text), Some(_)) = (incoming.header(&self.spec.first_sent_header), &key)
            else {
                return Mapped::Local(Reply::MissingKey);
            };
            // A date that does not parse, or later than the provider's clock (a client that
            // would stretch the window without end), is a malformed repeatable request.
            match parse_imf_fixdate(text) {
                Some(t) if t <= now => first_sent_ms = Some(t),
                _ => return Mapped::Local(Reply::MissingKey),
            }
        }
        let mut request = Request::create(call, None);
        request.endpoint = endpoint;
        request.kind = RequestKind::Create { params };
        Mapped::Send {
            request,
            key,
            first_sent_ms,
        }
    }

    /// How the provider's `reply` reads on the wire; `key` is the request's key header's
    /// value (echoed where the provider does).
    pub fn answer(&self, reply: Reply, key: Option<&str>) -> HttpReply {
        let mut answer = self.answer_without_hints(reply, key);
        let class =
            crate::model::stack::ErrorClass::of(crate::vocab::protocol::Response::Reply(reply));
        if let Some(v) = class.and_then(|c| self.should_retry.on(c)) {
            answer
                .headers
                .insert(self.should_retry.header.to_ascii_lowercase(), v.to_string());
        }
        answer
    }

    /// The answer to `reply`, without a should-retry header.
    fn answer_without_hints(&self, reply: Reply, key: Option<&str>) -> HttpReply {
        let s = &self.spec;
        let mut headers = self.headers(key);
        let (status, body) = match reply {
            Reply::Created { resource, replayed } => {
                if replayed {
                    self.replayed(&mut headers);
                }
                self.found(resource, s.created_status)
            }
            Reply::Found { resource } => self.found(resource, 200),
            Reply::Accepted { handle } => (
                202,
                self.state(
                    serde_json::json!({"operation": format!("op_{handle}"), "status": "pending"}),
                ),
            ),
            Reply::Pending => (200, self.state(serde_json::json!({"status": "pending"}))),
            // The status of accepted work is read with a GET: 200 with the status in the body.
            Reply::OperationFailed => (200, self.state(serde_json::json!({"status": "failed"}))),
            Reply::ServerError { replayed } => {
                if replayed {
                    self.replayed(&mut headers);
                }
                self.error(&s.server_error, &mut headers)
            }
            Reply::AlreadyExists => self.error(&s.already_exists, &mut headers),
            Reply::InProgress => self.error(&s.in_progress, &mut headers),
            Reply::Mismatch => self.error(&s.mismatch, &mut headers),
            Reply::Expired => self.error(&s.expired, &mut headers),
            Reply::Rejected => self.error(&s.rejected, &mut headers),
            Reply::MissingKey => self.error(&s.missing_key, &mut headers),
            Reply::NotFound => self.error(&s.not_found, &mut headers),
            Reply::Throttled { retry_after_ms } => {
                if let Some(ms) = retry_after_ms {
                    // Delay-seconds (RFC 9110 §10.2.3): whole seconds, never shorter.
                    headers.insert("retry-after".into(), ms.div_ceil(1_000).to_string());
                }
                self.error(&s.throttled, &mut headers)
            }
            Reply::RequestTimeout => self.error(&s.request_timeout, &mut headers),
            // A read back the contract does not offer (`provider.lookup`): 501, never to be
            // mistaken for "not found".
            Reply::Unsupported => {
                let e = ErrorAnswer {
                    status: 501,
                    code: "lookup_not_supported".into(),
                    kind: String::new(),
                };
                self.error(&e, &mut headers)
            }
        };
        HttpReply {
            status,
            headers,
            body,
        }
    }

    /// Whether the face answers in XML (EC2's Query API), else JSON.
    fn xml(&self) -> bool {
        self.spec.answer == AnswerFormat::Xml
    }

    /// The headers of every answer: its content type, and the request's key where the
    /// provider echoes it (`key`: the key header's value).
    fn headers(&self, key: Option<&str>) -> BTreeMap<String, String> {
        let mut headers = BTreeMap::new();
        let content_type = if self.xml() {
            "text/xml;charset=UTF-8"
        } else {
            "application/json"
        };
        headers.insert("content-type".to_string(), content_type.to_string());
        if self.spec.echo_key
            && let (KeyCarrier::Header(h), Some(k)) = (self.spec.key(), key)
        {
            headers.insert(h.to_ascii_lowercase(), k.to_string());
        }
        headers
    }

    /// Marks an answer replayed under its key, on a face that says so (`replay_header`).
    fn replayed(&self, headers: &mut BTreeMap<String, String>) {
        if let Some((n, v)) = self.spec.replay_header.split_once(':') {
            headers.insert(n.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }

    /// An answer naming `resource`, with `status`.
    fn found(&self, resource: ResourceId, status: u16) -> (u16, String) {
        let id = self.resource_id(resource);
        let body = if self.xml() {
            format!(
                "<Response><instancesSet><item><instanceId>{id}</instanceId></item></instancesSet></Response>"
            )
        } else {
            serde_json::json!({ "id": id }).to_string()
        };
        (status, body)
    }

    /// The body of an accepted operation's state (`fields`: its `status`, and its
    /// `operation` handle when it is accepted).
    fn state(&self, fields: serde_json::Value) -> String {
        if self.xml() {
            let status = fields["status"].as_str().unwrap_or("");
            let op = fields["operation"]
                .as_str()
                .map(|o| format!("<operation>{o}</operation>"))
                .unwrap_or_default();
            format!("<Response>{op}<status>{status}</status></Response>")
        } else {
            fields.to_string()
        }
    }

    fn error(&self, e: &ErrorAnswer, headers: &mut BTreeMap<String, String>) -> (u16, String) {
        let message = if e.code.is_empty() { &e.kind } else { &e.code }.replace('_', " ");
        let body = match self.spec.answer {
            AnswerFormat::Json => {
                let mut err = serde_json::json!({ "message": message });
                if !e.code.is_empty() {
                    err["code"] = serde_json::json!(e.code);
                }
                if !e.kind.is_empty() {
                    err["type"] = serde_json::json!(e.kind);
                }
                serde_json::json!({ "error": err }).to_string()
            }
            AnswerFormat::ProblemJson => {
                headers.insert("content-type".into(), "application/problem+json".into());
                serde_json::json!({"type": format!("about:blank#{}", e.code), "title": message, "status": e.status})
                    .to_string()
            }
            AnswerFormat::Xml => format!(
                "<Response><Errors><Error><Code>{}</Code><Message>{message}</Message></Error></Errors></Response>",
                e.code
            ),
        };
        (e.status, body)
    }

    /// The answer to a request the face could not map.
    pub fn unmapped_answer(&self) -> HttpReply {
        let mut headers = BTreeMap::new();
        headers.insert("content-type".to_string(), "application/json".to_string());
        HttpReply {
            status: 404,
            headers,
            body: "{\"error\":\"unmapped\"}".into(),
        }
    }
}

/// An HTTP response: status, headers, body.
pub struct HttpReply {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: String,
}

/// A tracing or telemetry exporter's request, by its host (`host[:port]`) or URL: its name
/// and the variable that turns it off. The executor inherits retrylab's environment, where
/// such exporters are often switched on; their requests are no provider's.
fn exporter(host: &str, url: &str) -> Option<(&'static str, &'static str)> {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => (name, port),
        _ => (host, ""),
    };
    let name = name.rsplit('@').next().unwrap_or(name).to_ascii_lowercase();
    let under = |suffix: &str| name == suffix || name.ends_with(&format!(".{suffix}"));
    if under("smith.langchain.com") {
        Some((
            "LangSmith tracing (LangChain, LangGraph)",
            "set LANGSMITH_TRACING=false and LANGCHAIN_TRACING_V2=false, or unset them",
        ))
    } else if port == "4317" || port == "4318" {
        Some((
            "an OpenTelemetry OTLP exporter",
            "set OTEL_SDK_DISABLED=true",
        ))
    } else if name == "api.openai.com" && url.contains("/v1/traces/ingest") {
        Some((
            "OpenAI Agents SDK tracing",
            "set OPENAI_AGENTS_DISABLE_TRACING=1",
        ))
    } else if under("sentry.io") {
        Some(("Sentry", "unset SENTRY_DSN"))
    } else if under("posthog.com") {
        Some((
            "PostHog usage telemetry",
            "the embedding library's opt-out (ANONYMIZED_TELEMETRY=false for some)",
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
