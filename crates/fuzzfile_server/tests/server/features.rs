//! Hover, completion, inlay hints, document symbols, folding, selection ranges and semantic
//! tokens, on the shipped examples and small files.

use crate::common::*;
use crate::TRAIN;
use serde_json::{json, Value};

const GENERIC: &str = include_str!("../../../../examples/nccl-torchrun-generic.fz");
const PIPELINE: &str = include_str!("../../../../examples/pipeline.fz");

fn open(text: &str) -> (Client, &'static str) {
    let uri = "file:///w/doc.fz";
    let mut c = Client::start(caps_utf16(), None);
    c.open(uri, "fuzzfile", 1, text);
    let _ = c.diagnostics(uri, Some(1));
    (c, uri)
}

fn hover_at(c: &mut Client, uri: &str, text: &str, needle: &str, delta: usize) -> String {
    let pos = c.at(text, needle, delta);
    let h = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": pos}),
        )
        .unwrap();
    if h.is_null() {
        return "(no hover)".into();
    }
    format!(
        "range: {}\n{}",
        show_range(text, &h["range"], c.encoding),
        h["contents"]["value"].as_str().unwrap()
    )
}

#[test]
fn hover_documents_keys_rules_variables_flags_and_jobs() {
    let (mut c, uri) = open(GENERIC);
    let mut shown = String::new();
    for (what, needle, delta) in [
        ("a key (with its values)", "  implementation:", 4),
        ("a nested key", "affinity", 0),
        ("an enum value shows its key", "generic\n", 1),
        ("a job name: the summary", "nccl-torchrun:", 3),
        ("an env variable in `env`", "NCCL_IB_HCA", 3),
        ("a Fuzzball variable in a script", "$MULTINODE_NODE_IP", 4),
        ("a torchrun flag in a script", "--nproc-per-node", 4),
        ("a file reference", "file://allreduce.py", 9),
        ("plain text in a script", "set -e", 1),
    ] {
        shown.push_str(&format!(
            "## {what}\n{}\n\n",
            hover_at(&mut c, uri, GENERIC, needle, delta)
        ));
    }
    insta::assert_snapshot!(shown);
    c.shutdown();
}

/// Regression: hover on `exec_all` showed nothing, and on a job's key the note that the
/// cluster checks are off came before (or instead of) what the job is.
#[test]
fn hover_on_exec_all_and_a_job_key_says_what_they_are() {
    let (mut c, uri) = open(GENERIC);
    let h = hover_at(&mut c, uri, GENERIC, "exec_all torchrun", 3);
    assert!(
        h.starts_with("range: 29:7-29:15 \"exec_all\"\n**`exec_all`**"),
        "{h}"
    );
    assert!(h.contains("`RANK` set to the node's rank"), "{h}");
    assert!(
        h.contains(
            "Here: starts `torchrun` on each of the 2 nodes (`multinode.nodes`), `RANK` 0 to 1."
        ),
        "{h}"
    );
    let h = hover_at(&mut c, uri, GENERIC, "nccl-torchrun:", 3);
    assert!(
        h.starts_with("range: 17:3-17:16 \"nccl-torchrun\"\njob `nccl-torchrun`: 2 nodes × 4 GPUs"),
        "{h}"
    );
    let (summary, rest) = h.split_once("\n\n---\n\n").unwrap();
    assert!(
        summary.contains("`torchrun` on every node (`exec_all`)"),
        "{h}"
    );
    assert!(
        rest.starts_with("**FZ309 `cluster-profile-missing`**"),
        "{h}"
    );
    c.shutdown();

    // A command behind `exec_all` that is no launcher, and `exec_all` under a wrapping
    // implementation.
    let text = "version: v4\njobs:\n  probe:\n    image: {uri: docker://alpine:3.20}\n    script: |\n      #!/bin/sh\n      exec_all hostname -f\n    multinode: {nodes: 3, implementation: generic}\n  wrapped:\n    image: {uri: docker://alpine:3.20}\n    script: |\n      #!/bin/sh\n      exec_all uname -a\n    multinode: {nodes: 2, implementation: openmpi}\n";
    let (mut c, uri) = open(text);
    let h = hover_at(&mut c, uri, text, "exec_all hostname", 0);
    assert!(
        h.contains(
            "Here: starts `hostname -f` on each of the 3 nodes (`multinode.nodes`), `RANK` 0 to 2."
        ),
        "{h}"
    );
    let h = hover_at(&mut c, uri, text, "exec_all uname", 8);
    assert!(h.contains("**`exec_all`**"), "{h}");
    assert!(
        h.contains("Here the job's implementation is `openmpi`: Fuzzball already starts the command on every node"),
        "{h}"
    );
    // The finding there comes after what `exec_all` is.
    assert!(
        h.find("**`exec_all`**") < h.find("**FZ210 `launcher-double-wrap`**"),
        "{h}"
    );
    // Off the word: no `exec_all` section.
    let h = hover_at(&mut c, uri, text, "hostname -f", 2);
    assert!(!h.contains("**`exec_all`**"), "{h}");
    c.shutdown();
}

