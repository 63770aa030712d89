//! The executor against Go: every case of `tests/exec_cases.txt` and `tests/funcs_cases.txt`
//! (the format of `tests/cases/engine.txt`: a template, its data, optional seed and clock) is
//! rendered here and compared with what Go's `text/template` with slim-sprig printed for it,
//! recorded in `tests/exec_cases.go.jsonl` and `tests/funcs_cases.go.jsonl` by
//! `scripts/go-template-render -batch` (Go 1.19, Debian's). An output must match byte for
//! byte; an error must be an error, with Go's message (what follows Go's `template: NAME:L:C:
//! executing ... at <...>: ` prefix), and a `fail` reached must be [`ExecErrorKind::Fail`]
//! with the template's message.
//!
//! `FUZZFILE_TEMPLATE_CASES=CASES.txt:RESULTS.jsonl` checks another pair the same way.

mod exec_check;

use std::path::Path;

use exec_check::{check, check_pair};

/// Go's executor: printing, missing keys, field chains, truth, if/with/range, variables and
/// their scopes, template calls, break/continue, the builtins and their errors.
#[test]
fn exec_cases_match_go() {
    check_pair("exec_cases");
}

/// Another case file and Go's results for it, named by `FUZZFILE_TEMPLATE_CASES`.
#[test]
fn cases_named_by_environment_match_go() {
    let Ok(spec) = std::env::var("FUZZFILE_TEMPLATE_CASES") else {
        return;
    };
    let Some((cases, results)) = spec.split_once(':') else {
        panic!("FUZZFILE_TEMPLATE_CASES=CASES.txt:RESULTS.jsonl");
    };
    let (n, bad) = check(Path::new(cases), Path::new(results));
    assert!(bad.is_empty(), "{} of {n} cases differ from Go:\n{}", bad.len(), bad.join("\n"));
}
