//! Every file `fuzz` reads goes through the one bounded reader: `/dev/zero`, a FIFO that never
//! ends and a 10 GB sparse file are refused at the size limit, as a Fuzzfile (`plan`, `check`,
//! `run`), a cluster profile (`--cluster`), a hostfile (`--hostfile`) and a secrets file
//! (`--secrets`); a directory is refused by name. Each run has a deadline (a hang guard).

use fuzz_test_support::{fuzz_binary, lossy_text, output_within_or_fail, ScratchDirectory};
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);
const GOOD: &str = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine:3.20\n    command: [echo, hi]\n";

fn temp(tag: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzz-hostile-reads", tag)
}

/// Exit code and stderr of `fuzz args` in `dir`, killed after [`DEADLINE`].
fn fuzz(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = output_within_or_fail(
        fuzz_binary!().command().args(args).current_dir(dir),
        DEADLINE,
    );
    (
        out.status.code().expect("fuzz was killed by a signal"),
        lossy_text(&out.stderr),
    )
}

/// A FIFO whose writer thread writes until the reader goes away.
fn endless_fifo(path: &Path) -> std::thread::JoinHandle<()> {
    let st = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(st.success());
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&path) else {
            return;
        };
        let chunk = "# endless\n".repeat(6554);
        while f.write_all(chunk.as_bytes()).is_ok() {}
    })
}

fn sparse(path: &Path) {
    let f = std::fs::File::create(path).expect("create");
    f.set_len(10 * 1024 * 1024 * 1024).expect("sparse 10 GB");
}

#[test]
fn every_kind_of_file_is_read_with_a_limit() {
    let d = temp("all");
    std::fs::write(d.join("ok.fz"), GOOD).expect("write");
    sparse(&d.join("sparse"));
    std::fs::create_dir(d.join("dir")).expect("dir");

    // Each case: the arguments (FILE stands for the hostile file) and what stderr says.
    let cases: &[(&[&str], &str)] = &[
        (
            &["plan", "FILE"],
            "FILE is larger than 64 MiB: it cannot be a Fuzzfile",
        ),
        (
            &["check", "FILE"],
            "FILE is larger than 64 MiB: it cannot be a Fuzzfile",
        ),
        (
            &["run", "FILE"],
            "FILE is larger than 64 MiB: it cannot be a Fuzzfile or launch plan",
        ),
        (
            &["plan", "--cluster", "FILE", "ok.fz"],
            "--cluster FILE: larger than 1 MiB: it cannot be a cluster profile",
        ),
        (
            &["plan", "--hostfile", "FILE", "ok.fz"],
            "--hostfile FILE: larger than 1 MiB: it cannot be a hostfile",
        ),
    ];
    for (args, want) in cases {
        for file in ["/dev/zero", "sparse", "fifo"] {
            let writer = (file == "fifo").then(|| endless_fifo(&d.join("fifo")));
            let args: Vec<&str> = args
                .iter()
                .map(|a| if *a == "FILE" { file } else { a })
                .collect();
            let (code, err) = fuzz(&d, &args);
            assert_eq!(code, 2, "fuzz {args:?}: {err}");
            let want = want.replace("FILE", file);
            assert!(err.contains(&want), "fuzz {args:?}: {err}\nwanted: {want}");
            if let Some(w) = writer {
                w.join().expect("writer");
                std::fs::remove_file(d.join("fifo")).expect("rm fifo");
            }
        }
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "FILE" { "dir" } else { a })
            .collect();
        let (code, err) = fuzz(&d, &args);
        assert_eq!(code, 2, "fuzz {args:?}: {err}");
        // `fuzz check`, as `fuzzlint check`, searches a directory: this one has no Fuzzfile.
        let searched = args[0] == "check" && err.contains("dir: no Fuzzfile found");
        assert!(
            err.contains("dir") && (err.contains("directory") || searched),
            "fuzz {args:?}: {err}"
        );
    }
    // Secrets files: only regular files, at most 1 MiB (checked before reading, and by the
    // reader while reading).
    for file in ["/dev/zero", "sparse", "dir"] {
        let (code, err) = fuzz(&d, &["run", "--secrets", file, "ok.fz"]);
        assert_eq!(code, 2, "--secrets {file}: {err}");
        assert!(
            err.contains(&format!("{file} is not a file"))
                || err.contains("a secrets file is at most"),
            "--secrets {file}: {err}"
        );
    }
}