/// A merge key says what it brings into its mapping, and from where.
#[test]
fn hover_on_a_merge_key_lists_what_it_brings() {
    let text = "version: v4\njobs:\n  train:\n    image: {uri: docker://alpine:3.20}\n    command: [nvidia-smi]\n    resource: &gpu\n      cpu: {cores: 32}\n      memory: {size: 64GiB}\n      devices: {nvidia.com/gpu: 4}\n  eval:\n    image: {uri: docker://alpine:3.20}\n    command: [nvidia-smi]\n    resource:\n      <<: *gpu\n      cpu: {cores: 8}\n";
    let (mut c, uri) = open(text);
    let h = hover_at(&mut c, uri, text, "<<", 1);
    assert!(
        h.starts_with("range: 14:7-14:9 \"<<\"\n**`<<`** YAML merge key"),
        "{h}"
    );
    // `cpu` is written beside it: not brought.
    assert!(
        h.contains("Here it brings `memory` (line 8), `devices` (line 9)."),
        "{h}"
    );
    c.shutdown();
}

#[test]
fn hover_on_a_finding_explains_its_rule() {
    let (mut c, uri) = open(TRAIN);
    let h = hover_at(&mut c, uri, TRAIN, "nproc-per-node=8", 15);
    assert!(h.contains("FZ201 `launcher-nproc-mismatch`"), "{h}");
    assert!(h.contains("## Why is this bad?"), "{h}");
    assert!(
        !h.contains("## Example"),
        "the examples are behind the link: {h}"
    );
    assert!(h.contains("/docs/rules/launcher-nproc-mismatch.md"), "{h}");
    // The deprecated key: both its rule and its documentation.
    let h = hover_at(&mut c, uri, TRAIN, "requires", 2);
    assert!(h.contains("FZ014") && h.contains("**Deprecated**"), "{h}");
    c.shutdown();
}

#[test]
fn hover_on_a_variable_shows_its_value_from_env() {
    let text = "version: v4\ndefaults:\n  job:\n    env: [NCCL_DEBUG=INFO]\njobs:\n  a:\n    image: {uri: docker://x:1}\n    env: [NP=4]\n    script: |\n      #!/bin/sh\n      echo $NCCL_DEBUG\n      torchrun --standalone --nproc-per-node ${NP} x.py\n";
    let (mut c, uri) = open(text);
    let h = hover_at(&mut c, uri, text, "${NP}", 2);
    assert!(
        h.starts_with("range: 12:46-12:51 \"${NP}\"\n**`NP`** = `4` (from the job's `env`)"),
        "{h}"
    );
    let h = hover_at(&mut c, uri, text, "$NCCL_DEBUG", 3);
    assert!(
        h.contains("**`NCCL_DEBUG`** = `INFO` (from `defaults.job.env`)"),
        "{h}"
    );
    assert!(h.contains("NCCL log level"), "then what it is: {h}");
    c.shutdown();
}

fn complete(c: &mut Client, uri: &str, text: &str, offset: usize) -> Value {
    let pos = c.pos(text, offset);
    c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": pos}),
    )
    .unwrap()
}

/// Complete at the last `|` in `src` (the text is opened without it; an earlier `|` is a
/// block scalar's header).
fn complete_src(src: &str) -> (Vec<String>, Value, String) {
    let at = src.rfind('|').unwrap();
    let text = format!("{}{}", &src[..at], &src[at + 1..]);
    let (mut c, uri) = open(&text);
    let items = complete(&mut c, uri, &text, at);
    c.shutdown();
    (labels(&items), items, text)
}

