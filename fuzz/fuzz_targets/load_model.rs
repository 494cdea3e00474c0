#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| retrylab_fuzz::load_model(data));
