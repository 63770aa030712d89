//! torchrun, `accelerate launch`, `fabric run` and `deepspeed` command lines read by the
//! semantics layer, checked against the tools' own parsers.
//!
//! `tests/parsers/<tool>.json` lists each tool's options as its parser declares them (the
//! source file, tag and commit are in the file); `tests/parsers/launcher_options.py` builds that
//! parser with Python's argparse (click for `fabric run`) and parses every line below. For each
//! line the tool accepts, the node count, processes per node, node rank, master address and
//! port, and the program with its arguments must be what [`Launch::setting`] and
//! [`LauncherArgs::program`] give for the same words in a Fuzzfile; for each line it refuses,
//! the semantics layer must not take the value the refused option would give.
//!
//! The lines are real launch lines (the source of each is in its comment) and the forms the
//! parsers accept: `--flag=value`, `_` and `-` spellings, argparse's unique prefixes, options
//! after the script (click), `--`, `-m`.

use fuzzfile_check::semantics::{Launch, LauncherArgs, Resolved};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const SETTINGS: &[&str] = &[
    "nproc-per-node",
    "nnodes",
    "node-rank",
    "master-addr",
    "master-port",
];

/// One launch line: the arguments after the launcher word, and, for a line the tool refuses,
/// the settings the semantics layer must not give from it.
struct Case {
    args: &'static [&'static str],
    refused: Option<&'static [&'static str]>,
}

const fn ok(args: &'static [&'static str]) -> Case {
    Case {
        args,
        refused: None,
    }
}

const fn refused(args: &'static [&'static str], absent: &'static [&'static str]) -> Case {
    Case {
        args,
        refused: Some(absent),
    }
}

const TORCHRUN: &[Case] = &[
    // torch/distributed/run.py module documentation, "Single-node multi-worker" and
    // "Fault tolerant".
    ok(&[
        "--standalone",
        "--nnodes=1",
        "--nproc-per-node=4",
        "YOUR_TRAINING_SCRIPT.py",
        "--arg1",
    ]),
    ok(&[
        "--nnodes=2",
        "--nproc-per-node=8",
        "--max-restarts=3",
        "--rdzv-id=42",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=node1.example.com:29400",
        "train.py",
    ]),
    // NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh, DISTRIBUTED_ARGS.
    ok(&[
        "--nproc_per_node",
        "8",
        "--nnodes",
        "2",
        "--node_rank",
        "1",
        "--master_addr",
        "10.0.0.1",
        "--master_port",
        "6000",
        "pretrain_gpt.py",
        "--tensor-model-parallel-size",
        "8",
    ]),
    // argparse's unique prefixes.
    ok(&[
        "--nnode=2",
        "--nproc_per_node=4",
        "--node_r",
        "1",
        "--master_ad",
        "head",
        "--master-p",
        "1234",
        "train.py",
    ]),
    // `-m`: the module and its arguments.
    ok(&["--nproc-per-node", "2", "-m", "pkg.train", "--nnodes", "3"]),
    // The script's own options are not torchrun's.
    ok(&[
        "--nproc-per-node=2",
        "train.py",
        "--nnodes",
        "3",
        "--node-rank",
        "1",
    ]),
    ok(&["--nproc-per-node=2", "--", "train.py", "--lr", "1"]),
];

