//! Shared by the runner's integration tests: the real Fuzzfiles of the repository (examples,
//! rule specs) and of the external corpus, and the plans the lowering makes of them.

use fuzzfile_plan::{lower, Plan, PlanOptions};
use std::path::{Path, PathBuf};

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `*.fz` below each of `dirs` (relative to the repository root), in a stable order.
pub fn fuzzfiles(dirs: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "fz") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        walk(&root().join(d), &mut out);
    }
    out
}

/// Each file of `files` lowered once without hosts and once on `hosts`: the file and the plan,
/// for every lowering that succeeds.
pub fn lowered_plans(files: &[PathBuf], hosts: &[&str]) -> Vec<(PathBuf, Plan)> {
    let mut out = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(f) else {
            continue;
        };
        let a = fuzzfile_check::analyze_bytes(&bytes);
        for hosts in [None, Some(hosts.iter().map(|h| h.to_string()).collect())] {
            if let Ok(plan) = lower(
                &a,
                &PlanOptions {
                    source: "f.fz".into(),
                    hosts,
                    profile: None,
                },
            ) {
                out.push((f.clone(), plan));
            }
        }
    }
    out
}