/// The labels in the order a client shows them: by `sortText`, else by label (LSP).
fn client_order(items: &Value) -> Vec<String> {
    let mut v: Vec<(String, String)> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let label = i["label"].as_str().unwrap().to_owned();
            let key = i["sortText"].as_str().unwrap_or(&label).to_owned();
            (key, label)
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, l)| l).collect()
}

/// Regression: completion offered `NCCL_ASYNC_ERROR_HANDLING` first among `NCCL_` names (no
/// `sortText`, so clients sorted by label), a name PyTorch replaced and `nccl-invalid-value`
/// reports. Deprecated names now come after every current one, tagged deprecated, naming
/// their replacement; in a script the job's own variables come first.
#[test]
fn completion_puts_deprecated_nccl_variables_last() {
    let deprecated = [
        "NCCL_ASYNC_ERROR_HANDLING",
        "NCCL_BLOCKING_WAIT",
        "NCCL_DESYNC_DEBUG",
    ];
    for src in [
        "version: v4\njobs:\n  a:\n    env:\n      - NCCL_|\n",
        "version: v4\njobs:\n  a:\n    script: |\n      #!/bin/sh\n      echo $NCCL_|\n",
        "version: v4\njobs:\n  a:\n    script: |\n      #!/bin/sh\n      export NCCL_|\n",
    ] {
        let (labels, items, _) = complete_src(src);
        for d in deprecated {
            assert!(labels.contains(&d.to_owned()), "{src}: {labels:?}");
        }
        // Without a rank, a client shows them by label: among the first.
        let mut by_label = labels.clone();
        by_label.sort();
        assert!(by_label[..3].contains(&"NCCL_ASYNC_ERROR_HANDLING".to_owned()));
        let shown = client_order(&items);
        let n = shown.len();
        assert!(n > deprecated.len() + 5, "{shown:?}");
        assert_eq!(shown[n - 3..], deprecated, "{src}: {shown:?}");
        for i in items.as_array().unwrap() {
            let old = deprecated.contains(&i["label"].as_str().unwrap());
            assert_eq!(i["tags"] == json!([1]), old, "{i}");
            if old {
                let new = format!("TORCH_{}", i["label"].as_str().unwrap());
                assert!(i["detail"].as_str().unwrap().contains(&new), "{i}");
            }
        }
    }
    let (_, items, _) = complete_src(
        "version: v4\njobs:\n  a:\n    env: [TRAIN_STEPS=10]\n    script: |\n      #!/bin/sh\n      echo $|\n",
    );
    let shown = client_order(&items);
    assert_eq!(shown[0], "TRAIN_STEPS", "{shown:?}");
}

#[test]
fn completion_of_keys_follows_place_and_version() {
    // In a v4 job, with `image` written already: job keys without `image`, without the
    // removed ones, `requires` marked deprecated.
    let (l, items, _) =
        complete_src("version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    |\n");
    assert!(
        l.contains(&"command".to_owned()) && l.contains(&"task-array".to_owned()),
        "{l:?}"
    );
    assert!(!l.contains(&"image".to_owned()), "present already: {l:?}");
    assert!(!l.contains(&"persist".to_owned()), "a service key: {l:?}");
    let req = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "requires")
        .unwrap();
    assert_eq!(req["tags"], json!([1]));
    // A service: its own keys, not the removed `ports`.
    let (l, _, _) = complete_src("version: v4\nservices:\n  s:\n    pe|\n");
    assert!(l.contains(&"persist".to_owned()) && l.contains(&"readiness-probe".to_owned()));
    assert!(
        !l.contains(&"ports".to_owned()) && !l.contains(&"task-array".to_owned()),
        "{l:?}"
    );
    // A volume in v1 has no `use` (v4 only); in v4 it has.
    let (l1, _, _) = complete_src("version: v1\nvolumes:\n  v:\n    |\n");
    let (l4, _, _) = complete_src("version: v4\nvolumes:\n  v:\n    |\n");
    assert!(
        !l1.contains(&"use".to_owned()) && l4.contains(&"use".to_owned()),
        "{l1:?} {l4:?}"
    );
    // Deep in a broken line: resource.cpu.
    let (l, items, text) =
        complete_src("version: v4\njobs:\n  a:\n    resource:\n      cpu:\n        aff|\n");
    assert_eq!(l, ["cores", "affinity", "threads", "sockets"]);
    let edit = &items[1]["textEdit"];
    assert_eq!(
        apply_edits(
            &text,
            std::slice::from_ref(edit),
            fuzzfile_server::position::Encoding::Utf16
        )
        .lines()
        .nth(5),
        Some("        affinity: ")
    );
}