const ACCELERATE: &[Case] = &[
    // huggingface/accelerate examples/slurm/submit_multigpu.sh and submit_multinode.sh.
    ok(&[
        "--num_processes",
        "4",
        "/accelerate/examples/complete_nlp_example.py",
        "--mixed_precision",
        "fp16",
        "--with_tracking",
    ]),
    ok(&[
        "--num_processes",
        "16",
        "--num_machines",
        "4",
        "--rdzv_backend",
        "c10d",
        "--main_process_ip",
        "10.0.0.1",
        "--main_process_port",
        "29500",
        "complete_nlp_example.py",
        "--mixed_precision",
        "fp16",
    ]),
    // huggingface/accelerate issue #2240 (with `--same_network` as the switch it is).
    ok(&[
        "--num_processes",
        "8",
        "--num_machines",
        "2",
        "--machine_rank",
        "0",
        "--mixed_precision",
        "no",
        "--gpu_ids",
        "0,1,2,3",
        "--same_network",
        "--main_process_ip",
        "206.12.124.2",
        "--main_process_port",
        "63333",
        "--rdzv_backend",
        "static",
        "mainScript.py",
        "model",
    ]),
    // allenai/FineGrainedRLHF train_baseline.sh; sihunc-flwls/hallo train.sh (`-m` first);
    // marcellobarylli/Recurrent-Parameter-Generation workspace/ablation/trainable_pe/trainable.sh.
    ok(&[
        "--main_process_port",
        "29500",
        "--num_machines",
        "1",
        "--machine_rank",
        "0",
        "--num_processes",
        "4",
        "--mixed_precision",
        "bf16",
        "--multi_gpu",
        "train_baseline.py",
        "--config",
        "baseline_config.yml",
    ]),
    ok(&[
        "-m",
        "--config_file",
        "accelerate_config.yaml",
        "--machine_rank",
        "0",
        "--main_process_ip",
        "0.0.0.0",
        "--main_process_port",
        "20055",
        "--num_machines",
        "1",
        "--num_processes",
        "1",
        "scripts.train_stage1",
        "--config",
        "./configs/train/stage1.yaml",
    ]),
    ok(&[
        "--main_process_port=29803",
        "--num_processes=1",
        "--gpu_ids=1",
        "--num_machines=1",
        "--mixed_precision=bf16",
        "--dynamo_backend=no",
        "trainable.py",
    ]),
    // Every `_` option also spelled with `-`.
    ok(&[
        "--num-processes=8",
        "--num-machines=2",
        "--machine-rank=1",
        "--main-process-ip=head",
        "train.py",
    ]),
    // `-m` is a switch; the module is the first positional word.
    ok(&["-m", "--num_processes", "2", "pkg.train", "--lr", "1"]),
    ok(&[
        "--config_file",
        "cfg.yaml",
        "train.py",
        "--num_processes",
        "3",
    ]),
    // `allow_abbrev=False`: no prefixes.
    refused(&["--num_proc", "8", "train.py"], &["nproc-per-node"]),
    refused(
        &["--num_processes=8", "--num_mach", "2", "train.py"],
        &["nnodes"],
    ),
];

const DEEPSPEED: &[Case] = &[
    // microsoft/DeepSpeed docs/_tutorials/getting-started.md (tag v0.16.4).
    ok(&[
        "--hostfile=myhostfile",
        "client_entry.py",
        "--deepspeed",
        "--deepspeed_config",
        "ds_config.json",
    ]),
    ok(&[
        "--num_nodes=2",
        "client_entry.py",
        "--deepspeed",
        "--deepspeed_config",
        "ds_config.json",
    ]),
    ok(&["--include=worker-2:0,1", "client_entry.py", "--deepspeed"]),
    ok(&[
        "--exclude=worker-2:0@worker-3:0,1",
        "client_entry.py",
        "--deepspeed",
    ]),
    ok(&[
        "--hostfile=myhostfile",
        "--no_ssh",
        "--node_rank=1",
        "--master_addr=10.0.0.1",
        "--master_port=29500",
        "client_entry.py",
        "--deepspeed",
    ]),
    // sudy-super/coencoder_utils train.sh; randydl/LLaMA-Factory run_ds.sh.
    ok(&[
        "--hostfile=hostfile",
        "--num_nodes=4",
        "--num_gpus=8",
        "finetune_new.py",
        "--deepspeed",
        "ds_config_new.json",
    ]),
    ok(&[
        "--num_gpus",
        "8",
        "--num_nodes",
        "4",
        "--hostfile",
        "hostfile",
        "--master_addr",
        "10.252.32.12",
        "randy/train.py",
    ]),
    // deepspeedai/DeepSpeedExamples applications/DeepSpeed-Chat training_scripts (step 1).
    ok(&[
        "--num_gpus",
        "1",
        "main.py",
        "--model_name_or_path",
        "facebook/opt-1.3b",
        "--deepspeed",
    ]),
    // argparse's prefixes and short options; `--num_accelerators` is `--num_gpus`.
    ok(&[
        "--num_g",
        "2",
        "--master_a",
        "head",
        "--node_r",
        "0",
        "train.py",
    ]),
    ok(&["-H", "/job/hostfile", "-i", "localhost:0,1", "train.py"]),
    ok(&["--num_accelerators", "4", "train.py", "--num_gpus", "1"]),
    // Options are spelled with `_` only; `--num` is ambiguous.
    refused(&["--num-gpus", "2", "train.py"], &["nproc-per-node"]),
    refused(&["--num", "2", "train.py"], &["nproc-per-node", "nnodes"]),
];

