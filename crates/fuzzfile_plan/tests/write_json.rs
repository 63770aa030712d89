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

/// A writer that takes `room` bytes and then fails.
struct Full {
    room: usize,
}

impl std::io::Write for Full {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "full"));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_writer_is_an_error() {
    let case = common::cases()
        .into_iter()
        .find(|c| c.name == "hello-world" && c.profile.is_none())
        .expect("examples/hello-world.fz");
    let plan = common::plan(&case).expect("hello-world lowers");
    let err = write_json(&plan, Full { room: 100 }).expect_err("the writer is full");
    assert_eq!(err.kind(), std::io::ErrorKind::StorageFull);
}