#[test]
fn completion_of_values_and_references() {
    let (l, _, _) =
        complete_src("version: v4\njobs:\n  a:\n    multinode:\n      implementation: |\n");
    assert_eq!(l, ["generic", "openmpi", "ompi", "mpich", "gasnet"]);
    let (l, _, _) = complete_src("version: |\n");
    assert_eq!(l, ["v4", "v1"]);
    let (l, _, _) =
        complete_src("version: v4\njobs:\n  a:\n    resource:\n      cpu:\n        affinity: N|\n");
    assert_eq!(l, ["CORE", "SOCKET", "NUMA"]);
    // References: other jobs and services (not the job itself), volumes, files.
    let refs = "version: v4\nfiles:\n  run.sh: echo\nvolumes:\n  data: {reference: volume://user/ephemeral}\n  scratch: {reference: volume://user/ephemeral}\nservices:\n  db:\n    image: {uri: docker://x:1}\n    command: [x]\njobs:\n  prep:\n    image: {uri: docker://x:1}\n    command: [x]\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n";
    let (l, _, _) = complete_src(&format!("{refs}    depends-on:\n      - name: |\n"));
    assert_eq!(l, ["prep", "db"]);
    let (l, _, _) = complete_src(&format!("{refs}    requires: [|]\n"));
    assert_eq!(l, ["prep", "db"]);
    let (l, _, _) = complete_src(&format!("{refs}    mounts:\n      /d: |\n"));
    assert_eq!(l, ["data", "scratch"]);
    let (l, _, _) = complete_src(&format!(
        "{refs}    mounts:\n      /d:\n        volume: s|\n"
    ));
    assert_eq!(l, ["data", "scratch"]);
    let (l, _, _) = complete_src(&format!("{refs}    files:\n      /opt/run.sh: |\n"));
    assert_eq!(l, ["file://run.sh"]);
    let (l, _, _) = complete_src(&format!(
        "{refs}    depends-on:\n      - name: db\n        status: |\n"
    ));
    assert_eq!(l, ["FINISHED", "RUNNING"]);
}

#[test]
fn completion_of_variables_and_snippets() {
    // `env` entries: NCCL variables (not the ones Fuzzball sets), with `=`.
    let (l, items, _) = complete_src("version: v4\njobs:\n  a:\n    env:\n      - NCCL_IB|\n");
    assert_eq!(
        l,
        [
            "NCCL_IB_HCA",
            "NCCL_IB_DISABLE",
            "NCCL_IB_GID_INDEX",
            "NCCL_IB_TIMEOUT",
            "NCCL_IB_RETRY_CNT"
        ]
    );
    assert_eq!(items[0]["textEdit"]["newText"], "NCCL_IB_HCA=");
    let (l, _, _) = complete_src("version: v4\njobs:\n  a:\n    env:\n      - MULTINODE_|\n");
    assert_eq!(
        l,
        ["MULTINODE_WRAPPER_FORWARD_STREAMS"],
        "the rest are set by Fuzzball"
    );
    let (l, _, _) = complete_src("version: v4\njobs:\n  a:\n    env:\n      - PET_NN|\n");
    assert_eq!(l, ["PET_NNODES"]);
    // In a script after `$`: the job's own env first, then Fuzzball's variables.
    let (l, _, _) = complete_src("version: v4\njobs:\n  a:\n    env: [NPROC=4]\n    script: |\n      #!/bin/sh\n      torchrun --nproc-per-node $NP|\n");
    assert_eq!(l, ["NPROC"]);
    let (l, _, _) = complete_src(
        "version: v4\njobs:\n  a:\n    script: |\n      #!/bin/sh\n      echo ${MULTINODE_H|\n",
    );
    assert_eq!(l, ["MULTINODE_HOSTLIST", "MULTINODE_HOSTLIST_NOSLOTS"]);
    // A variable being set in a script: the names a user sets, with `=`.
    let (l, items, _) = complete_src(
        "version: v4\njobs:\n  a:\n    script: |\n      #!/bin/sh\n      export NCCL_SOCK|\n",
    );
    assert_eq!(l, ["NCCL_SOCKET_IFNAME"]);
    assert_eq!(items[0]["textEdit"]["newText"], "NCCL_SOCKET_IFNAME=");
    // No key completion inside a script, without `$`.
    let (l, _, _) =
        complete_src("version: v4\njobs:\n  a:\n    script: |\n      #!/bin/sh\n      ech|\n");
    assert!(l.is_empty(), "{l:?}");
    // A job skeleton under `jobs:`; it is a snippet that indents like the line.
    let (l, items, text) = complete_src("version: v4\njobs:\n  |\n");
    assert_eq!(l, ["job skeleton"]);
    assert_eq!(items[0]["insertTextFormat"], 2);
    let inserted = apply_edits(
        &text,
        &[items[0]["textEdit"].clone()],
        fuzzfile_server::position::Encoding::Utf16,
    );
    insta::assert_snapshot!(inserted);
}

