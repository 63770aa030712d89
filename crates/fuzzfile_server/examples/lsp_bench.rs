//! Benchmark of the language server as an editor sees it.
//!
//! 1. Latency: a 5,000-line Fuzzfile is open; each round sends one incremental `didChange`
//!    (a one-character edit, as a keystroke) and waits for the `publishDiagnostics` of that
//!    version. Reports the median and the 99th percentile.
//! 2. Memory: 100 distinct Fuzzfiles are opened and analysed (their diagnostics published);
//!    reports the server's resident memory before and after.
//!
//! ```sh
//! cargo build --release -p fuzzlint
//! cargo run --release -p fuzzfile_server --example lsp_bench -- --server target/release/fuzzlint
//! cargo run --release -p fuzzfile_server --example lsp_bench              # in process
//! ```
//!
//! With `--server PATH` the real binary runs as a child process and messages go through its
//! stdin/stdout (JSON-RPC framing and serialisation included, memory read from
//! `/proc/<pid>/status`); without it the server runs in this process on an in-memory
//! connection (memory is then this whole process). Options: `--rounds N` (default 300).
#![allow(clippy::unwrap_used)]

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A Fuzzfile of about `lines` lines: jobs with env, resources, mounts and dependencies;
/// one job in `launcher_every` runs torchrun from a script (each such script is parsed as
/// shell by the launcher analysis), the others run shell scripts without a launcher or
/// command lists; a service and a volume.
fn big_fuzzfile(lines: usize, launcher_every: usize) -> String {
    let mut s = String::from("# Synthetic benchmark workflow\nversion: v4\nvolumes:\n  data:\n    reference: volume://user/ephemeral\nservices:\n  cache:\n    image: {uri: docker://redis:7.4}\n    command: [redis-server]\njobs:\n");
    let mut i = 0;
    while s.lines().count() < lines {
        let after = if i == 0 {
            "cache".to_owned()
        } else {
            format!("job-{}", i - 1)
        };
        if i % launcher_every == 0 {
            s.push_str(&format!(
                "  job-{i}:\n    image:\n      uri: docker://nvcr.io/nvidia/pytorch:25.01-py3\n    env:\n      - NCCL_DEBUG=WARN\n      - NPROC=4\n    script: |\n      #!/bin/bash\n      set -e\n      torchrun --standalone --nproc-per-node $NPROC /opt/train.py --epoch {i}\n    resource:\n      cpu: {{cores: 16, affinity: NUMA}}\n      memory: {{size: 64GiB}}\n      devices: {{nvidia.com/gpu: 4}}\n    mounts:\n      /data: data\n    depends-on:\n      - name: {after}\n"
            ));
        } else if i % 2 == 0 {
            s.push_str(&format!(
                "  job-{i}:\n    image: {{uri: docker://alpine:3.20}}\n    script: |\n      #!/bin/sh\n      set -eu\n      echo \"step {i}\" >> /data/log.txt\n      ls -l /data | wc -l\n    mounts:\n      /data: data\n    depends-on:\n      - name: {after}\n"
            ));
        } else {
            s.push_str(&format!(
                "  job-{i}:\n    image: {{uri: docker://alpine:3.20}}\n    command: [/bin/sh, -c, \"echo step {i} && ls /data\"]\n    policy:\n      timeout: {{execute: 30m}}\n    depends-on:\n      - name: {after}\n"
            ));
        }
        i += 1;
    }
    s
}

/// A way to talk to the server.
enum Transport {
    InProcess {
        conn: lsp_server::Connection,
        _thread: std::thread::JoinHandle<i32>,
    },
    Child {
        child: Child,
        reader: BufReader<std::process::ChildStdout>,
    },
}

