//! What a hostile file in a pull request can do to the CI log that `fuzzlint` writes: nothing.
//!
//! - Control characters, bidirectional overrides and line separators in keys, values and file
//!   names reach no output format raw: no escape sequence (colours, cursor moves, OSC 8 links,
//!   OSC 52 clipboard writes), no line that starts with a GitHub Actions workflow command
//!   (`::error`, `::add-mask`), no reordered text.
//! - A file that is a symbolic link out of the working directory (to `/proc/self/environ`,
//!   say) is not read, so its content (the CI job's environment, with its tokens) never appears
//!   in a code frame.

use fuzz_test_support::ScratchDirectory;
use std::path::Path;
use std::process::{Command, Output};

const FUZZLINT: &str = env!("CARGO_BIN_EXE_fuzzlint");

fn temp_dir(name: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzzlint-untrusted", name)
}

fn run(bin: &str, dir: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("SECRET_TOKEN", "hunter2-do-not-print")
        .env_remove("NO_COLOR")
        .output()
        .expect("run the binary")
}

/// A Fuzzfile whose keys, values and comments carry every kind of character a terminal or a
/// CI log acts on: a newline followed by a workflow command, CSI and OSC sequences, BEL, a
/// right-to-left override, a line separator, C1 controls, DEL.
const HOSTILE: &str = "version: v4\n\
jobs:\n\
  a:\n\
    image: {uri: docker://x}\n\
    command: [true]\n\
    \"x\\n::add-mask::pwned\\e[2J\\e]8;;https://evil.invalid\\a\": 1\n\
    \"\\e]52;c;cHduZWQ=\\a\\u202eexe.fz\\u2028\\x85\\x9b31m\\x7f\": 2\n\
    y\x1b[1A\x1b[2K: 3\n";

/// Every unprintable character a hostile file could smuggle into output, other than `\n`.
fn unprintable(s: &str) -> Vec<(usize, char)> {
    s.char_indices()
        .filter(|&(_, c)| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

fn assert_clean(what: &str, out: &str) {
    let bad = unprintable(out);
    assert!(
        bad.is_empty(),
        "{what}: unprintable characters {bad:?} reach the output:\n{out}"
    );
}

#[test]
fn hostile_characters_reach_no_output_format_raw() {
    let dir = temp_dir("chars");
    std::fs::write(dir.join("hostile.fz"), HOSTILE).expect("write the file");
    for format in ["human", "github", "json", "sarif"] {
        let out = run(FUZZLINT, &dir, &["check", "--format", format, "hostile.fz"]);
        assert_eq!(out.status.code(), Some(1), "{format}: the file has errors");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_clean(format, &stdout);
        assert_clean(format, &String::from_utf8_lossy(&out.stderr));
        // The findings are still there, with the hostile text escaped, not dropped.
        assert!(
            stdout.contains("unknown key") || stdout.contains("unknown-key"),
            "{format}: {stdout}"
        );
        if format != "json" && format != "sarif" {
            assert!(stdout.contains("\\u{1b}[2J"), "{format}: {stdout}");
        }
        // A GitHub Actions runner reads a workflow command at the start of any line.
        for line in stdout.lines() {
            let rest = line.strip_prefix("::error ").unwrap_or(line);
            assert!(
                !rest.contains("\n::") && !line.starts_with("::add-mask"),
                "{format}: a line starts a workflow command: {line}"
            );
        }
    }
}

#[test]
fn code_frames_keep_positions_when_they_replace_control_characters() {
    let dir = temp_dir("frames");
    // The unknown key after the ESC is at column 21 of line 6; the frame's caret must still
    // point at it after the ESC is replaced.
    let text = "version: v4\njobs:\n  a:\n    image: {uri: docker://x}\n    command: [true]\n    env: [\"A=\\e\"]\n    name: x\x1b\n    bogus: 1\n";
    std::fs::write(dir.join("frames.fz"), text).expect("write the file");
    let out = run(FUZZLINT, &dir, &["check", "frames.fz"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_clean("human", &stdout);
    assert!(stdout.contains("frames.fz:8:5"), "{stdout}");
}

#[test]
fn a_symbolic_link_out_of_the_working_directory_is_not_read() {
    let dir = temp_dir("link");
    std::fs::write(
        dir.join("good.fz"),
        "version: v4\njobs:\n  a:\n    image: {uri: docker://x}\n    command: [true]\n",
    )
    .expect("write the file");
    std::os::unix::fs::symlink("/proc/self/environ", dir.join("evil.fz")).expect("link");
    std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
    std::os::unix::fs::symlink("/proc/self", dir.join("sub/proc")).expect("link");
    for args in [
        &["check", "evil.fz", "good.fz"][..],
        &["check", "--format", "json", "evil.fz"][..],
        &["check", "sub/proc/environ"][..],
    ] {
        let out = run(FUZZLINT, &dir, args);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {all}");
        assert!(
            !all.contains("hunter2"),
            "{args:?} printed the secret: {all}"
        );
        assert!(
            all.contains("a symbolic link leads out of the working directory"),
            "{args:?}: {all}"
        );
    }
    // A directory walk skips the link and checks the rest.
    let out = run(FUZZLINT, &dir, &["check", "."]);
    let all = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(!all.contains("hunter2"), "{all}");
    // A link that stays inside the working directory is read as usual.
    std::os::unix::fs::symlink("good.fz", dir.join("alias.fz")).expect("link");
    let out = run(FUZZLINT, &dir, &["check", "alias.fz"]);
    assert_eq!(out.status.code(), Some(0));
}
