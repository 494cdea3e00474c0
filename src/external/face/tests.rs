//! The face's mapping of requests and writing of answers, per preset.
use super::*;
use crate::model::provider::preset;

fn call() -> ToolCall {
    ToolCall::for_tests(6)
}

fn generic() -> Face {
    Face::new(&HttpFace::default())
}

fn map_simple(method: &str, url: &str, body: Option<&str>) -> Mapped {
    let mut h = BTreeMap::new();
    h.insert("Idempotency-Key".to_string(), "k-1".to_string());
    generic().map(0, &call(), method, url, &h, body)
}

fn kind(m: Mapped) -> RequestKind {
    match m {
        Mapped::Send { request, .. } => request.kind,
        m => panic!("{m:?}"),
    }
}

#[test]
fn a_create_carries_the_reference_and_the_key() {
    let (tool, args) = generic().invocation(&call());
    assert_eq!(tool, "create");
    assert_eq!(
        args,
        serde_json::json!({"ref": "r7", "tenant": "t0", "authorization": "a6"})
    );
    let body = args.to_string();
    match map_simple("POST", "http://provider.sim/v1/resources", Some(&body)) {
        Mapped::Send { request, key, .. } => {
            assert_eq!(request.kind, RequestKind::Create { params: Params(7) });
            assert_eq!(key.as_deref(), Some("k-1"));
        }
        m => panic!("{m:?}"),
    }
}

#[test]
fn lookups_and_what_does_not_map() {
    let get = |u: &str| map_simple("GET", u, None);
    assert_eq!(
        kind(get("http://provider.sim/v1/resources/res_4")),
        RequestKind::Lookup(LookupQuery::Resource(ResourceId(4)))
    );
    assert_eq!(
        kind(get("http://provider.sim/v1/resources?ref=r7")),
        RequestKind::Lookup(LookupQuery::Search { params: Params(7) })
    );
    assert_eq!(
        kind(get("http://provider.sim/v1/operations/op_2")),
        RequestKind::Lookup(LookupQuery::Operation(2))
    );
    assert_eq!(
        kind(get("http://provider.sim/v1/idempotency/k-1")),
        RequestKind::Lookup(LookupQuery::Key(Key(0)))
    );
    let no = |m: Mapped| match m {
        Mapped::Unmapped(why) => why,
        m => panic!("{m:?}"),
    };
    let refused = |m: Mapped| match m {
        Mapped::Refused(why) => why,
        m => panic!("{m:?}"),
    };
    assert_eq!(
        refused(get("https://api.example.com/v1/resources")),
        "GET https://api.example.com/v1/resources: host \"api.example.com\" is not the simulated provider's (its base URL is http://provider.sim): send the provider's requests to the base_url that init gives, on the routes of the model's provider.http (set provider.http.read, search, key_lookup, operation or compensate)"
    );
    // A tracing exporter's request, sent through the simulated transport (Node's fetch).
    assert_eq!(
        refused(map_simple(
            "POST",
            "https://api.smith.langchain.com/runs/multipart",
            Some("{}")
        )),
        "POST https://api.smith.langchain.com/runs/multipart: host \"api.smith.langchain.com\" is not the simulated provider's: this looks like LangSmith tracing (LangChain, LangGraph), switched on by the environment the executor inherits (docs/your-executor.md, \"The executor's environment\"): set LANGSMITH_TRACING=false and LANGCHAIN_TRACING_V2=false, or unset them"
    );
    assert!(refused(map_simple("POST", "http://localhost:4318/v1/traces", Some("{}")))
        .ends_with("like an OpenTelemetry OTLP exporter, switched on by the environment the executor inherits (docs/your-executor.md, \"The executor's environment\"): set OTEL_SDK_DISABLED=true"));
    assert!(
        refused(map_simple(
            "POST",
            "https://api.openai.com/v1/traces/ingest",
            Some("{}")
        ))
        .ends_with("set OPENAI_AGENTS_DISABLE_TRACING=1")
    );
    assert!(
        refused(get("https://api.openai.com/v1/models")).contains("send the provider's requests")
    );
    assert!(
        refused(map_simple(
            "POST",
            "https://o1.ingest.sentry.io/api/1/envelope/",
            Some("{}")
        ))
        .ends_with("unset SENTRY_DSN")
    );
    assert_eq!(
        refused(map_simple(
            "POST",
            "http://provider.sim/v1/charges",
            Some("{}")
        )),
        "POST http://provider.sim/v1/charges: a create that matches no route of the provider's face: set the model's provider.http.create to its route (now \"POST /v1/resources\")"
    );

    assert!(
        no(map_simple(
            "POST",
            "http://provider.sim/v1/resources",
            Some("{}")
        ))
        .contains("\"ref\"")
    );
    assert!(no(get("http://provider.sim/v2/things")).contains("no route"));
}