impl Transport {
    fn send(&mut self, m: Message) {
        match self {
            Transport::InProcess { conn, .. } => conn.sender.send(m).unwrap(),
            Transport::Child { child, .. } => {
                let stdin = child.stdin.as_mut().unwrap();
                m.write(stdin).unwrap();
                stdin.flush().unwrap();
            }
        }
    }
    fn recv(&mut self) -> Message {
        match self {
            Transport::InProcess { conn, .. } => conn.receiver.recv().unwrap(),
            Transport::Child { reader, .. } => Message::read(reader).unwrap().unwrap(),
        }
    }
    /// Resident memory of the server, in KiB (current and peak).
    fn memory_kib(&self) -> (u64, u64) {
        let path = match self {
            Transport::InProcess { .. } => "/proc/self/status".to_owned(),
            Transport::Child { child, .. } => format!("/proc/{}/status", child.id()),
        };
        let status = std::fs::read_to_string(path).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

struct Client {
    t: Transport,
    next: i32,
}

impl Client {
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = RequestId::from(self.next);
        self.t
            .send(Request::new(id.clone(), method.into(), params).into());
        loop {
            match self.t.recv() {
                Message::Response(r) if r.id == id => {
                    return r.response_result.unwrap_or(Value::Null)
                }
                Message::Request(r) => self
                    .t
                    .send(lsp_server::Response::new_ok(r.id, Value::Null).into()),
                _ => {}
            }
        }
    }
    fn notify(&mut self, method: &str, params: Value) {
        self.t.send(Notification::new(method.into(), params).into());
    }
    /// Wait for the diagnostics of `uri` at `version`; returns how many there were.
    fn wait_diagnostics(&mut self, uri: &str, version: i64) -> usize {
        loop {
            if let Message::Notification(n) = self.t.recv() {
                if n.method == "textDocument/publishDiagnostics"
                    && n.params["uri"] == uri
                    && n.params["version"] == version
                {
                    return n.params["diagnostics"].as_array().map_or(0, Vec::len);
                }
            }
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let rounds: usize = arg("--rounds").and_then(|r| r.parse().ok()).unwrap_or(300);
    let transport = match arg("--server") {
        Some(path) => {
            let mut child = Command::new(&path)
                .arg("server")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {path}: {e}"));
            let reader = BufReader::new(child.stdout.take().unwrap());
            println!("server: {path} server (child process, stdio)");
            Transport::Child { child, reader }
        }
        None => {
            let (server, client) = lsp_server::Connection::memory();
            let thread = std::thread::spawn(move || fuzzfile_server::run(server));
            println!("server: in process (memory connection)");
            Transport::InProcess {
                conn: client,
                _thread: thread,
            }
        }
    };
    let mut c = Client {
        t: transport,
        next: 0,
    };
    // UTF-16, the encoding that costs a conversion (VS Code's).
    c.request("initialize", json!({"capabilities": {}, "processId": null}));
    c.notify("initialized", json!({}));
    let (rss0, _) = c.t.memory_kib();

    // 1. Latency on 5,000-line files: one job in 8 with a torchrun script, and (the worst
    // case) one in 2.
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mut big_text = String::new();
    for (name, every) in [
        ("mixed, 1 job in 8 launches torchrun", 8),
        ("launcher-heavy, 1 job in 2 launches torchrun", 2),
    ] {
        let text = big_fuzzfile(5000, every);
        let lines = text.lines().count();
        let uri = format!("file:///bench/big-{every}.fz");
        c.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "fuzzfile", "version": 1, "text": text}}));
        let n = c.wait_diagnostics(&uri, 1);
        println!(
            "{name}: {lines} lines, {} bytes, {n} diagnostics",
            text.len()
        );
        // The edit: one digit of the last timeout (30m <-> 31m), as a keystroke.
        let line = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("execute: 30m"))
            .last()
            .map(|(i, _)| i)
            .unwrap();
        let col = text.lines().nth(line).unwrap().find("30m").unwrap() + 1;
        let mut times = Vec::with_capacity(rounds);
        for r in 0..rounds {
            let version = r as i64 + 2;
            let digit = if r % 2 == 0 { "1" } else { "0" };
            let start = Instant::now();
            c.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{
                    "range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 1}},
                    "text": digit
                }]}),
            );
            c.wait_diagnostics(&uri, version);
            times.push(start.elapsed());
        }
        times.sort();
        println!(
            "  didChange -> publishDiagnostics over {rounds} edits: median {:.2} ms, p99 {:.2} ms (min {:.2}, max {:.2})",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.99)),
            ms(times[0]),
            ms(times[times.len() - 1])
        );
        c.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
        // The analysis alone on the same text, in this process, for comparison.
        let mut alone = Vec::with_capacity(rounds.min(100));
        for _ in 0..rounds.min(100) {
            let start = Instant::now();
            let a = fuzzfile_check::analyze(&text);
            std::hint::black_box(&a);
            alone.push(start.elapsed());
        }
        alone.sort();
        println!(
            "  fuzzfile_check::analyze of the same text alone: median {:.2} ms, p99 {:.2} ms",
            ms(percentile(&alone, 0.5)),
            ms(percentile(&alone, 0.99))
        );
        big_text = text;
    }
    let text = big_text;

    // 2. Memory with 100 open files: the examples and the fuzz seeds (and the external
    // corpus when present), each made distinct, cycled to 100.
    // The repository: where this was built, else the working directory (a copy elsewhere).
    let built_in = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = if built_in.join("examples").is_dir() {
        built_in
    } else {
        std::path::PathBuf::from(".")
    };
    let mut sources = Vec::new();
    for dir in ["examples", "fuzz/seeds", "../shared/corpus/plain"] {
        if let Ok(rd) = std::fs::read_dir(root.join(dir)) {
            let mut paths: Vec<_> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "fz"))
                .collect();
            paths.sort();
            for p in paths {
                sources.push(std::fs::read_to_string(p).unwrap());
            }
        }
    }
    let (before, _) = c.t.memory_kib();
    let mut bytes = 0;
    for i in 0..100 {
        let text = format!("# open file {i}\n{}", sources[i % sources.len()]);
        bytes += text.len();
        let uri = format!("file:///bench/open-{i}.fz");
        c.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "fuzzfile", "version": 1, "text": text}}));
        c.wait_diagnostics(&uri, 1);
    }
    let (after, peak) = c.t.memory_kib();
    println!(
        "100 open files ({} distinct sources, {:.0} KB of text): resident {:.1} MB (was {:.1} MB at start, {:.1} MB before opening them; peak {:.1} MB)",
        sources.len(),
        bytes as f64 / 1000.0,
        after as f64 / 1024.0,
        rss0 as f64 / 1024.0,
        before as f64 / 1024.0,
        peak as f64 / 1024.0
    );
    // And 100 copies of the 5,000-line file, an upper bound.
    for i in 0..100 {
        let text = format!("# big copy {i}\n{text}");
        let uri = format!("file:///bench/big-{i}.fz");
        c.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "fuzzfile", "version": 1, "text": text}}));
        c.wait_diagnostics(&uri, 1);
    }
    let (big, peak) = c.t.memory_kib();
    println!(
        "plus 100 open 5,000-line files: resident {:.1} MB (peak {:.1} MB)",
        big as f64 / 1024.0,
        peak as f64 / 1024.0
    );
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    if let Transport::Child { mut child, .. } = c.t {
        let status = child.wait().unwrap();
        println!("server exit status: {status}");
    }
}
