//! Executor presets: the retry stacks of the frameworks, SDKs and libraries agents run on,
//! as data (`models/executors/`), each with its source and what it assumes where the source
//! is silent. A model names one as `executor.preset`; `retrylab executors` lists them.
//!
//! A preset's stack gives up as `failure`: the library raises its last error, and a tool
//! wrapper that turns an exception into an error result tells the agent the call failed.
//! An executor that reports a raised timeout as unknown writes its stack itself.

use std::sync::OnceLock;

use serde::Deserialize;

use super::stack::StackSpec;

/// One executor preset.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutorPreset {
    pub name: String,
    /// One line on what it does.
    pub summary: String,
    /// Where its behaviour is documented or coded.
    pub source: String,
    /// What the source leaves open and what the preset assumes there; where the documents
    /// and the code disagree, which it follows.
    pub notes: String,
    pub stack: StackSpec,
}

/// The preset files of `models/executors/`, by name.
const FILES: [(&str, &str); 22] = [
    (
        "temporal_activity",
        include_str!("../../models/executors/temporal_activity.json"),
    ),
    (
        "langgraph_py_httpx",
        include_str!("../../models/executors/langgraph_py_httpx.json"),
    ),
    (
        "langgraph_py_requests",
        include_str!("../../models/executors/langgraph_py_requests.json"),
    ),
    (
        "langgraph_py_sdk",
        include_str!("../../models/executors/langgraph_py_sdk.json"),
    ),
    (
        "langgraph_js",
        include_str!("../../models/executors/langgraph_js.json"),
    ),
    (
        "openai_sdk",
        include_str!("../../models/executors/openai_sdk.json"),
    ),
    (
        "anthropic_sdk",
        include_str!("../../models/executors/anthropic_sdk.json"),
    ),
    (
        "stripe_client",
        include_str!("../../models/executors/stripe_client.json"),
    ),
    (
        "stripe_client_retries",
        include_str!("../../models/executors/stripe_client_retries.json"),
    ),
    (
        "stripe_global",
        include_str!("../../models/executors/stripe_global.json"),
    ),
    (
        "aws_standard",
        include_str!("../../models/executors/aws_standard.json"),
    ),
    (
        "aws_legacy",
        include_str!("../../models/executors/aws_legacy.json"),
    ),
    (
        "celery_default",
        include_str!("../../models/executors/celery_default.json"),
    ),
    (
        "celery_acks_late",
        include_str!("../../models/executors/celery_acks_late.json"),
    ),
    (
        "sqs_consumer",
        include_str!("../../models/executors/sqs_consumer.json"),
    ),
    (
        "openai_agents_tool",
        include_str!("../../models/executors/openai_agents_tool.json"),
    ),
    (
        "vercel_ai_tool",
        include_str!("../../models/executors/vercel_ai_tool.json"),
    ),
    (
        "restate_run",
        include_str!("../../models/executors/restate_run.json"),
    ),
    (
        "dbos_step",
        include_str!("../../models/executors/dbos_step.json"),
    ),
    (
        "inngest_step",
        include_str!("../../models/executors/inngest_step.json"),
    ),
    (
        "tenacity_default",
        include_str!("../../models/executors/tenacity_default.json"),
    ),
    (
        "stamina_default",
        include_str!("../../models/executors/stamina_default.json"),
    ),
];

/// Reads one preset file; the error names the file and the field.
fn parse(file: &str, text: &str) -> Result<ExecutorPreset, String> {
    let p: ExecutorPreset = serde_json::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    if let Some((field, problem)) = p.stack.problems("stack", false).into_iter().next() {
        return Err(format!("{file}: {field}: {problem}"));
    }
    Ok(p)
}

/// Every executor preset, read once. A bundled file that does not read is a defect of the
/// program, found by its tests.
pub fn all() -> &'static [ExecutorPreset] {
    static PRESETS: OnceLock<Vec<ExecutorPreset>> = OnceLock::new();
    PRESETS.get_or_init(|| {
        crate::model::bundled::read_all("models/executors", &FILES, parse, |p: &ExecutorPreset| {
            p.name.as_str()
        })
    })
}

/// The executor preset called `name`.
pub fn find(name: &str) -> Option<&'static ExecutorPreset> {
    all().iter().find(|p| p.name == name)
}

/// The presets' names, in order.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|p| p.name.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_preset_reads_and_names_its_source() {
        assert_eq!(names(), FILES.map(|(n, _)| n));
        for p in all() {
            assert!(
                p.source.contains("https://"),
                "{}: a source address",
                p.name
            );
            assert!(!p.notes.is_empty(), "{}: notes", p.name);
        }
    }

    #[test]
    fn a_preset_file_that_does_not_read_is_refused_naming_the_field() {
        let mut v: serde_json::Value = serde_json::from_str(FILES[0].1).unwrap();
        v["stack"]["layers"][0]["attempts"] = serde_json::json!(0);
        let e = parse("f.json", &v.to_string()).unwrap_err();
        assert!(e.starts_with("f.json: stack.layers[0].attempts: 0;"), "{e}");
    }
}
