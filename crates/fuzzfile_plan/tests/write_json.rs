//! `write_json` (what `fuzz plan` streams) writes exactly the bytes of `to_json` (what the
//! snapshots hold), for every example, and says when the writer fails.

mod common;

use fuzzfile_plan::{to_json, write_json};

#[test]
fn streamed_plan_is_the_same_text() {
    let mut compared = 0;
    for case in common::cases() {
        let Ok(plan) = common::plan(&case) else {
            continue;
        };
        let mut streamed = Vec::new();
        write_json(&plan, &mut streamed).expect("writing into a Vec");
        assert_eq!(
            String::from_utf8(streamed).expect("UTF-8"),
            to_json(&plan),
            "{}",
            case.name
        );
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} examples lowered");
}

#[test]
fn a_failing_writer_is_an_error() {
    let case = common::cases()
        .into_iter()
        .find(|c| c.name == "hello-world" && c.profile.is_none())
        .expect("examples/hello-world.fz");
    let plan = common::plan(&case).expect("hello-world lowers");
    let err = write_json(&plan, common::Full { room: 100 }).expect_err("the writer is full");
    assert_eq!(err.kind(), std::io::ErrorKind::StorageFull);
}