#[test]
fn stripe_takes_form_bodies_and_searches_by_metadata() {
    let face = Face::new(&preset("stripe_v1").unwrap().http);
    let mut h = BTreeMap::new();
    h.insert("Idempotency-Key".to_string(), "k-9".to_string());
    h.insert(
        "Content-Type".to_string(),
        "application/x-www-form-urlencoded".to_string(),
    );
    let m = face.map(
        0,
        &call(),
        "POST",
        "http://provider.sim/v1/customers",
        &h,
        Some("metadata%5Bref%5D=r7&name=Ada+L"),
    );
    match m {
        Mapped::Send { request, key, .. } => {
            assert_eq!(request.kind, RequestKind::Create { params: Params(7) });
            assert_eq!(key.as_deref(), Some("k-9"));
        }
        m => panic!("{m:?}"),
    }
    let q = "http://provider.sim/v1/customers/search?query=metadata%5B%27ref%27%5D%3A%27r7%27";
    assert_eq!(
        kind(face.map(0, &call(), "GET", q, &BTreeMap::new(), None)),
        RequestKind::Lookup(LookupQuery::Search { params: Params(7) })
    );
    let a = face.answer(Reply::InProgress, None);
    assert_eq!(a.status, 409);
    assert_eq!(
        a.body,
        r#"{"error":{"code":"idempotency_key_in_use","message":"idempotency key in use","type":"idempotency_error"}}"#
    );
    let a = face.answer(
        Reply::Created {
            resource: ResourceId(3),
            replayed: true,
        },
        None,
    );
    assert_eq!(a.body, r#"{"id":"cus_3"}"#);
    assert_eq!(a.headers["idempotent-replayed"], "true");
    assert_eq!(face.answer(Reply::Mismatch, None).status, 400);
}

#[test]
fn ec2_takes_a_query_request_and_answers_xml() {
    let face = Face::new(&preset("aws_ec2").unwrap().http);
    let body = "Action=RunInstances&ClientToken=tok-1&TagSpecification.1.Tag.1.Value=r7";
    let mut h = BTreeMap::new();
    h.insert(
        "content-type".to_string(),
        "application/x-www-form-urlencoded".to_string(),
    );
    match face.map(0, &call(), "POST", "http://provider.sim/", &h, Some(body)) {
        Mapped::Send { request, key, .. } => {
            assert_eq!(request.kind, RequestKind::Create { params: Params(7) });
            assert_eq!(key.as_deref(), Some("tok-1"));
        }
        m => panic!("{m:?}"),
    }
    let a = face.answer(Reply::Mismatch, None);
    assert_eq!(a.status, 400);
    assert!(
        a.body.contains("<Code>IdempotentParameterMismatch</Code>"),
        "{}",
        a.body
    );
    let ok = face.answer(
        Reply::Found {
            resource: ResourceId(2),
        },
        None,
    );
    assert!(
        ok.body.contains("<instanceId>i-2</instanceId>"),
        "{}",
        ok.body
    );
}

#[test]
fn azure_reads_the_first_sent_header_and_refuses_a_create_without_it() {
    let face = Face::new(&preset("azure_repeatable").unwrap().http);
    let body = r#"{"ref":"r7"}"#;
    let mut h = BTreeMap::new();
    h.insert("Repeatability-Request-ID".to_string(), "g-1".to_string());
    let url = "http://provider.sim/v1/resources";
    assert_eq!(
        face.map(9_000, &call(), "POST", url, &h, Some(body)),
        Mapped::Local(Reply::MissingKey)
    );
    h.insert(
        "Repeatability-First-Sent".to_string(),
        "Thu, 01 Jan 2026 00:00:05 GMT".to_string(),
    );
    // A first-sent time after the provider's clock would stretch its window: refused.
    assert_eq!(
        face.map(4_999, &call(), "POST", url, &h, Some(body)),
        Mapped::Local(Reply::MissingKey)
    );
    // Both headers are mandatory.
    let mut no_id = h.clone();
    no_id.remove("Repeatability-Request-ID");
    assert_eq!(
        face.map(9_000, &call(), "POST", url, &no_id, Some(body)),
        Mapped::Local(Reply::MissingKey)
    );
    match face.map(9_000, &call(), "POST", url, &h, Some(body)) {
        Mapped::Send {
            key, first_sent_ms, ..
        } => {
            assert_eq!(key.as_deref(), Some("g-1"));
            assert_eq!(first_sent_ms, Some(5_000));
        }
        m => panic!("{m:?}"),
    }
}

#[test]
fn a_lookup_the_contract_lacks_is_501_and_plus_is_a_space() {
    let a = generic().answer(Reply::Unsupported, None);
    assert_eq!(a.status, 501);
    assert!(a.body.contains("lookup_not_supported"), "{}", a.body);
    assert_eq!(decode("a+b%2Bc%zz%4", true), "a b+c%zz%4");
    assert_eq!(decode("%+1", false), "%+1");
}

#[test]
fn a_429_carries_its_retry_after_in_whole_seconds_and_a_408_is_an_error() {
    let throttled = |ms| generic().answer(Reply::Throttled { retry_after_ms: ms }, None);
    let a = throttled(Some(2_500));
    assert_eq!(a.status, 429);
    assert_eq!(a.headers.get("retry-after").map(String::as_str), Some("3"));
    assert!(a.body.contains("rate_limited"), "{}", a.body);
    assert_eq!(throttled(None).headers.get("retry-after"), None);
    assert_eq!(throttled(Some(1_000)).headers["retry-after"], "1");
    let t = generic().answer(Reply::RequestTimeout, None);
    assert_eq!(t.status, 408);
    assert!(t.body.contains("request_timeout"), "{}", t.body);
}

#[test]
fn imf_fixdates_count_from_the_virtual_epoch() {
    assert_eq!(parse_imf_fixdate("Thu, 01 Jan 2026 00:00:00 GMT"), Some(0));
    assert_eq!(
        parse_imf_fixdate("Fri, 02 Jan 2026 01:00:00 GMT"),
        Some(90_000_000)
    );
    assert_eq!(parse_imf_fixdate("Wed, 31 Dec 2025 23:59:59 GMT"), None);
    assert_eq!(parse_imf_fixdate("2026-01-01T00:00:00Z"), None);
}

#[test]
fn every_presets_face_is_valid() {
    for name in crate::model::provider::preset_names() {
        let p = preset(name).unwrap();
        assert_eq!(p.http.problems(), vec![], "{name}");
        assert!(Face::new(&p.http).create.is_some(), "{name}");
    }
}
