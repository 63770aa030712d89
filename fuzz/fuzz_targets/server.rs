//! Drive the language server in process with arbitrary edit sequences and requests decoded
//! from the input bytes; `fuzzfile_server::fuzzing::run` says what is checked (the stable
//! test suite runs the same driver on pseudo-random inputs). The same bytes, read as the
//! server's input stream, go through the bounded frame reader of the stdio transport, and the
//! messages it yields are handled by a server (`fuzzfile_server::transport::fuzz_stream`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fuzzfile_server::fuzzing::run(data);
    fuzzfile_server::transport::fuzz_stream(data);
});
