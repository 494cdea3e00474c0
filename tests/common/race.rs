//! The seeds' lost-response model turned into a race, for the tests and the benchmarks of
//! exhaustive search: `intents` intents arriving 0–500 ms apart, `workers` workers sharing
//! a durable journal, and a random reply loss of 1 in 10 instead of the scripted loss, with
//! no expectations.

use std::path::Path;

use retrylab::model::Model;

/// The race with `intents` intents and `workers` workers.
pub fn race(intents: u32, workers: u32) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ticket_lost_response.json");
    let text = std::fs::read_to_string(path).expect("the bundled model");
    let mut m: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    m["name"] = serde_json::json!(format!("race_{intents}i_{workers}w"));
    m["workload"] = if intents > 1 {
        serde_json::json!({ "intents": intents, "spacing_ms": { "min": 0, "max": 500 } })
    } else {
        serde_json::json!({ "intents": 1 })
    };
    m["workers"] = serde_json::json!({ "count": workers, "journal": "durable" });
    m["network"]["reply_loss"] = serde_json::json!(0.1);
    m["faults"] = serde_json::json!([]);
    let o = m.as_object_mut().expect("an object");
    o.remove("expect");
    o.remove("$schema");
    Model::from_json(&m.to_string(), "race.json").unwrap_or_else(|e| panic!("{e}"))
}