const FABRIC: &[Case] = &[
    // Lightning-AI/pytorch-lightning docs/source-fabric/guide/multi_node/barebones.rst.
    ok(&[
        "--node-rank=0",
        "--main-address=10.10.10.16",
        "--accelerator=cuda",
        "--devices=8",
        "--num-nodes=2",
        "train.py",
    ]),
    // SHUMKASHUN/litgpt run_node_3.sh.
    ok(&[
        "--node-rank=3",
        "--main-address=172.16.23.120",
        "--accelerator=cuda",
        "--num-nodes=4",
        "--devices=8",
        "litgpt/pretrain.py",
        "--config",
        "configs/openwebmath_mistral.yaml",
    ]),
    // click takes its options after the script too, and gives the others to the script.
    ok(&["train.py", "--devices", "4", "--lr", "0.1", "--num_nodes=2"]),
    ok(&[
        "--devices",
        "0,1",
        "train.py",
        "--precision",
        "bf16-mixed",
        "--main_port",
        "1234",
    ]),
    ok(&["--devices=8", "--", "train.py", "--devices", "2"]),
    // No prefixes in click: an unknown option is a positional word (here, the script).
    ok(&["--dev", "4", "train.py"]),
    ok(&["train.py", "--main-addr", "head", "--node_rank", "1"]),
];

fn parsers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/parsers")
}

/// What the tool's own parser gives for one line.
struct Answer {
    /// `None`: accepted; else the parser's message.
    refused: Option<String>,
    settings: BTreeMap<String, String>,
    program: Vec<String>,
}

/// `args` as a JSON list of strings.
fn json_list(args: &[&str]) -> String {
    let items: Vec<String> = args
        .iter()
        .map(|a| format!("\"{}\"", a.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    format!("[{}]", items.join(","))
}

/// What the tool's own parser gives for each line.
fn reference(table: &str, cases: &[Case]) -> Vec<Answer> {
    let mut child = Command::new("python3")
        .arg(parsers_dir().join("launcher_options.py"))
        .arg(parsers_dir().join(table))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs (CI installs it)");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for c in cases {
            writeln!(stdin, "{}", json_list(c.args)).expect("write");
        }
    }
    let out = child.wait_with_output().expect("python3 output");
    assert!(out.status.success(), "launcher_options.py {table} failed");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|line| {
            let mut fields = line.split('\t');
            let status = fields.next().unwrap_or("");
            let items = |f: Option<&str>| -> Vec<String> {
                f.unwrap_or("")
                    .split('\u{1f}')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            };
            let settings = items(fields.next())
                .into_iter()
                .filter_map(|kv| {
                    kv.split_once('=')
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                })
                .collect();
            Answer {
                refused: (status != "ok").then(|| status.to_owned()),
                settings,
                program: items(fields.next()),
            }
        })
        .collect()
}