#[test]
fn inlay_hints_show_world_size_and_resolved_arguments() {
    let text = "version: v4\njobs:\n  train:\n    image: {uri: docker://x:1}\n    env: [NP=4, NODES=2]\n    script: |\n      #!/bin/sh\n      exec_all torchrun --nnodes $NODES --nproc-per-node \"$NP\" --node-rank '$RANK' x.py\n    resource: {devices: {nvidia.com/gpu: 4}}\n    multinode: {nodes: 2, implementation: generic}\n  one:\n    image: {uri: docker://x:1}\n    command: [torchrun, --standalone, x.py]\n";
    let (mut c, uri) = open(text);
    let hints = c
        .request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}}))
        .unwrap();
    let mut shown = String::new();
    for h in hints.as_array().unwrap() {
        let p = &h["position"];
        shown.push_str(&format!(
            "{}:{} {} ({})\n",
            p["line"].as_u64().unwrap() + 1,
            p["character"].as_u64().unwrap() + 1,
            h["label"].as_str().unwrap(),
            h["tooltip"].as_str().unwrap_or("")
        ));
    }
    insta::assert_snapshot!(shown);
    // A range that covers only the second job gets only its hint.
    let hints = c
        .request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 10, "character": 0}, "end": {"line": 13, "character": 0}}}))
        .unwrap();
    assert_eq!(hints.as_array().unwrap().len(), 1, "{hints}");
    assert_eq!(hints[0]["label"], "world size 1");
    c.shutdown();
}

