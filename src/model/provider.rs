//! The provider section of a model: a contract, written out or taken from a preset.
//!
//! `"provider": "stripe_v1"` uses a preset as it is; `"provider": {"preset": "stripe_v1",
//! "processing_ms": 400}` uses it with some knobs changed; an object without `preset` sets the
//! knobs itself (`dedup` is then required). Presets are the JSON files in `models/providers/`,
//! built into the binary.
//!
//! The knob list is written once, in `provider_knobs!`, which makes both the contract
//! ([`ProviderModel`]) and its all-optional patch form, so the two cannot drift apart.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::http_face::{HttpFace, HttpFacePatch};
use super::range::Range;
use super::schema::*;
use crate::sim::{Millis, Ratio};

macro_rules! provider_knobs {
    ($( $(#[$doc:meta])* $name:ident : $ty:ty = $default:expr; )*) => {
        /// The remote API and its idempotency contract: every knob of the provider model.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        pub struct ProviderModel {
            $( $(#[$doc])* pub $name: $ty, )*
            /// How the API reads on the wire to an external executor: routes, where the key
            /// travels, bodies, statuses and error codes (`retrylab show-model` prints it).
            pub http: HttpFace,
        }

        impl Default for ProviderModel {
            fn default() -> Self {
                Self { $( $name: $default, )* http: HttpFace::default() }
            }
        }

        /// Every knob with its default, as the JSON Schema describes the provider object.
        #[derive(Serialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields, default)]
        pub(crate) struct ProviderKnobs {
            $( $(#[$doc])* $name: $ty, )*
            /// How the API reads on the wire to an external executor: routes, where the key
            /// travels, bodies, statuses and error codes. A model sets single fields; the
            /// others keep the preset's.
            http: HttpFace,
        }

        impl Default for ProviderKnobs {
            fn default() -> Self {
                Self { $( $name: $default, )* http: HttpFace::default() }
            }
        }

        /// Knobs a model or preset sets; the others keep the preset's (or default) value.
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct ProviderPatch {
            #[serde(default)]
            preset: Option<String>,
            $( #[serde(default)] $name: Option<$ty>, )*
            #[serde(default)]
            http: Option<HttpFacePatch>,
        }

        impl ProviderPatch {
            fn apply_to(self, base: &mut ProviderModel) {
                $( if let Some(v) = self.$name { base.$name = v; } )*
                if let Some(h) = self.http { h.apply_to(&mut base.http); }
            }
        }
    };
}

provider_knobs! {
    /// Where this contract comes from (a documentation URL and section).
    source: String = String::new();
    /// What the documentation leaves open and what the preset assumes there.
    notes: String = String::new();
    /// `none`: every request is a new effect; `by_key`: a key seen before (in scope, within
    /// retention) is deduplicated.
    dedup: Dedup = Dedup::None;
    /// Where the key comes from: the caller, or a hash of the payload.
    key_source: KeySource = KeySource::Client;
    /// Which requests share a key space: `global`, `tenant`, `tenant_endpoint`,
    /// `tenant_region`.
    key_scope: KeyScope = KeyScope::Tenant;
    /// Records are kept at least this long; absent means forever.
    retention_ms: Option<Millis> = None;
    /// Retention is a floor: each record is pruned at a moment drawn between `retention_ms`
    /// and this (purpose `pruning`), so a retry after the floor may still be answered from
    /// it. Absent: pruned exactly at the floor.
    retention_max_ms: Option<Millis> = None;
    /// When the retention period starts.
    retention_from: RetentionFrom = RetentionFrom::FirstRequest;
    /// What a request under an expired key gets: processed as new, or refused.
    after_expiry: AfterExpiry = AfterExpiry::NewRequest;
    /// An in-progress record older than this is treated as absent and the next request
    /// executes again (a Lambda whose function timed out); absent means never.
    in_progress_expiry_ms: Option<Millis> = None;
    /// The order in which the key record and the effect are written.
    atomicity: Atomicity = Atomicity::Atomic;
    /// What a request gets while another under the same key is still processing.
    in_flight: InFlight = InFlight::Reject;
    /// What a request gets that reuses a key with other parameters.
    mismatch: Mismatch = Mismatch::Reject;
    /// Which final results are stored under the key and replayed.
    stored_outcomes: StoredOutcomes = StoredOutcomes::All;
    /// What a deduplicated request gets back.
    replay: ReplayMode = ReplayMode::StoredResponse;
    /// Creates are answered 202 Accepted with a status handle at once and processed after;
    /// the outcome is read by polling the handle (Azure long-running operations, RFC 9110
    /// §15.3.3: 202 is noncommittal).
    accept_async: bool = false;
    /// Probability that accepted work fails later, without an effect.
    async_failure: Ratio = Ratio::ZERO;
    /// A create without a key is rejected with 400 (IETF draft).
    require_key: bool = false;
    /// How an outcome can be read back: `none`, `by_key`, `by_resource_id`, `search`.
    lookup: Lookup = Lookup::None;
    /// What a lookup by key can see after the record is gone: nothing (`record`), or the
    /// resource created under the key, as long as it exists (`resource`).
    key_lifetime: KeyLifetime = KeyLifetime::Record;
    /// Time from commit until a lookup can see the effect.
    visibility_lag_ms: Range = Range::constant(0);
    /// Time the provider takes to process a create.
    processing_ms: Range = default_processing();
    /// Probability that processing fails before anything is committed (a 5xx).
    error_before_commit: Ratio = Ratio::ZERO;
    /// Probability of a 5xx reply although the effect was committed.
    error_after_commit: Ratio = Ratio::ZERO;
    /// Probability that the provider crashes in the middle of processing, between writing
    /// the key record and the effect (which comes first depends on `atomicity`).
    crash_during_processing: Ratio = Ratio::ZERO;
    /// Probability that a create is refused by a rate limit (429 Too Many Requests) on
    /// arrival, before its key is looked at: nothing is done and nothing is stored.
    throttle: Ratio = Ratio::ZERO;
    /// The `Retry-After` a 429 carries; absent: none.
    retry_after_ms: Option<Millis> = None;
    /// Probability that a create is answered 408 Request Timeout on arrival, before its key
    /// is looked at: nothing is done and nothing is stored.
    request_timeout: Ratio = Ratio::ZERO;
    /// A should-retry header the provider puts on some answers (Stripe's
    /// `Stripe-Should-Retry`, the `x-should-retry` of the OpenAI and Anthropic APIs): which
    /// answers, by error class, carry it with which value. Absent: no answer carries one.
    should_retry: ShouldRetry = ShouldRetry::default();
}

/// `provider.should_retry`: the header and the answers that carry it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ShouldRetry {
    /// The header's name on the wire (answers to external executors).
    pub header: String,
    /// By error class of the answer (`server_error`, `in_progress`, `refused`, `throttled`,
    /// `request_timeout`, `mismatch`, `expired`, `failed`, `inconclusive`): the header's
    /// value, `true` (retry) or `false` (do not).
    #[schemars(example = serde_json::json!({"server_error": false, "in_progress": true}))]
    pub on: std::collections::BTreeMap<String, bool>,
}

impl Default for ShouldRetry {
    fn default() -> Self {
        Self {
            header: "x-should-retry".into(),
            on: Default::default(),
        }
    }
}

impl ShouldRetry {
    /// The header's value on an answer of `class`, if it carries one.
    pub fn on(&self, class: super::stack::ErrorClass) -> Option<bool> {
        self.on.get(class.name()).copied()
    }

    /// What is wrong with it (fields under `provider.should_retry`).
    pub(crate) fn problems(&self) -> Vec<(String, String)> {
        let answers: Vec<&str> = super::stack::ErrorClass::ALL
            .iter()
            .filter(|c| {
                !matches!(
                    c,
                    super::stack::ErrorClass::Timeout | super::stack::ErrorClass::ConnectionReset
                )
            })
            .map(|c| c.name())
            .collect();
        let mut p: Vec<(String, String)> = self
            .on
            .keys()
            .filter(|k| !answers.contains(&k.as_str()))
            .map(|k| {
                (
                    format!("provider.should_retry.on.{k}"),
                    format!(
                        "{k:?} is not the class of an answer; expected one of {}",
                        answers.join(", ")
                    ),
                )
            })
            .collect();
        if self.header.trim().is_empty() {
            p.push((
                "provider.should_retry.header".into(),
                "empty; the header's name, as x-should-retry".into(),
            ));
        }
        p
    }
}

/// The presets shipped in `models/providers/`, by name.
pub const PRESETS: [(&str, &str); 12] = [
    (
        "no_dedup",
        include_str!("../../models/providers/no_dedup.json"),
    ),
    (
        "stripe_v1",
        include_str!("../../models/providers/stripe_v1.json"),
    ),
    (
        "stripe_v2",
        include_str!("../../models/providers/stripe_v2.json"),
    ),
    (
        "ietf_draft",
        include_str!("../../models/providers/ietf_draft.json"),
    ),
    (
        "aws_ec2",
        include_str!("../../models/providers/aws_ec2.json"),
    ),
    (
        "aws_dynamodb_txn",
        include_str!("../../models/providers/aws_dynamodb_txn.json"),
    ),
    (
        "paypal_orders",
        include_str!("../../models/providers/paypal_orders.json"),
    ),
    ("adyen", include_str!("../../models/providers/adyen.json")),
    (
        "azure_repeatable",
        include_str!("../../models/providers/azure_repeatable.json"),
    ),
    (
        "checkout",
        include_str!("../../models/providers/checkout.json"),
    ),
    (
        "payload_hash_lambda",
        include_str!("../../models/providers/payload_hash_lambda.json"),
    ),
    (
        "calendar_natural_id",
        include_str!("../../models/providers/calendar_natural_id.json"),
    ),
];

/// Names of the presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The contract of preset `name`.
pub fn preset(name: &str) -> Option<ProviderModel> {
    let (_, text) = PRESETS.iter().find(|(n, _)| *n == name)?;
    let patch: ProviderPatch =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("preset {name} is invalid: {e}"));
    let mut model = ProviderModel::default();
    patch.apply_to(&mut model);
    Some(model)
}

fn resolve(patch: ProviderPatch) -> Result<ProviderModel, String> {
    let mut model = match &patch.preset {
        Some(name) => preset(name).ok_or_else(|| unknown_preset(name))?,
        None if patch.dedup.is_none() => {
            return Err(format!(
                "missing field `dedup`: set it, or name a preset with \"preset\" (known presets: {})",
                preset_names().join(", ")
            ));
        }
        None => ProviderModel::default(),
    };
    patch.apply_to(&mut model);
    Ok(model)
}

fn unknown_preset(name: &str) -> String {
    format!(
        "unknown provider preset \"{name}\"; known presets: {}",
        preset_names().join(", ")
    )
}

impl<'de> Deserialize<'de> for ProviderModel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ProviderVisitor)
    }
}

struct ProviderVisitor;

impl<'de> Visitor<'de> for ProviderVisitor {
    type Value = ProviderModel;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a provider preset name or a provider object")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<ProviderModel, E> {
        preset(name).ok_or_else(|| E::custom(unknown_preset(name)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ProviderModel, A::Error> {
        let patch = ProviderPatch::deserialize(de::value::MapAccessDeserializer::new(map))?;
        resolve(patch).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_file_is_built_in_and_valid() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/providers");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|f| f.strip_suffix(".json").map(str::to_string))
            .collect();
        files.sort();
        let mut names: Vec<String> = preset_names().iter().map(|s| s.to_string()).collect();
        names.sort();
        assert_eq!(files, names);
        for name in preset_names() {
            let p = preset(name).unwrap();
            assert!(p.source.contains("https://"), "{name} names no source URL");
            assert!(!p.notes.is_empty(), "{name} has no notes");
            // What the documentation does not give is named as an assumption.
            assert!(
                p.notes.contains("Assumed"),
                "{name}'s notes name no assumption"
            );
            if let Some(max) = p.retention_max_ms {
                assert!(p.retention_ms.is_some_and(|floor| floor <= max), "{name}");
            }
        }
    }

    fn provider_of(json: &str) -> Result<ProviderModel, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn a_preset_by_name_or_patched() {
        assert_eq!(
            provider_of("\"stripe_v1\"").unwrap(),
            preset("stripe_v1").unwrap()
        );
        let p = provider_of(r#"{"preset": "stripe_v1", "processing_ms": 400}"#).unwrap();
        assert_eq!(p.processing_ms, Range::constant(400));
        assert_eq!(p.retention_ms, Some(86_400_000));
        let plain = provider_of(r#"{"dedup": "by_key"}"#).unwrap();
        assert_eq!(plain.dedup, Dedup::ByKey);
        assert_eq!(plain.retention_ms, None);
    }

    #[test]
    fn unknown_presets_and_a_missing_dedup_are_refused() {
        let e = provider_of("\"stripe_v9\"").unwrap_err();
        assert!(
            e.contains("unknown provider preset \"stripe_v9\"") && e.contains("stripe_v1"),
            "{e}"
        );
        let e = provider_of(r#"{"preset": "nope"}"#).unwrap_err();
        assert!(e.contains("unknown provider preset \"nope\""), "{e}");
        let e = provider_of(r#"{"processing_ms": 3}"#).unwrap_err();
        assert!(e.contains("missing field `dedup`"), "{e}");
        let e = provider_of(r#"{"preset": "adyen", "retention": 3}"#).unwrap_err();
        assert!(e.contains("unknown field `retention`"), "{e}");
    }
}
