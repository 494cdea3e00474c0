//! The fuzzed loader: what one input must do. Shared by the libFuzzer target and by the
//! plain harness that replays a corpus without libFuzzer.

use retrylab::design;
use retrylab::model::Model;
use retrylab::run::run_seeds;

/// Reads `data` as a model file: invalid UTF-8 and refused models must give an error with a
/// message; an accepted model runs one seed of every design, which must end (the events
/// budget and the model bounds see to it). Any panic is a finding.
pub fn load_model(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Model::from_json(text, "fuzz.json") {
        Ok(m) => {
            for name in design::names() {
                let d = design::find(name).expect("a listed design exists");
                run_seeds(&m, d, 0..1);
            }
        }
        Err(e) => {
            assert!(!e.problems.is_empty(), "refused without a problem");
            for p in &e.problems {
                assert!(!p.message.trim().is_empty(), "a problem without a message");
            }
        }
    }
}
