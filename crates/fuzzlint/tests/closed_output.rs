//! A reader that stops reading (`fuzzlint rules | head -1`) ends the output quietly: no panic
//! ("failed printing to stdout: Broken pipe"), exit 0. The reader here closes its end before
//! the program writes anything, so every write meets the closed pipe.

use std::process::{Command, Stdio};

fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fuzzlint"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fuzzlint");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for fuzzlint");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn listing_rules_schemas_and_a_rule_into_a_closed_pipe_does_not_panic() {
    for args in [
        &["rules"][..],
        &["rule", "unknown-key"],
        &["schema"],
        &["schema", "fuzzfile"],
        &["schema", "launch-plan"],
    ] {
        let (code, stderr) = with_closed_stdout(args);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
    }
}
