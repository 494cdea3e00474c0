//! What crosses the boundaries: agent ↔ executor (tool calls and results) and
//! executor ↔ provider (requests and replies).

use std::fmt;

use crate::sim::Millis;
use crate::vocab::ids::*;

/// Endpoints (and workflow steps) from this number on are compensations: endpoint
/// `COMPENSATION + k` undoes the effect of step `k`, named by its resource in the params.
pub const COMPENSATION: u32 = 100;

/// Most actions one intent's workflow may have.
pub const MAX_STEPS: u32 = 8;

/// The parameters of a compensation of `resource`.
pub fn compensation_params(resource: ResourceId) -> Params {
    Params(1 << 62 | u64::from(resource.0))
}

/// The resource a compensation with parameters `params` undoes (the inverse of
/// [`compensation_params`]).
pub fn compensation_target(params: Params) -> ResourceId {
    ResourceId(params.0 as u32)
}

/// A tool call from the agent to the executor.
///
/// It names the call and the authorization it serves, never the intent: which intent and
/// step a call serves is ground truth, which the world keeps beside the agent's calls and
/// designs cannot read. Nothing a design sends carries it either: the world attributes a send
/// to the call its operation serves in the journal ([`crate::design::Journal`]).
///
/// ```compile_fail
/// # use retrylab::vocab::protocol::ToolCall;
/// let call = ToolCall::for_tests(0);
/// let _ = call.tag; // no such field: the intent is not a design's to read
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ToolCall {
    /// Fresh for every call the agent proposes; the same when the agent re-runs a call.
    pub call: CallId,
    /// Which issue of `call` this is: 1, then one more each time the agent re-runs it.
    pub issue: u32,
    /// The user's authorization of the action this call serves: the same for a re-run and a
    /// replan, fresh once the user authorized the action again (identity loss).
    pub auth: AuthId,
    pub tenant: Tenant,
    pub endpoint: Endpoint,
    pub params: Params,
}

/// What the executor tells the agent about a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolResult {
    /// The effect exists; `resource` when the executor holds a receipt.
    Success { resource: Option<ResourceId> },
    /// Definitely not done.
    Failure,
    /// The executor does not know whether the effect exists.
    Unknown,
}

/// A request to the provider. Like a real one, it does not say which intent it serves: the
/// world knows that from the operation that sends it, so a design can neither read nor forge
/// the intent an effect is counted for.
///
/// ```compile_fail
/// # use retrylab::vocab::protocol::{Request, ToolCall};
/// let request = Request::create(&ToolCall::for_tests(0), None);
/// let _ = request.tag; // no such field
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub tenant: Tenant,
    pub endpoint: Endpoint,
    /// Set by the transport: region 0 unless a `reroute` fault fails the attempt over.
    pub region: Region,
    pub key: Option<Key>,
    /// When the client first sent this operation under this key (Azure's
    /// `Repeatability-First-Sent`): stamped by [`ExecCtx::send`](crate::design::context::ExecCtx::send)
    /// on keyed creates, the same on every retry.
    pub first_sent_ms: Option<Millis>,
    pub kind: RequestKind,
}

/// The first-sent moment is compared only with the clock, against the retention (and
/// copied into the key record): `sim::moments::of_keys`.
impl std::hash::Hash for Request {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Request {
            tenant,
            endpoint,
            region,
            key,
            first_sent_ms,
            kind,
        } = self;
        tenant.hash(h);
        endpoint.hash(h);
        region.hash(h);
        key.hash(h);
        crate::sim::moments::of_keys_opt(h, *first_sent_ms);
        kind.hash(h);
    }
}

impl ToolCall {
    /// A call numbered after `intent` for concurrency tests of the journal, which need
    /// operations outside a simulated run. Not for designs: they receive their calls from the
    /// agent.
    #[doc(hidden)]
    pub fn for_tests(intent: u32) -> ToolCall {
        ToolCall {
            call: CallId(intent + 1),
            issue: 1,
            auth: AuthId(intent),
            tenant: Tenant(0),
            endpoint: Endpoint(0),
            params: Params(u64::from(intent) + 1),
        }
    }

    /// The resource this call compensates, if it is a compensation.
    pub fn compensates(&self) -> Option<ResourceId> {
        (self.endpoint.0 >= COMPENSATION).then_some(compensation_target(self.params))
    }
}

impl Request {
    /// A create for `call`, under `key`.
    pub fn create(call: &ToolCall, key: Option<Key>) -> Request {
        Request {
            tenant: call.tenant,
            endpoint: call.endpoint,
            region: Region(0),
            key,
            first_sent_ms: None,
            kind: RequestKind::Create {
                params: call.params,
            },
        }
    }

