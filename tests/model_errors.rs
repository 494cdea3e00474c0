use retrylab::model::Model;
const VALID: &str = include_str!("../models/ticket_lost_response.json");
fn show(label: &str, text: &str) {
    match Model::from_json(text, "m.json") {
        Ok(_) => println!("{label}: OK"),
        Err(e) => println!("{label}:\n{e}\n{:?}\n", e.problems),
    }
}
fn rep(a: &str, b: &str) -> String { assert!(VALID.contains(a), "{a}"); VALID.replacen(a, b, 1) }
#[test]
fn explore() {
    show("valid", VALID);
    show("missing comma", &rep("\"horizon_ms\": 600000,", "\"horizon_ms\": 600000"));
    show("nested comma", &rep("\"dedup\": \"by_key\",", "\"dedup\": \"by_key\""));
    show("array comma", &rep("\"no_dedup\", \"same_key\"", "\"no_dedup\" \"same_key\""));
    show("fault comma", &rep("{ \"attempt\": 1 }", "{ \"attempt\": 1 \"x\": 1 }"));
    show("bad key", &rep("\"horizon_ms\"", "horizon_ms"));
    show("big u32", &rep("\"count\": 1", "\"count\": 5000000000"));
    show("trailing", &format!("{VALID} x"));
    show("trailing2", &format!("{VALID}}}"));
    show("empty", "");
    show("wrong type", &rep("600000", "\"soon\""));
    show("unknown top", &rep("\"horizon_ms\"", "\"horizon\": 1, \"horizon_ms\""));
    show("unknown nested", &rep("\"dedup\": \"by_key\",", "\"dedup\": \"by_key\", \"retention_msec\": 5,"));
    show("unknown in range", &rep("{ \"min\": 5, \"max\": 80 }", "{ \"min\": 5, \"maks\": 80 }"));
    show("unknown in fault", &rep("{ \"attempt\": 1 }", "{ \"attempt\": 1, \"x\": 2 }"));
    show("unknown fault kind", &rep("\"drop_reply\"", "\"drop_replies\""));
    show("unknown design", &rep("\"same_key\"", "\"same_keys\""));
    show("neg retention", &rep("\"dedup\": \"by_key\",", "\"dedup\": \"by_key\", \"retention_ms\": -1,"));
    show("neg latency", &rep("{ \"min\": 5, \"max\": 80 }", "-5"));
    show("neg latency min", &rep("{ \"min\": 5, \"max\": 80 }", "{ \"min\": -5, \"max\": 80 }"));
    show("neg count", &rep("\"count\": 1", "\"count\": -1"));
    show("float", &rep("600000", "1.5"));
    show("reply_loss", &rep("{ \"latency_ms\": { \"min\": 5, \"max\": 80 } }", "{ \"latency_ms\": { \"min\": 5, \"max\": 80 }, \"reply_loss\": \"3/2\" }"));
    show("reply_loss num", &rep("{ \"latency_ms\": { \"min\": 5, \"max\": 80 } }", "{ \"latency_ms\": { \"min\": 5, \"max\": 80 }, \"reply_loss\": 2 }"));
    show("reversed", &rep("{ \"min\": 200, \"max\": 1500 }", "{ \"min\": 9, \"max\": 3 }"));
    show("reversed multi", &rep("{ \"min\": 200, \"max\": 1500 }", "{\n      \"min\": 9,\n      \"max\": 3\n    }"));
    show("count0", &rep("\"count\": 1", "\"count\": 0"));
    show("weights0", &rep("\"on_failure\": { \"replan\": 1 }", "\"on_failure\": { \"replan\": 0 }"));
    show("crash worker", &rep("{ \"drop_reply\": { \"attempt\": 1 } }", "{ \"crash_worker\": { \"attempt\": 1, \"point\": \"after_send\", \"worker\": 1 } }"));
    show("attempt0", &rep("{ \"attempt\": 1 }", "{ \"attempt\": 0 }"));
    show("retention0", &rep("\"dedup\": \"by_key\",", "\"dedup\": \"by_key\", \"retention_ms\": 0,"));
    show("atomicity", &rep("\"atomic\"", "\"sometimes\""));
    show("missing max_calls", &rep("\"max_calls\": 2,", ""));
    show("missing name", &rep("\"name\": \"ticket_lost_response\",", ""));
    show("dup field", &rep("\"horizon_ms\": 600000,", "\"horizon_ms\": 600000, \"horizon_ms\": 1,"));
    show("several", &rep("\"count\": 1", "\"count\": 0").replacen("\"same_key\"", "\"nope\"", 1).replacen("\"max_calls\": 2", "\"max_calls\": 0", 1));
    show("array root", "[]");
    show("fault bad point", &rep("{ \"drop_reply\": { \"attempt\": 1 } }", "{ \"crash_worker\": { \"attempt\": 1, \"point\": \"later\" } }"));
    show("fault two keys", &rep("{ \"drop_reply\": { \"attempt\": 1 } }", "{ \"drop_reply\": { \"attempt\": 1 }, \"drop_request\": { \"attempt\": 1 } }"));
    show("attempt neg", &rep("{ \"attempt\": 1 }", "{ \"attempt\": -1 }"));
    show("designs empty", &rep("[\"no_dedup\", \"same_key\", \"new_key_after_replan\"]", "[]"));
    show("null", &rep("600000", "null"));
    show("bigint", &rep("600000", "99999999999999999999999"));
    show("unterminated", &VALID[..100]);
    show("unicode", &rep("\"description\": \"", "\"description\": \"é€ ").replacen("\"same_key\"", "\"nope\"", 1));
    show("unicode serde", &rep("\"description\": \"", "\"description\": \"é€ ").replacen("\"count\": 1", "\"count\": -1", 1));
    show("pause0", &rep("{ \"drop_reply\": { \"attempt\": 1 } }", "{ \"pause\": { \"component\": \"agent\", \"from_ms\": 1, \"duration_ms\": 0 } }"));
}