/// The launch the semantics layer finds in a job whose command is `launcher` `args`.
fn launch(launcher: &[&str], args: &[&str]) -> (Launch, LauncherArgs) {
    let items: Vec<String> = launcher
        .iter()
        .chain(args)
        .map(|a| format!("\"{}\"", a.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    let text = format!(
        "version: v4\njobs:\n  t:\n    image: {{uri: docker://x:1}}\n    command: [{}]\n",
        items.join(", ")
    );
    let a = fuzzfile_check::analyze(&text);
    let facts = a.facts(&a.model.jobs[0]);
    let l = facts
        .launches
        .first()
        .unwrap_or_else(|| panic!("no launch in\n{text}"))
        .clone();
    let parsed = l
        .parsed
        .clone()
        .unwrap_or_else(|| panic!("not parsed:\n{text}"));
    (l, parsed)
}

fn settings_of(l: &Launch) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for name in SETTINGS {
        if let Some(s) = l.setting(name).filter(|s| !s.from_env) {
            let v = match &s.value {
                Resolved::Literal(v) => v.clone(),
                other => panic!("{name}: not a literal: {other:?}"),
            };
            m.insert((*name).to_owned(), v);
        }
    }
    m
}

fn check(table: &str, launchers: &[&[&str]], cases: &[Case]) {
    let expected = reference(table, cases);
    assert_eq!(expected.len(), cases.len(), "{table}: one answer per line");
    let mut failures = Vec::new();
    for (case, want) in cases.iter().zip(&expected) {
        let accepted = want.refused.is_none();
        match (case.refused, accepted) {
            (None, false) => failures.push(format!(
                "{table}: the tool refuses {:?}: {}",
                case.args,
                want.refused.as_deref().unwrap_or("")
            )),
            (Some(_), true) => failures.push(format!(
                "{table}: the tool accepts {:?}, listed as refused",
                case.args
            )),
            _ => {}
        }
        for launcher in launchers {
            let (l, parsed) = launch(launcher, case.args);
            let got = settings_of(&l);
            if let Some(absent) = case.refused {
                for name in absent {
                    if got.contains_key(*name) {
                        failures.push(format!(
                            "{launcher:?} {:?}: refused by the tool, yet `{name}` is {}",
                            case.args, got[*name]
                        ));
                    }
                }
                continue;
            }
            let want_settings = &want.settings;
            if &got != want_settings {
                failures.push(format!(
                    "{launcher:?} {:?}: settings {got:?}, the tool's parser {want_settings:?}",
                    case.args
                ));
            }
            let program: Vec<String> = parsed.program.iter().map(|w| w.text.clone()).collect();
            let want_program = &want.program;
            if &program != want_program {
                failures.push(format!(
                    "{launcher:?} {:?}: program {program:?}, the tool's parser {want_program:?}",
                    case.args
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn torchrun_lines_match_its_argparse_parser() {
    check(
        "torchrun.json",
        &[
            &["torchrun"],
            &["python", "-m", "torch.distributed.run"],
            &["python3", "-u", "-m", "torch.distributed.run"],
        ],
        TORCHRUN,
    );
}

#[test]
fn accelerate_launch_lines_match_its_argparse_parser() {
    check(
        "accelerate_launch.json",
        &[
            &["accelerate", "launch"],
            &["accelerate-launch"],
            &["python", "-m", "accelerate.commands.launch"],
        ],
        ACCELERATE,
    );
}

#[test]
fn deepspeed_lines_match_its_argparse_parser() {
    check("deepspeed_runner.json", &[&["deepspeed"]], DEEPSPEED);
}

#[test]
fn fabric_run_lines_match_its_click_parser() {
    check(
        "fabric_run.json",
        &[&["fabric", "run"], &["lightning", "run", "model"]],
        FABRIC,
    );
}

/// The options of a table: every spelling and whether it takes a value (a small reader of the
/// tables' fixed layout: `"strings": [...]`, then `"takes_value": bool`).
fn options(table: &str) -> (bool, Vec<(String, bool)>) {
    let text = std::fs::read_to_string(parsers_dir().join(table)).expect("table");
    let click = text.contains("\"engine\": \"click\"");
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("\"strings\": [") {
        rest = &rest[i + "\"strings\": [".len()..];
        let end = rest.find(']').expect("]");
        let strings: Vec<String> = rest[..end]
            .split(',')
            .map(|s| s.trim().trim_matches('"').to_owned())
            .collect();
        rest = &rest[end..];
        let tv = rest.find("\"takes_value\": ").expect("takes_value");
        let takes_value = rest[tv + "\"takes_value\": ".len()..].starts_with("true");
        out.extend(strings.into_iter().map(|s| (s, takes_value)));
    }
    (click, out)
}

/// The option tables and the semantics layer's grammars agree on which options take a value:
/// a value option read as a switch (or the reverse) would shift every word after it.
#[test]
fn every_option_of_the_tables_is_parsed_with_its_arity() {
    for (table, launcher) in [
        ("torchrun.json", &["torchrun"][..]),
        ("accelerate_launch.json", &["accelerate", "launch"][..]),
        ("deepspeed_runner.json", &["deepspeed"][..]),
        ("fabric_run.json", &["fabric", "run"][..]),
    ] {
        let (click, opts) = options(table);
        assert!(opts.len() > 5, "{table}: options read");
        for (s, takes_value) in opts {
            // `-h`/`--help` print and exit; torchrun's `-m` / `--module` makes the next word
            // the program in both readings.
            if s == "-h"
                || s == "--help"
                || (table == "torchrun.json" && (s == "-m" || s == "--module"))
            {
                continue;
            }
            // `OPTION X script.py`: the program is `script.py` when the option takes X,
            // `X script.py` when it is a switch (click: the script comes first).
            let args: Vec<&str> = if click {
                vec!["script.py", &s, "X"]
            } else {
                vec![&s, "X", "script.py"]
            };
            let (_, parsed) = launch(launcher, &args);
            let program: Vec<&str> = parsed.program.iter().map(|w| w.text.as_str()).collect();
            let want: &[&str] = match (click, takes_value) {
                (_, true) => &["script.py"],
                (false, false) => &["X", "script.py"],
                (true, false) => &["script.py", "X"],
            };
            assert_eq!(program, want, "{table}: {s}");
        }
    }
}
