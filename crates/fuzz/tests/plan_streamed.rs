//! `fuzz plan` writes the plan one job at a time, and decides every refusal before its first
//! byte: a refused Fuzzfile leaves standard output empty, and the `-o` file not created, or
//! as it was, also when the refusal is found only in the job planned last.

use fuzz_test_support::ScratchDirectory;
use fuzz_test_support::{fuzz_binary, lossy_text as text};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;

fn fuzz(args: &[&str]) -> Output {
    fuzz_binary!()
        .command()
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run fuzz")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// `n` plannable jobs, then `last` (a job's keys) as `zz-last`, the job the plan lists last.
fn jobs_then(n: usize, last: &str) -> String {
    let mut s = String::from("version: v4\njobs:\n");
    for i in 0..n {
        let _ = writeln!(
            s,
            "  job-{i:04}:\n    image: {{uri: 'docker://alpine:3.20'}}\n    command: [echo, '{i}']"
        );
        if i > 0 {
            let _ = writeln!(s, "    depends-on: [{{name: job-{:04}}}]", i - 1);
        }
    }
    let _ = write!(s, "  zz-last:\n{last}");
    s
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
fn a_plan_refused_in_its_last_job_writes_nothing() {
    let scratch = ScratchDirectory::create("fuzz-plan-streamed", "refused");
    let image = "    image: {uri: 'docker://alpine:3.20'}\n    command: [x]\n";
    let cases = [
        // Fewer --hosts than nodes: exit 2.
        (
            format!("{image}    multinode: {{nodes: 4, implementation: openmpi}}\n"),
            vec!["--hosts", "a,b,c"],
            2,
            "runs on 4 nodes but --hosts names 3",
        ),
        // More tasks than a plan lists: exit 1.
        (
            format!("{image}    task-array: {{start: 1, end: 20000}}\n"),
            vec![],
            1,
            "its task array has 20000 tasks",
        ),
        // An error of the analysis: exit 1.
        ("    command: [x]\n".to_owned(), vec![], 1, "not plannable"),
    ];
    for (i, (last, flags, exit, says)) in cases.into_iter().enumerate() {
        let file = scratch.write_file(&format!("refused-{i}.fz"), jobs_then(300, &last));
        let mut args = vec!["plan", path(&file)];
        args.extend(flags.iter().copied());

        let o = fuzz(&args);
        assert_eq!(code(&o), exit, "{args:?}: {}", text(&o.stderr));
        assert!(
            o.stdout.is_empty(),
            "{args:?}: {} bytes written",
            o.stdout.len()
        );
        assert!(text(&o.stderr).contains(says), "{}", text(&o.stderr));

        let absent = scratch.path().join(format!("absent-{i}.json"));
        let o = fuzz(&[args.as_slice(), &["-o", path(&absent)]].concat());
        assert_eq!(code(&o), exit, "{}", text(&o.stderr));
        assert!(!absent.exists(), "{args:?}: -o file created");

        let previous = scratch.write_file(&format!("previous-{i}.json"), "the plan before\n");
        let o = fuzz(&[args.as_slice(), &["-o", path(&previous)]].concat());
        assert_eq!(code(&o), exit, "{}", text(&o.stderr));
        assert_eq!(
            std::fs::read_to_string(&previous).expect("still there"),
            "the plan before\n",
            "{args:?}: -o file changed"
        );
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn a_streamed_plan_is_the_same_on_standard_output_and_in_the_o_file() {
    let scratch = ScratchDirectory::create("fuzz-plan-streamed", "written");
    let file = scratch.write_file(
        "many.fz",
        jobs_then(
            300,
            "    image: {uri: 'docker://alpine:3.20'}\n    command: [x]\n",
        ),
    );
    let o = fuzz(&["plan", path(&file)]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 301);
    assert_eq!(jobs[300]["name"], "zz-last");
    assert_eq!(v["graph"]["edges"].as_array().map(Vec::len), Some(299));

    let out = scratch.path().join("many.json");
    let written = fuzz(&["plan", path(&file), "-o", path(&out)]);
    assert_eq!(code(&written), 0, "{}", text(&written.stderr));
    assert!(written.stdout.is_empty());
    assert_eq!(std::fs::read(&out).expect("written"), o.stdout);
}