/// accelerate, fabric and deepspeed launches get their world size in their own flags' terms.
#[test]
fn inlay_hints_of_torchrun_like_launchers() {
    let text = "version: v4\njobs:\n  acc:\n    image: {uri: docker://x:1}\n    command: [accelerate, launch, --multi_gpu, --num_processes, '16', --num_machines, '2', x.py]\n    resource: {devices: {nvidia.com/gpu: 8}}\n  fab:\n    image: {uri: docker://x:1}\n    command: [fabric, run, --devices=4, x.py]\n    resource: {devices: {nvidia.com/gpu: 4}}\n  ds:\n    image: {uri: docker://x:1}\n    command: [deepspeed, x.py]\n    resource: {devices: {nvidia.com/gpu: 4}}\n";
    let (mut c, uri) = open(text);
    let hints = c
        .request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}}))
        .unwrap();
    let shown: Vec<String> = hints
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| {
            h["label"]
                .as_str()
                .is_some_and(|l| l.starts_with("world size"))
        })
        .map(|h| {
            format!(
                "{} ({})",
                h["label"].as_str().unwrap(),
                h["tooltip"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            "world size 16 (16 processes: 2 nodes (--num_machines) × 8 processes per node (--num_processes))",
            "world size 4 (4 processes: 1 node (default) × 4 processes per node (--devices))",
            "world size 4 (4 processes: 1 node (default) × 4 processes per node (default))",
        ],
        "{hints}"
    );
    c.shutdown();
}

#[test]
fn outline_folding_and_selection() {
    let (mut c, uri) = open(PIPELINE);
    let symbols = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .unwrap();
    let mut shown = String::new();
    for s in symbols.as_array().unwrap() {
        shown.push_str(&format!(
            "{} {}\n",
            s["name"].as_str().unwrap(),
            show_range(PIPELINE, &s["selectionRange"], c.encoding)
        ));
        for ch in s["children"].as_array().unwrap() {
            shown.push_str(&format!(
                "  {} (kind {}) {} {}\n",
                ch["name"].as_str().unwrap(),
                ch["kind"],
                ch["detail"].as_str().unwrap_or("-"),
                show_range(PIPELINE, &ch["range"], c.encoding)
                    .split(' ')
                    .next()
                    .unwrap()
            ));
        }
    }
    insta::assert_snapshot!("symbols", shown);

    let folds = c
        .request(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": uri}}),
        )
        .unwrap();
    let lines: Vec<&str> = PIPELINE.lines().collect();
    let mut shown = String::new();
    for f in folds.as_array().unwrap() {
        let (s, e) = (
            f["startLine"].as_u64().unwrap() as usize,
            f["endLine"].as_u64().unwrap() as usize,
        );
        assert!(s < e);
        shown.push_str(&format!(
            "{}-{} {:?} … {:?}{}\n",
            s + 1,
            e + 1,
            lines[s],
            lines[e],
            if f["kind"] == "comment" {
                " (comment)"
            } else {
                ""
            }
        ));
    }
    insta::assert_snapshot!("folding", shown);

    let pos = c.at(PIPELINE, "redis-server", 3);
    let sel = c
        .request(
            "textDocument/selectionRange",
            json!({"textDocument": {"uri": uri}, "positions": [pos]}),
        )
        .unwrap();
    let mut shown = String::new();
    let mut s = &sel[0];
    while !s.is_null() {
        shown.push_str(&format!(
            "{}\n",
            show_range(PIPELINE, &s["range"], c.encoding)
        ));
        s = &s["parent"];
    }
    insta::assert_snapshot!("selection", shown);
    c.shutdown();
}

#[test]
fn semantic_tokens_mark_shell_words_in_scripts() {
    let (mut c, uri) = open(GENERIC);
    let legend =
        c.init_result["capabilities"]["semanticTokensProvider"]["legend"]["tokenTypes"].clone();
    let toks = c
        .request(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": uri}}),
        )
        .unwrap();
    let data: Vec<u64> = toks["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let (mut line, mut col) = (0u64, 0u64);
    let lines: Vec<&str> = GENERIC.lines().collect();
    let mut shown = String::new();
    for t in data.chunks(5) {
        if t[0] > 0 {
            line += t[0];
            col = t[1];
        } else {
            col += t[1];
        }
        let l = lines[line as usize];
        // ASCII script: UTF-16 columns are byte columns here.
        let word = &l[col as usize..(col + t[2]) as usize];
        shown.push_str(&format!(
            "{}:{} {} {}\n",
            line + 1,
            col + 1,
            legend[t[3] as usize].as_str().unwrap(),
            word
        ));
    }
    insta::assert_snapshot!(shown);
    c.shutdown();
}

#[test]
fn hover_on_a_launcher_shows_what_it_receives() {
    // Megatron-LM's shape: the flags in an array; the job's `env` sets the count.
    let text = "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    env: [GPUS=4]\n    script: |\n      #!/bin/bash\n      ARGS=(--nproc_per_node \"$GPUS\" --standalone)\n      torchrun \"${ARGS[@]}\" pretrain_gpt.py --tp 2\n    resource: {devices: {nvidia.com/gpu: 4}}\n";
    let (mut c, uri) = open(text);
    let h = hover_at(&mut c, uri, text, "torchrun \"$", 3);
    assert!(h.starts_with("range: 9:7-9:15 \"torchrun\""), "{h}");
    assert!(
        h.contains("**`torchrun`** as it runs\n\n```sh\ntorchrun --nproc_per_node 4 --standalone pretrain_gpt.py --tp 2\n```"),
        "{h}"
    );
    assert!(h.contains("world size 4"), "{h}");
    c.shutdown();
}