    /// A read-back for `call`'s tenant and endpoint.
    pub fn lookup(call: &ToolCall, query: LookupQuery) -> Request {
        Request {
            tenant: call.tenant,
            endpoint: call.endpoint,
            region: Region(0),
            key: None,
            first_sent_ms: None,
            kind: RequestKind::Lookup(query),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestKind {
    /// A mutation: creates a resource when it commits.
    Create { params: Params },
    /// A read-back; never mutates.
    Lookup(LookupQuery),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LookupQuery {
    /// The resource created under this key.
    Key(Key),
    /// A resource by its id.
    Resource(ResourceId),
    /// Any resource of the tenant and endpoint with these parameters.
    Search { params: Params },
    /// The status of accepted (202) work, by its handle.
    Operation(u32),
}

/// The provider's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reply {
    /// 201: the resource exists; `replayed` when answered from the key record.
    Created {
        resource: ResourceId,
        replayed: bool,
    },
    /// 202: accepted for processing, not completed; poll `handle` for the outcome. The work
    /// may still fail.
    Accepted { handle: u32 },
    /// Status of accepted work: it failed, nothing was committed.
    OperationFailed,
    /// 409-style replay that says only "already exists", without the resource.
    AlreadyExists,
    /// 409: a request with this key is still in progress; retry later with the same key.
    InProgress,
    /// 422/400: the key was first used with other parameters.
    Mismatch,
    /// 412: the key is outside the provider's window.
    Expired,
    /// 400: refused on its merits (business rules); nothing was done.
    Rejected,
    /// 400: this endpoint requires a key.
    MissingKey,
    /// 5xx: indeterminate, the effect may or may not exist.
    ServerError { replayed: bool },
    /// Lookup hit.
    Found { resource: ResourceId },
    /// Lookup miss. Not proof of absence: the index may lag.
    NotFound,
    /// Lookup: a record for the key exists but has no visible result yet.
    Pending,
    /// Lookup of a kind this provider does not offer.
    Unsupported,
    /// 429: refused by a rate limit before anything was done; try again after
    /// `retry_after_ms` if the provider says (`Retry-After`).
    Throttled { retry_after_ms: Option<Millis> },
    /// 408: the server gave up waiting for the request; nothing was done.
    RequestTimeout,
}

impl Reply {
    /// The HTTP status a real provider would use.
    pub fn status(&self) -> u16 {
        match self {
            Reply::Created { .. } => 201,
            Reply::Found { .. } => 200,
            Reply::Pending | Reply::Accepted { .. } => 202,
            Reply::OperationFailed => 500,
            Reply::AlreadyExists | Reply::InProgress => 409,
            Reply::Mismatch => 422,
            Reply::Expired => 412,
            Reply::MissingKey | Reply::Unsupported | Reply::Rejected => 400,
            Reply::NotFound => 404,
            Reply::ServerError { .. } => 500,
            Reply::Throttled { .. } => 429,
            Reply::RequestTimeout => 408,
        }
    }
}

/// What the transport hands the executor for one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Response {
    Reply(Reply),
    /// The client timeout fired first. Says nothing about whether the effect exists.
    Timeout,
    /// The connection was reset after the request was sent, before the answer came: the
    /// client learns at once that it has none. Says nothing about whether the effect exists.
    Reset,
}

impl fmt::Display for ToolResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolResult::Success { resource: Some(r) } => write!(f, "success ({r})"),
            ToolResult::Success { resource: None } => write!(f, "success (no receipt)"),
            ToolResult::Failure => write!(f, "failure"),
            ToolResult::Unknown => write!(f, "unknown"),
        }
    }
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestKind::Create { params } => write!(f, "create with {params}"),
            RequestKind::Lookup(q) => write!(f, "lookup {q}"),
        }
    }
}

impl fmt::Display for LookupQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupQuery::Key(k) => write!(f, "by key {k}"),
            LookupQuery::Resource(r) => write!(f, "by id {r}"),
            LookupQuery::Search { params } => write!(f, "search for {params}"),
            LookupQuery::Operation(h) => write!(f, "status of operation {h}"),
        }
    }
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let replayed = |r: bool| if r { ", replayed" } else { "" };
        write!(f, "{} ", self.status())?;
        match self {
            Reply::Created {
                resource,
                replayed: r,
            } => write!(f, "created {resource}{}", replayed(*r)),
            Reply::AlreadyExists => write!(f, "already exists"),
            Reply::Accepted { handle } => write!(f, "accepted, operation {handle}"),
            Reply::OperationFailed => write!(f, "operation failed"),
            Reply::InProgress => write!(f, "in progress"),
            Reply::Mismatch => write!(f, "key reused with other parameters"),
            Reply::Expired => write!(f, "key expired"),
            Reply::MissingKey => write!(f, "key required"),
            Reply::Rejected => write!(f, "rejected"),
            Reply::ServerError { replayed: r } => write!(f, "server error{}", replayed(*r)),
            Reply::Found { resource } => write!(f, "found {resource}"),
            Reply::NotFound => write!(f, "not found"),
            Reply::Pending => write!(f, "pending"),
            Reply::Unsupported => write!(f, "lookup not supported"),
            Reply::Throttled {
                retry_after_ms: Some(ms),
            } => write!(f, "too many requests, retry after {ms} ms"),
            Reply::Throttled {
                retry_after_ms: None,
            } => write!(f, "too many requests"),
            Reply::RequestTimeout => write!(f, "request timeout"),
        }
    }
}
