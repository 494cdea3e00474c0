//! The executor protocol's JSON Schema, committed as `api/protocol.schema.json`: generated
//! from the Rust types of the messages (`retrylab::external::protocol_schema`), the one
//! source the Python and TypeScript clients' message types are generated from. Regenerate it
//! with `RETRYLAB_BLESS=1 cargo test --test suite protocol_schema::`.

use retrylab::external::{protocol_schema, protocol_schema_text};

use crate::common::golden;

#[test]
fn committed_protocol_schema_is_current() {
    let mut golden = golden::Golden::in_project("api");
    golden.check("protocol.schema.json", &protocol_schema_text());
    golden.finish();
}

/// The shape the clients' generator reads: `$defs.FromExec` and `$defs.ToExec`, each a
/// `oneOf` of object schemas whose `type` property is a `const`, and `$defs.ErrorCode`.
#[test]
fn the_schema_has_the_shape_the_generators_read() {
    let s = protocol_schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(s["title"], "retrylab executor protocol");
    assert_eq!(s["x-protocol-version"], retrylab::external::PROTOCOL);
    for def in ["FromExec", "ToExec"] {
        let kinds = s["$defs"][def]["oneOf"].as_array().expect(def);
        assert!(kinds.len() >= 10, "{def}: {}", kinds.len());
        for k in kinds {
            assert_eq!(k["type"], "object", "{def}: {k}");
            assert!(
                k["properties"]["type"]["const"].is_string(),
                "{def}: a kind without a `type` const: {k}"
            );
        }
    }
    assert!(s["$defs"]["ErrorCode"]["oneOf"].is_array());
}
