//! Lower arbitrary bytes (as a Fuzzfile) to a launch plan and hand it to the runner's checks,
//! and hand arbitrary bytes (as plan JSON) to the runner: lowering never panics, a plan
//! survives its JSON round trip unchanged, and `fuzz_runner::prepare` answers every plan with
//! a preparation or an error, never a panic. Nothing is started.
#![no_main]

use libfuzzer_sys::fuzz_target;

fn prepare(plan: &fuzzfile_plan::Plan) {
    let options = fuzz_runner::Options {
        runtime: fuzz_runner::RuntimeKind::Host,
        ..Default::default()
    };
    let dir = std::env::temp_dir().join("fuzz-plan-target");
    let _ = fuzz_runner::prepare(plan, &options, &dir, "local-0-0");
}

fuzz_target!(|data: &[u8]| {
    let a = fuzzfile_check::analyze_bytes(data);
    for hosts in [None, Some(vec!["n1".to_owned(), "n2".to_owned()])] {
        let options = fuzzfile_plan::PlanOptions {
            source: "fuzz.fz".into(),
            hosts,
            profile: None,
        };
        if let Ok(plan) = fuzzfile_plan::lower(&a, &options) {
            let json = fuzzfile_plan::to_json(&plan);
            let back = fuzz_runner::read_plan(&json).expect("a plan reads back");
            assert_eq!(fuzzfile_plan::to_json(&back), json, "the JSON round trip changed the plan");
            prepare(&back);
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(plan) = fuzz_runner::read_plan(text) {
            prepare(&plan);
        }
    }
});
