//! The world sizes the editor shows (inlay hints) are the launch plan's (`fuzz plan`), on
//! every example and every spec file that lowers.

use crate::common::*;
use serde_json::json;
use std::collections::BTreeSet;

#[test]
fn world_sizes_match_the_launch_plan() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("examples")];
    if let Ok(rd) = std::fs::read_dir(root.join("tests/specs")) {
        dirs.extend(rd.flatten().map(|e| e.path()));
    }
    for d in dirs {
        if let Ok(rd) = std::fs::read_dir(d) {
            files.extend(
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "fz")),
            );
        }
    }
    files.sort();
    let mut c = Client::start(caps_utf8(), None);
    let mut compared = 0;
    for (i, path) in files.iter().enumerate() {
        // A spec may be invalid UTF-8 on purpose: an editor would not open it as text.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let analysis = fuzzfile_check::analyze(&text);
        let Ok(plan) = fuzzfile_plan::lower(&analysis, &fuzzfile_plan::PlanOptions::default())
        else {
            continue;
        };
        // (line, world size) of each launcher the file itself writes.
        let want: BTreeSet<(u64, u64)> = plan
            .jobs
            .iter()
            .chain(plan.services.iter())
            .flat_map(|t| t.launchers.iter())
            .filter(|l| l.launcher != "exec_all")
            .filter_map(|l| Some((l.at.as_ref()?.line as u64, l.world_size?)))
            .collect();
        let uri = format!("file:///w/{i}.fz");
        c.open(&uri, "fuzzfile", 1, &text);
        let _ = c.diagnostics(&uri, Some(1));
        let hints = c
            .request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100000, "character": 0}}}))
            .unwrap();
        let got: BTreeSet<(u64, u64)> = hints
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|h| {
                let n = h["label"]
                    .as_str()?
                    .strip_prefix("world size ")?
                    .parse()
                    .ok()?;
                Some((h["position"]["line"].as_u64()? + 1, n))
            })
            .collect();
        assert_eq!(got, want, "{}", path.display());
        compared += want.len();
    }
    assert!(compared >= 8, "only {compared} launchers compared");
    c.shutdown();
}
