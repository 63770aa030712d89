//! Differential test of the shell evaluator (`fuzzfile_shell::eval::evaluate`) against real bash.
//!
//! Each case under `tests/bash_cases/*.cases` is a small shell script. The test runs it with
//! `bash --noprofile --norc` in an empty temporary working directory, with an environment made
//! of `PATH` and the variables the case declares only (as `env -i` would), where a stub
//! directory first in `PATH` holds programs (`torchrun`, `mpirun`, `python`, ...) that append
//! their name and argv, NUL-separated, to a log. The evaluator reads the same script, with the
//! same environment as known values and unset names expanding to nothing. For every stub call
//! that bash made, the evaluator's command of the same program (in order) must agree wherever it
//! claims to know an argument, and on the shell that expanded its words (`Site::EachNode` under
//! a shell that `exec_all`, which here runs its command once, or the SSH wrapper started); a
//! command the evaluator says always runs must have run; every span it gives points into its
//! source.
//!
//! Case file format (one or more cases per file):
//!
//! ```text
//! === case-name
//! # what the case shows (comment lines)
//! -- env                    NAME=value lines: the starting environment (known to both)
//! -- runtime                NAME=value lines: set for bash, Initial::Runtime for the evaluator
//! -- file PATH              a shipped file: relative to the working directory, or under /opt/
//! -- script                 the script
//! -- expect                 one line per stub call bash makes: program and arguments
//! -- require known|none     (default known) every word of `expect` must be known to the evaluator
//! -- stubs NAME...          more programs to replace by the recording stub
//! -- crlf                   the script's lines end with CR LF
//! -- watch NAME...          variables each stub call records from its environment: wherever
//!                           the evaluator claims a command's environment (prefix assignments,
//!                           exported variables), bash must agree
//! -- expected_mismatch WHY  a known disagreement of the evaluator: printed, not failed
//! ```
//!
//! Absolute paths under `/opt/` are mapped to a directory of the temporary tree, in the script
//! and in the shipped files alike, so both sides read the same text. `expect` lines are words
//! separated by blanks; `'...'` and `"..."` (with `\n`, `\r`, `\t`, `\\`, `\"`) quote; a word written
//! `~word` is what bash passes there but what the evaluator must not claim to know (`$(...)`, a
//! run-time variable); `?word` is one the evaluator may know or not (after an expansion of
//! unknown word count); `@CWD` stands for the working directory.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::fs;
use std::ops::Range;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use fuzzfile_shell::eval::{
    evaluate, Arg, Certainty, Evaluation, Exec, Field, Initial, Options, Piece, Site, SourceId,
    Sources, Span, UnsetNames, Value, Variable,
};

/// Programs replaced by a stub that records its argv.
const STUBS: &[&str] = &[
    "torchrun",
    "mpirun",
    "python",
    "python3",
    "deepspeed",
    "accelerate",
    "srun",
    "tune",
    "launcher",
];

/// Programs replaced by a stub that records its argv and then runs its arguments as a command
/// (one node's share of what `exec_all` does).
const RUNNERS: &[&str] = &["exec_all"];

/// Programs that stand for a remote wrapper (`$MULTINODE_SSH_WRAPPER [OPTIONS] HOST CMD...`): not
/// recorded; as ssh does, they join `CMD...` with blanks into a command line for a shell (here,
/// on this machine). A case sets the variable (as `-- runtime`) to the program's name.
const WRAPPERS: &[(&str, &str)] = &[("ssh_wrapper", "MULTINODE_SSH_WRAPPER")];

/// How long one case's bash may run.
const BASH_TIMEOUT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// Case files

#[derive(Clone, Debug, PartialEq, Eq)]
enum Require {
    /// Every word of every call in `expect` (but `~` words) must be known to the evaluator.
    Known,
    /// Coverage is counted, no floor.
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    /// The evaluator must know the word (in a `-- require known` case).
    Known,
    /// `~word`: bash passes it, but the evaluator must not claim to know it (`$(...)`, a
    /// run-time value).
    Unknown,
    /// `?word`: either (a word after an expansion of unknown word count, a value that depends on
    /// a condition the evaluator need not decide).
    Either,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct ExpectWord {
    text: String,
    need: Need,
}

#[derive(Clone, Debug)]
struct Case {
    /// `file.cases:line`
    place: String,
    name: String,
    env: Vec<(String, String)>,
    runtime: Vec<(String, String)>,
    files: Vec<(String, String)>,
    script: String,
    expect: Vec<Vec<ExpectWord>>,
    require: Require,
    stubs: Vec<String>,
    expected_mismatch: Option<String>,
    /// The script's lines end with CR LF (a file saved on Windows).
    crlf: bool,
    /// Environment variables whose value each stub call records, compared with the evaluator's
    /// environment of the command (its prefix assignments, then its exported variables).
    watch: Vec<String>,
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bash_cases")
}

fn load_cases() -> Vec<Case> {
    let mut paths: Vec<PathBuf> = fs::read_dir(cases_dir())
        .expect("tests/bash_cases is readable")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cases"))
        .collect();
    paths.sort();
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    for path in &paths {
        let text = fs::read_to_string(path).expect("case file is UTF-8 text");
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match parse_cases(&file, &text) {
            Ok(mut c) => cases.append(&mut c),
            Err(e) => errors.push(e),
        }
    }
    let mut seen = HashSet::new();
    for c in &cases {
        if !seen.insert(c.name.clone()) {
            errors.push(format!("{}: case name `{}` is used twice", c.place, c.name));
        }
    }
    assert!(errors.is_empty(), "bad case files:\n{}", errors.join("\n"));
    assert!(!cases.is_empty(), "no case under {}", cases_dir().display());
    cases
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Header,
    Env,
    Runtime,
    File,
    Script,
    Expect,
    NoBody,
}

fn parse_cases(file: &str, text: &str) -> Result<Vec<Case>, String> {
    let mut cases: Vec<Case> = Vec::new();
    let mut section = Section::Header;
    let mut body: Vec<&str> = Vec::new();
    let mut file_path = String::new();
    let mut body_line = 0;

    fn finish(
        case: Option<&mut Case>,
        section: Section,
        body: &mut Vec<&str>,
        file_path: &str,
        place: &str,
    ) -> Result<(), String> {
        let lines = std::mem::take(body);
        let Some(case) = case else {
            return match lines
                .iter()
                .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
            {
                Some(l) => Err(format!("{place}: text before the first `=== name`: {l:?}")),
                None => Ok(()),
            };
        };
        let significant = || {
            lines
                .iter()
                .map(|l| l.trim())
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
        };
        match section {
            Section::Header => {
                if let Some(l) = significant().next() {
                    return Err(format!(
                        "{place}: expected `# comment` or `-- section`: {l:?}"
                    ));
                }
            }
            Section::NoBody => {
                if let Some(l) = significant().next() {
                    return Err(format!("{place}: this section takes no body: {l:?}"));
                }
            }
            Section::Env | Section::Runtime => {
                for l in significant() {
                    let Some((name, value)) = l.split_once('=') else {
                        return Err(format!("{place}: expected NAME=value: {l:?}"));
                    };
                    let entry = (name.to_string(), value.to_string());
                    if section == Section::Env {
                        case.env.push(entry);
                    } else {
                        case.runtime.push(entry);
                    }
                }
            }
            Section::Expect => {
                for l in significant() {
                    case.expect
                        .push(parse_expect_line(l).map_err(|e| format!("{place}: {e}"))?);
                }
            }
            Section::File | Section::Script => {
                let mut end = lines.len();
                while end > 0 && lines[end - 1].trim().is_empty() {
                    end -= 1;
                }
                let mut content = lines[..end].join("\n");
                content.push('\n');
                if section == Section::Script {
                    if !case.script.is_empty() {
                        return Err(format!("{place}: a second `-- script`"));
                    }
                    case.script = content;
                } else {
                    case.files.push((file_path.to_string(), content));
                }
            }
        }
        Ok(())
    }

    for (i, line) in text.lines().enumerate() {
        let place = format!("{file}:{}", i + 1);
        if let Some(name) = line.strip_prefix("=== ") {
            finish(
                cases.last_mut(),
                section,
                &mut body,
                &file_path,
                &format!("{file}:{body_line}"),
            )?;
            let name = name.trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(format!("{place}: a case name is one word: {name:?}"));
            }
            cases.push(Case {
                place: place.clone(),
                name: name.to_string(),
                env: Vec::new(),
                runtime: Vec::new(),
                files: Vec::new(),
                script: String::new(),
                expect: Vec::new(),
                require: Require::Known,
                stubs: Vec::new(),
                expected_mismatch: None,
                crlf: false,
                watch: Vec::new(),
            });
            section = Section::Header;
            body_line = i + 2;
            continue;
        }
        if let Some(header) = line.strip_prefix("-- ") {
            finish(
                cases.last_mut(),
                section,
                &mut body,
                &file_path,
                &format!("{file}:{body_line}"),
            )?;
            body_line = i + 2;
            let Some(case) = cases.last_mut() else {
                return Err(format!("{place}: a section before the first `=== name`"));
            };
            let (keyword, rest) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
            let rest = rest.trim();
            section = match keyword {
                "env" => Section::Env,
                "runtime" => Section::Runtime,
                "script" => Section::Script,
                "expect" => Section::Expect,
                "file" => {
                    if rest.is_empty() || rest.contains(char::is_whitespace) {
                        return Err(format!("{place}: `-- file PATH` needs one path"));
                    }
                    if rest.starts_with('/') && !rest.starts_with("/opt/") {
                        return Err(format!(
                            "{place}: absolute shipped files must be under /opt/ (mapped into the \
                             temporary tree): {rest}"
                        ));
                    }
                    file_path = rest.to_string();
                    Section::File
                }
                "require" => {
                    case.require = match rest {
                        "known" => Require::Known,
                        "none" => Require::None,
                        _ => {
                            return Err(format!("{place}: `-- require known` or `-- require none`"))
                        }
                    };
                    Section::NoBody
                }
                "stubs" => {
                    if let Some(bad) = rest.split_whitespace().find(|n| {
                        !n.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
                    }) {
                        return Err(format!(
                            "{place}: a stub name is a plain file name: {bad:?}"
                        ));
                    }
                    case.stubs
                        .extend(rest.split_whitespace().map(str::to_string));
                    Section::NoBody
                }
                "crlf" => {
                    case.crlf = true;
                    Section::NoBody
                }
                "watch" => {
                    for name in rest.split_whitespace() {
                        let ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                        if !ok {
                            return Err(format!("{place}: not a variable name: {name:?}"));
                        }
                        case.watch.push(name.to_string());
                    }
                    Section::NoBody
                }
                "expected_mismatch" => {
                    if rest.is_empty() {
                        return Err(format!("{place}: `-- expected_mismatch` needs a reason"));
                    }
                    case.expected_mismatch = Some(rest.to_string());
                    Section::NoBody
                }
                other => return Err(format!("{place}: unknown section `-- {other}`")),
            };
            continue;
        }
        body.push(line);
    }
    finish(
        cases.last_mut(),
        section,
        &mut body,
        &file_path,
        &format!("{file}:{body_line}"),
    )?;
    for c in &cases {
        if c.script.is_empty() {
            return Err(format!("{}: case `{}` has no `-- script`", c.place, c.name));
        }
    }
    Ok(cases)
}

/// Words of an `expect` line: blanks separate, `'...'` and `"..."` quote, `~` before an unquoted
/// word marks it as one the evaluator must not know.
fn parse_expect_line(line: &str) -> Result<Vec<ExpectWord>, String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else { break };
        let need = match first {
            '~' => Need::Unknown,
            '?' => Need::Either,
            _ => Need::Known,
        };
        if need != Need::Known {
            chars.next();
        }
        let mut text = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            match c {
                '\'' => loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => text.push(c),
                        None => return Err(format!("unterminated ' in {line:?}")),
                    }
                },
                '"' => loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('n') => text.push('\n'),
                            Some('t') => text.push('\t'),
                            Some('r') => text.push('\r'),
                            Some(c @ ('\\' | '"')) => text.push(c),
                            other => return Err(format!("bad escape \\{other:?} in {line:?}")),
                        },
                        Some(c) => text.push(c),
                        None => return Err(format!("unterminated \" in {line:?}")),
                    }
                },
                c => text.push(c),
            }
        }
        words.push(ExpectWord { text, need });
    }
    Ok(words)
}

// ---------------------------------------------------------------------------------------------
// The bash side

/// One call of a stub: its program name and its arguments (argv without argv[0]).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Call {
    program: String,
    args: Vec<String>,
    /// Run directly by a runner (`exec_all torchrun ...`): the runner's record has these words.
    direct_under_runner: bool,
    /// Started under a runner or wrapper: a shell on "each node" expanded the words (when not
    /// `direct_under_runner`).
    on_node: bool,
    /// The case's watched variables in the program's environment (`None`: not set).
    env: Vec<Option<String>>,
}

impl Call {
    /// argv, the program's name first.
    fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }
}

/// A case as run: the texts both sides read and what bash did.
struct CaseRun {
    case: Case,
    /// The temporary tree's root (removed after bash ran; paths under it stay in the texts).
    root: String,
    cwd: String,
    script: String,
    /// Absolute path → content, as written for bash.
    files: Vec<(String, String)>,
    env: Vec<(String, String)>,
    calls: Vec<Call>,
    stubs: Vec<String>,
}

impl CaseRun {
    /// A value as bash produced it, with the temporary tree written the way `expect` writes it.
    fn normalize(&self, text: &str) -> String {
        text.replace(&format!("{}/fs/", self.root), "/")
            .replace(&self.cwd, "@CWD")
    }
}

struct TempTree(PathBuf);

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn bash_path() -> &'static str {
    ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .expect("bash is installed (/bin/bash or /usr/bin/bash)")
}

fn write_executable(path: &Path, text: &str) {
    fs::write(path, text).expect("write stub");
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod stub");
}

fn run_case(case: &Case) -> Result<CaseRun, String> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let root = std::env::temp_dir().join(format!(
        "fuzzfile-bash-differential-{}-{n}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&root);
    let tree = TempTree(root.clone());
    let root_text = root
        .to_str()
        .ok_or("temporary directory is not UTF-8")?
        .to_string();
    if root_text.contains(['\'', ' ', '\n']) {
        return Err(format!("temporary directory {root_text:?} needs quoting"));
    }
    let stub_dir = root.join("stubs");
    let work = root.join("work");
    let log = root.join("calls.log");
    fs::create_dir_all(&stub_dir).map_err(|e| e.to_string())?;
    fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let log_text = log.to_str().ok_or("log path")?;

    let mut stubs: Vec<String> = STUBS.iter().map(|s| s.to_string()).collect();
    stubs.extend(case.stubs.iter().cloned());
    let bash = bash_path();
    // The stubs are POSIX sh (it starts faster than bash; they are most of the processes).
    let sh = if Path::new("/bin/sh").is_file() {
        "/bin/sh"
    } else {
        bash
    };
    // A record: `@@CALL FLAGS NAME ARGC ARG...`, each item NUL-terminated. FLAGS has `N` when a
    // runner or wrapper started the call (directly or through a shell it started: the words are
    // expanded on "each node"), and `D` when a runner ran the stub directly (`exec_all torchrun
    // ...`: its words are the runner's arguments, already recorded).
    let watched: String = case
        .watch
        .iter()
        .map(|n| format!(" \"${{{n}+1}}\" \"${{{n}-}}\""))
        .collect();
    let record = format!(
        "printf '%s\\0' @@CALL \"${{FUZZ_STUB_DIRECT:+D}}${{FUZZ_STUB_NODE:+N}}\" \"$0\" \"$#\" \
         \"$@\" {}{watched} >> '{log_text}'",
        case.watch.len()
    );
    for name in &stubs {
        let text = format!("#!{sh}\n{record}\n");
        write_executable(&stub_dir.join(name), &text);
    }
    let recorded = stubs.join("|");
    for name in RUNNERS {
        let text = format!(
            "#!{sh}\n{record}\nexport FUZZ_STUB_NODE=1\n\
             case \"$1\" in {recorded}) export FUZZ_STUB_DIRECT=1 ;; esac\nexec \"$@\"\n"
        );
        write_executable(&stub_dir.join(name), &text);
    }
    for (name, _) in WRAPPERS {
        write_executable(
            &stub_dir.join(name),
            &format!(
                "#!{sh}\nexport FUZZ_STUB_NODE=1\n\
                 while [ \"${{1#-}}\" != \"$1\" ]; do shift; done\nshift\nexec {bash} -c \"$*\"\n"
            ),
        );
    }

    let opt_mapped = format!("{root_text}/fs/opt/");
    let map = |text: &str| text.replace("/opt/", &opt_mapped);
    let cwd = work.to_str().ok_or("work path")?.to_string();
    let mut files = Vec::new();
    for (path, content) in &case.files {
        let abs = if path.starts_with('/') {
            map(path)
        } else {
            format!("{cwd}/{path}")
        };
        let content = map(content);
        let p = Path::new(&abs);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        write_executable(p, &content);
        files.push((abs, content));
    }
    let mut script = map(&case.script);
    if case.crlf {
        script = script.replace('\n', "\r\n");
    }
    let script_path = root.join("script.sh");
    fs::write(&script_path, &script).map_err(|e| e.to_string())?;

    let mut env = vec![(
        "PATH".to_string(),
        format!("{}:/usr/local/bin:/usr/bin:/bin", stub_dir.display()),
    )];
    env.extend(case.env.iter().cloned());
    let stdout = fs::File::create(root.join("stdout")).map_err(|e| e.to_string())?;
    let stderr = fs::File::create(root.join("stderr")).map_err(|e| e.to_string())?;
    let mut child = Command::new(bash)
        .arg("--noprofile")
        .arg("--norc")
        .arg(&script_path)
        .env_clear()
        .envs(env.iter().cloned())
        .envs(case.runtime.iter().cloned())
        .current_dir(&work)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start {bash}: {e}"))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > BASH_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("bash ran past {BASH_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let err_text = fs::read_to_string(root.join("stderr")).unwrap_or_default();
    if !status.success() {
        return Err(format!("bash exited with {status}; stderr:\n{err_text}"));
    }
    let raw = match fs::read(&log) {
        Ok(raw) => raw,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e.to_string()),
    };
    let calls = parse_log(&raw)?;
    drop(tree);
    Ok(CaseRun {
        case: case.clone(),
        root: root_text,
        cwd,
        script,
        files,
        env,
        calls,
        stubs: stubs
            .into_iter()
            .chain(RUNNERS.iter().map(|s| s.to_string()))
            .collect(),
    })
}

/// The records of the stubs' log: `@@CALL FLAGS PATH ARGC ARG...`, each item NUL-terminated.
fn parse_log(raw: &[u8]) -> Result<Vec<Call>, String> {
    let mut items: Vec<String> = raw
        .split(|b| *b == 0)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    // Every item ends with NUL: the last split is the empty rest.
    if items.pop().is_some_and(|rest| !rest.is_empty()) {
        return Err("stub log does not end with NUL".into());
    }
    let mut calls = Vec::new();
    let mut it = items.into_iter();
    while let Some(marker) = it.next() {
        if marker != "@@CALL" {
            return Err(format!("stub log: expected @@CALL, found {marker:?}"));
        }
        let flags = it.next().ok_or("stub log: no flags")?;
        let path = it.next().ok_or("stub log: no program")?;
        let argc: usize = it
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or("stub log: no argument count")?;
        let args: Vec<String> = it.by_ref().take(argc).collect();
        if args.len() != argc {
            return Err("stub log: record cut short".into());
        }
        let watched: usize = it
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or("stub log: no count of watched variables")?;
        let mut env = Vec::new();
        for _ in 0..watched {
            let (Some(set), Some(value)) = (it.next(), it.next()) else {
                return Err("stub log: record cut short".into());
            };
            env.push((set == "1").then_some(value));
        }
        calls.push(Call {
            program: basename(&path).to_string(),
            args,
            direct_under_runner: flags.contains('D'),
            on_node: flags.contains('N'),
            env,
        });
    }
    Ok(calls)
}

/// Every case run once by bash (shared by the tests of this file), a few at a time; an error
/// names its case.
fn all_runs() -> &'static [Result<CaseRun, String>] {
    static RUNS: OnceLock<Vec<Result<CaseRun, String>>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let cases = load_cases();
        let next = AtomicUsize::new(0);
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
        let mut results: Vec<(usize, Result<CaseRun, String>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(c) = cases.get(i) else { break };
                            let r =
                                run_case(c).map_err(|e| format!("{} ({}): {e}", c.name, c.place));
                            done.push((i, r));
                        }
                        done
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a case runner thread panicked"))
                .collect()
        });
        results.sort_by_key(|(i, _)| *i);
        results.into_iter().map(|(_, r)| r).collect()
    })
}

fn runs() -> Vec<&'static CaseRun> {
    let mut ok = Vec::new();
    let mut errors = String::new();
    for r in all_runs() {
        match r {
            Ok(run) => ok.push(run),
            Err(e) => {
                let _ = writeln!(errors, "{e}");
            }
        }
    }
    assert!(
        errors.is_empty(),
        "bash could not run some cases:\n{errors}"
    );
    ok
}

// ---------------------------------------------------------------------------------------------
// The evaluator side

fn run_evaluator(run: &CaseRun) -> Result<Evaluation, String> {
    let mut sources = Sources {
        texts: vec![run.script.as_str()],
        files: HashMap::new(),
    };
    for (path, content) in &run.files {
        let id = SourceId(u32::try_from(sources.texts.len()).map_err(|e| e.to_string())?);
        sources.texts.push(content.as_str());
        sources.files.insert(path.clone(), id);
    }
    let mut env: Vec<(String, Initial)> = run
        .env
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                Initial::Known {
                    text: v.clone(),
                    origin: None,
                },
            )
        })
        .collect();
    env.extend(
        run.case
            .runtime
            .iter()
            .map(|(k, _)| (k.clone(), Initial::Runtime)),
    );
    // `..Options::default()`: options added later keep their defaults here.
    #[allow(clippy::needless_update)]
    let options = Options {
        env,
        unset_names: UnsetNames::Empty,
        cwd: Some(run.cwd.clone()),
        remote_runners: RUNNERS.iter().map(|s| s.to_string()).collect(),
        remote_wrappers: WRAPPERS.iter().map(|(_, v)| v.to_string()).collect(),
        ..Options::default()
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        evaluate(SourceId(0), &sources, &options)
    }))
    .map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("evaluate panicked: {msg}")
    })
}

// ---------------------------------------------------------------------------------------------
// Comparison

/// What the evaluator says about one argv position.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Claim {
    /// One known value.
    Known(String),
    /// One of a few known values.
    OneOf(Vec<String>),
    /// Not claimed (unknown or runtime pieces, or after an argument of unknown word count).
    Unclaimed,
}

/// The claims of a command's argv from position `from` (the stub program's word), position by
/// position, and whether its length is claimed (no `Arg::Unknown` in it).
fn claims(exec: &Exec, from: usize) -> (Vec<Claim>, bool) {
    let mut out = Vec::new();
    for arg in exec.argv.iter().skip(from) {
        match arg {
            Arg::Unknown(_) => return (out, false),
            Arg::Field(f) => out.push(claim(f)),
        }
    }
    (out, true)
}

/// What the evaluator says about a variable in a command's environment.
#[derive(Clone, Debug, PartialEq, Eq)]
enum EnvClaim {
    Unclaimed,
    /// Not in the environment: not set, or not exported.
    Unset,
    Value(Claim),
}

/// The command's prefix assignment of `name`, else the exported variable.
fn env_claim(exec: &Exec, name: &str) -> EnvClaim {
    if let Some((_, f)) = exec.prefix.iter().rev().find(|(n, _)| n == name) {
        return EnvClaim::Value(claim(f));
    }
    match exec.variables.get(name) {
        None => EnvClaim::Unset,
        Some(v) if !v.exported => EnvClaim::Unset,
        Some(v) => match &v.value {
            Value::Scalar(f) => EnvClaim::Value(claim(f)),
            Value::Array(_) | Value::Unknown => EnvClaim::Unclaimed,
        },
    }
}

fn claim(f: &Field) -> Claim {
    if let Some(k) = f.known() {
        return Claim::Known(k);
    }
    match f.known_choices() {
        Some(choices) if choices.len() > 1 => Claim::OneOf(choices),
        _ => Claim::Unclaimed,
    }
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// The stub program an exec runs, when the evaluator knows it, and the position of its word:
/// 0, or past the words of a command that runs the rest of its arguments as a command (`exec`,
/// `command`, `nohup`, `env NAME=V`, `timeout 60`, `nice -n 5`, ...), as bash's stub sees it.
fn exec_program(exec: &Exec, stubs: &[String]) -> Option<(String, usize)> {
    let word = |i: usize| match exec.argv.get(i) {
        Some(Arg::Field(f)) => f.known(),
        _ => None,
    };
    let mut i = 0;
    loop {
        let w = word(i)?;
        let base = basename(&w).to_string();
        if stubs.contains(&base) {
            return Some((base, i));
        }
        // Options that take the next word as their value.
        let with_value: &[&str] = match base.as_str() {
            "exec" => &["-a"],
            "command" | "nohup" | "time" | "setsid" => &[],
            "env" => &["-u", "-C", "-S"],
            "timeout" => &["-s", "-k"],
            "nice" => &["-n"],
            "stdbuf" => &["-i", "-o", "-e"],
            _ => return None,
        };
        i += 1;
        loop {
            let w = word(i)?;
            if w == "--" {
                i += 1;
                break;
            }
            if base == "command" && (w.starts_with("-v") || w.starts_with("-V")) {
                return None; // `command -v NAME` looks the name up, runs nothing
            }
            if w.starts_with('-') && w.len() > 1 {
                i += if with_value.contains(&w.as_str()) {
                    2
                } else {
                    1
                };
            } else if base == "env" && w.contains('=') {
                i += 1;
            } else {
                break;
            }
        }
        if base == "timeout" {
            i += 1; // the duration
        }
    }
}

/// The disagreements between a bash call's argv and an exec's claims (empty: compatible).
fn disagreements(argv: &[String], exec: &Exec, from: usize) -> Vec<String> {
    let (claims, length_claimed) = claims(exec, from);
    let mut out = Vec::new();
    for (i, c) in claims.iter().enumerate() {
        let actual = argv.get(i);
        match (c, actual) {
            (Claim::Unclaimed, _) => {}
            (Claim::Known(k), Some(a)) if k == a => {}
            (Claim::OneOf(ks), Some(a)) if ks.contains(a) => {}
            (Claim::Known(k), a) => out.push(format!(
                "argv[{i}]: evaluator {}, bash {}",
                quote(k),
                a.map_or("(no argument)".into(), |a| quote(a))
            )),
            (Claim::OneOf(ks), a) => out.push(format!(
                "argv[{i}]: evaluator one of {}, bash {}",
                ks.iter().map(|k| quote(k)).collect::<Vec<_>>().join(" | "),
                a.map_or("(no argument)".into(), |a| quote(a))
            )),
        }
    }
    if length_claimed && claims.len() != argv.len() {
        out.push(format!(
            "argc: evaluator {}, bash {}",
            claims.len(),
            argv.len()
        ));
    }
    out
}

/// A word as a shell would read it back: bare, '...', or $'...' when it has control characters.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=./:,@%+".contains(c))
    {
        s.to_string()
    } else if s.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in s.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\'' | '\\' => {
                    out.push('\\');
                    out.push(c);
                }
                c if c.is_control() => {
                    let _ = write!(out, "\\x{:02x}", u32::from(c));
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn show_argv(argv: &[String]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

fn show_exec(exec: &Exec) -> String {
    let mut out = Vec::new();
    for arg in &exec.argv {
        match arg {
            Arg::Unknown(_) => out.push("<unknown words>".to_string()),
            Arg::Field(f) => {
                let choices: Vec<String> = f.choices.iter().map(|c| show_pieces(c)).collect();
                if choices.len() == 1 {
                    out.push(choices.into_iter().next().unwrap_or_default());
                } else {
                    out.push(format!("{{{}}}", choices.join("|")));
                }
            }
        }
    }
    let certainty = match exec.certainty {
        Certainty::Always => "",
        Certainty::Maybe => " (maybe)",
    };
    let site = match exec.site {
        Site::Head => "",
        Site::EachNode => " (each node)",
    };
    format!("{}{certainty}{site}", out.join(" "))
}

fn show_pieces(pieces: &[Piece]) -> String {
    let mut text = String::new();
    let mut all_text = true;
    for p in pieces {
        match p {
            Piece::Text { text: t, .. } => text.push_str(t),
            Piece::Runtime { name, .. } => {
                all_text = false;
                let _ = write!(text, "<${name}>");
            }
            Piece::Unknown { .. } => {
                all_text = false;
                text.push_str("<?>");
            }
        }
    }
    if all_text {
        quote(&text)
    } else {
        text
    }
}

/// The outcome of one case.
#[derive(Default, Debug)]
struct Outcome {
    /// The evaluator claims something bash contradicts.
    mismatches: Vec<String>,
    /// A word the case requires the evaluator to know, not known (or a `~` word it claims).
    unmet: Vec<String>,
    /// argv positions bash produced for the stub calls.
    words: usize,
    /// Of those, known to the evaluator as one value.
    known: usize,
    /// Of those, known as one of several values (which include bash's).
    one_of: usize,
    /// Words the case requires the evaluator to know (or not to know, for `~` words).
    required: usize,
    /// Of those, as required.
    required_met: usize,
    /// Spans that do not point at what the evaluator says is there.
    bad_spans: Vec<String>,
}

/// Pair bash's stub calls with the evaluator's commands of the same program, in order, and
/// compare. `expect` says which words the case requires: its k-th line of a program is for
/// bash's k-th call of that program (programs in a pipeline run in any order).
fn compare(
    calls: &[Call],
    expect: Option<&[Vec<ExpectWord>]>,
    evaluation: &Evaluation,
    stubs: &[String],
    watch: &[String],
) -> Outcome {
    let mut out = Outcome::default();
    let mut by_program: BTreeMap<String, Vec<(&Exec, usize)>> = BTreeMap::new();
    for exec in &evaluation.execs {
        if let Some((p, from)) = exec_program(exec, stubs) {
            by_program.entry(p).or_default().push((exec, from));
        }
    }
    let mut next: HashMap<String, usize> = HashMap::new();
    let mut expect_lines: HashMap<&str, std::collections::VecDeque<&Vec<ExpectWord>>> =
        HashMap::new();
    for line in expect.unwrap_or(&[]) {
        if let Some(program) = line.first() {
            expect_lines
                .entry(program.text.as_str())
                .or_default()
                .push_back(line);
        }
    }
    for call in calls {
        let argv = call.argv();
        let expect_line = expect_lines
            .get_mut(call.program.as_str())
            .and_then(|q| q.pop_front());
        let candidates = by_program
            .get(&call.program)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let start = *next.get(&call.program).unwrap_or(&0);
        let compatible = (start..candidates.len()).find(|&i| {
            let (exec, from) = candidates[i];
            disagreements(&argv, exec, from).is_empty()
        });
        if call.direct_under_runner && compatible.is_none() {
            // `exec_all torchrun ...`: the words are compared as the runner's arguments; the
            // evaluator need not list the command a second time.
            continue;
        }
        out.words += argv.len();
        let chosen = compatible.or((start < candidates.len()).then_some(start));
        // A command a runner ran directly runs its words without a shell here, as the evaluator's
        // contract has it; what a real runner does to them (ssh joins them for a remote shell)
        // is not this test's to require.
        let expect_words = expect_line.filter(|_| !call.direct_under_runner);
        let needs = |need: Need| {
            expect_words.map_or(0, |w| {
                w.iter().take(argv.len()).filter(|w| w.need == need).count()
            })
        };
        out.required += needs(Need::Known) + needs(Need::Unknown);
        let Some(i) = chosen else {
            out.required_met += needs(Need::Unknown);
            if needs(Need::Known) > 0 {
                out.unmet.push(format!(
                    "bash ran `{}`; the evaluator has no command of `{}` for it",
                    show_argv(&argv),
                    call.program
                ));
            }
            continue;
        };
        for (skipped, _) in &candidates[start..i] {
            if skipped.certainty == Certainty::Always {
                out.mismatches.push(format!(
                    "the evaluator says `{}` always runs; bash never ran it (bash ran `{}` next)",
                    show_exec(skipped),
                    show_argv(&argv)
                ));
            }
        }
        let (exec, from) = candidates[i];
        next.insert(call.program.clone(), i + 1);
        let mut diff = disagreements(&argv, exec, from);
        if !call.direct_under_runner {
            let (site, where_) = if call.on_node {
                (Site::EachNode, "by a shell a runner started (each node)")
            } else {
                (Site::Head, "by the job's shell (head)")
            };
            if exec.site != site {
                diff.push(format!(
                    "site: evaluator {:?}, bash expanded the words {where_}",
                    exec.site
                ));
            }
        }
        // The environment, where the command is the exec's own (not behind `env` and the like,
        // not on a node, whose environment the platform makes).
        if from == 0 && !call.on_node && !call.direct_under_runner {
            for (name, actual) in watch.iter().zip(&call.env) {
                let c = env_claim(exec, name);
                let agrees = match (&c, actual) {
                    (EnvClaim::Unclaimed, _) => None,
                    (EnvClaim::Unset, None) => Some(true),
                    (EnvClaim::Value(Claim::Known(k)), Some(a)) => Some(k == a),
                    (EnvClaim::Value(Claim::OneOf(ks)), Some(a)) => Some(ks.contains(a)),
                    (EnvClaim::Value(Claim::Unclaimed), _) => None,
                    (_, _) => Some(false),
                };
                let shown = actual.as_deref().map_or("(not set)".to_string(), quote);
                if agrees == Some(false) {
                    let said = match &c {
                        EnvClaim::Unset => "(not set)".to_string(),
                        EnvClaim::Value(Claim::Known(k)) => quote(k),
                        EnvClaim::Value(Claim::OneOf(ks)) => format!(
                            "one of {}",
                            ks.iter().map(|k| quote(k)).collect::<Vec<_>>().join(" | ")
                        ),
                        other => format!("{other:?}"),
                    };
                    diff.push(format!(
                        "environment {name}: evaluator {said}, bash {shown}"
                    ));
                }
                if expect.is_some() {
                    out.required += 1;
                    if agrees == Some(true) {
                        out.required_met += 1;
                    } else if agrees.is_none() {
                        out.unmet.push(format!(
                            "`{}`: the evaluator ({}) does not know its environment {name} = {shown}",
                            show_argv(&argv),
                            show_exec(exec)
                        ));
                    }
                }
            }
        }
        if !diff.is_empty() {
            out.mismatches.push(format!(
                "bash:      {}\n      evaluator: {}\n      {}",
                show_argv(&argv),
                show_exec(exec),
                diff.join("\n      ")
            ));
        }
        let (cl, _) = claims(exec, from);
        let mut not_known = Vec::new();
        let mut claimed = Vec::new();
        for (pos, actual) in argv.iter().enumerate() {
            let c = cl.get(pos).unwrap_or(&Claim::Unclaimed);
            let agrees = match c {
                Claim::Known(k) if k == actual => {
                    out.known += 1;
                    true
                }
                Claim::OneOf(ks) if ks.contains(actual) => {
                    out.one_of += 1;
                    true
                }
                _ => false,
            };
            let Some(w) = expect_words.and_then(|w| w.get(pos)) else {
                continue;
            };
            if w.need == Need::Either {
                continue;
            }
            if w.need == Need::Unknown && c != &Claim::Unclaimed {
                claimed.push(format!("argv[{pos}] = {} ({c:?})", quote(actual)));
            } else if w.need == Need::Known && !agrees {
                not_known.push(format!("argv[{pos}] = {}", quote(actual)));
            } else {
                out.required_met += 1;
            }
        }
        if !not_known.is_empty() {
            out.unmet.push(format!(
                "`{}`: the evaluator ({}) does not know {}",
                show_argv(&argv),
                show_exec(exec),
                not_known.join(", ")
            ));
        }
        if !claimed.is_empty() {
            out.unmet.push(format!(
                "`{}`: the evaluator ({}) claims what it cannot know: {}",
                show_argv(&argv),
                show_exec(exec),
                claimed.join(", ")
            ));
        }
    }
    for (program, execs) in &by_program {
        let start = *next.get(program).unwrap_or(&0);
        for (exec, _) in &execs[start..] {
            if exec.certainty == Certainty::Always {
                out.mismatches.push(format!(
                    "the evaluator says `{}` always runs; bash never ran it",
                    show_exec(exec)
                ));
            }
        }
    }
    out
}

/// Every span of the evaluation is a range of one of the sources, and a text piece's origin is
/// where exactly its bytes stand (the contract of `Piece::Text`); a run-time piece's origin holds
/// its name (its expansion `$NAME`, or the word of a text the evaluator read again, such as
/// `"bash -c '... \$RANK'"`).
fn check_spans(run: &CaseRun, ev: &Evaluation) -> Vec<String> {
    let texts: Vec<&str> = std::iter::once(run.script.as_str())
        .chain(run.files.iter().map(|(_, c)| c.as_str()))
        .collect();
    let at = |span: &Span| -> Option<&str> {
        texts
            .get(usize::try_from(span.source.0).ok()?)?
            .get(span.range.clone())
    };
    let mut out = Vec::new();
    let mut check = |span: &Span, what: &str, out: &mut Vec<String>| {
        if at(span).is_none() {
            out.push(format!("{what}: {span:?} is not a range of its source"));
        }
    };
    let field =
        |f: &Field, out: &mut Vec<String>, check: &mut dyn FnMut(&Span, &str, &mut Vec<String>)| {
            check(&f.word, "a field's word", out);
            for piece in f.choices.iter().flatten() {
                match piece {
                    Piece::Text {
                        text,
                        origin: Some(o),
                    } => match at(o) {
                        Some(src) if src == text => {}
                        src => out.push(format!(
                            "the text piece {} has the origin {o:?}, where the source has {}",
                            quote(text),
                            src.map_or("nothing".to_string(), quote)
                        )),
                    },
                    Piece::Text { origin: None, .. } => {}
                    Piece::Runtime { name, origin, .. } => match at(origin) {
                        Some(src) if src.contains(name.as_str()) => {}
                        src => out.push(format!(
                        "the run-time piece ${name} has the origin {origin:?}, where the source \
                         has {}",
                        src.map_or("nothing".to_string(), quote)
                    )),
                    },
                    Piece::Unknown { origin } => check(origin, "an unknown piece", out),
                }
            }
        };
    for exec in &ev.execs {
        check(&exec.span, "a command", &mut out);
        for arg in &exec.argv {
            match arg {
                Arg::Field(f) => field(f, &mut out, &mut check),
                Arg::Unknown(span) => check(span, "an argument of unknown word count", &mut out),
            }
        }
        for (_, f) in &exec.prefix {
            field(f, &mut out, &mut check);
        }
    }
    let mut seen = HashSet::new();
    out.retain(|m| seen.insert(m.clone()));
    out
}

/// One case's outcome, with what a reader needs to see when it is wrong.
struct CaseOutcome {
    run: &'static CaseRun,
    outcome: Outcome,
    /// The evaluator's commands of stub programs, one per line.
    evaluator: String,
}

impl CaseOutcome {
    fn show(&self, problems: &[String], label: &str) -> String {
        let run = self.run;
        let mut s = format!("case `{}` ({})\n  script:\n", run.case.name, run.case.place);
        for l in run.case.script.lines() {
            let _ = writeln!(s, "    | {l}");
        }
        s.push_str("  bash ran:\n");
        for c in &run.calls {
            let _ = writeln!(s, "    {}", run.normalize(&show_argv(&c.argv())));
        }
        s.push_str("  the evaluator's commands of those programs:\n");
        if self.evaluator.is_empty() {
            s.push_str("    (none)\n");
        }
        s.push_str(&self.evaluator);
        for p in problems {
            let _ = writeln!(s, "  {label} {}", run.normalize(p));
        }
        s
    }
}

fn evaluate_all() -> Vec<CaseOutcome> {
    let mut all = Vec::new();
    for run in runs() {
        let required = run.case.require == Require::Known;
        let (outcome, evaluator) = match run_evaluator(run) {
            Ok(ev) => {
                let expect = required.then_some(run.case.expect.as_slice());
                let mut outcome = compare(&run.calls, expect, &ev, &run.stubs, &run.case.watch);
                outcome.bad_spans = check_spans(run, &ev);
                let text: String = ev
                    .execs
                    .iter()
                    .filter(|e| exec_program(e, &run.stubs).is_some())
                    .map(|e| format!("    {}\n", run.normalize(&show_exec(e))))
                    .collect();
                (outcome, text)
            }
            Err(e) => {
                let words = run.calls.iter().map(|c| c.args.len() + 1).sum();
                (
                    Outcome {
                        mismatches: vec![e],
                        words,
                        ..Outcome::default()
                    },
                    String::new(),
                )
            }
        };
        all.push(CaseOutcome {
            run,
            outcome,
            evaluator,
        });
    }
    all
}

/// Fails listing every case with problems, but those marked `expected_mismatch` (printed).
fn assert_no_problems(what: &str, label: &str, problems: impl Fn(&Outcome) -> &Vec<String>) {
    let mut failures = Vec::new();
    for c in evaluate_all() {
        let p = problems(&c.outcome);
        match (&c.run.case.expected_mismatch, p.is_empty()) {
            (_, true) => {}
            (Some(why), false) => println!("expected_mismatch ({why}):\n{}", c.show(p, label)),
            (None, false) => failures.push(c.show(p, label)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) where {what}:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Tests

/// The harness records what bash runs: every case's stub calls are the ones its `expect` lists
/// (per program, in order; programs in a pipeline run concurrently).
#[test]
fn bash_runs_what_each_case_expects() {
    let mut errors = String::new();
    for run in runs() {
        let mut actual: BTreeMap<&str, Vec<Vec<String>>> = BTreeMap::new();
        for c in &run.calls {
            actual
                .entry(c.program.as_str())
                .or_default()
                .push(c.argv().iter().map(|a| run.normalize(a)).collect());
        }
        let mut expected: BTreeMap<&str, Vec<Vec<String>>> = BTreeMap::new();
        for line in &run.case.expect {
            let Some(program) = line.first() else {
                continue;
            };
            expected
                .entry(program.text.as_str())
                .or_default()
                .push(line.iter().map(|w| w.text.clone()).collect());
        }
        if actual != expected {
            let show = |m: &BTreeMap<&str, Vec<Vec<String>>>| {
                m.values()
                    .flatten()
                    .map(|a| format!("    {}\n", show_argv(a)))
                    .collect::<String>()
            };
            let _ = write!(
                errors,
                "case `{}` ({}):\n  expect:\n{}  bash ran:\n{}",
                run.case.name,
                run.case.place,
                show(&expected),
                show(&actual)
            );
        }
    }
    assert!(
        errors.is_empty(),
        "bash did not run what the cases expect:\n{errors}"
    );
}

/// The stub records argv byte for byte: blanks, newlines, quotes, glob characters, empty
/// arguments, no arguments at all.
#[test]
fn stub_records_argv_exactly() {
    let case = Case {
        place: "stub_records_argv_exactly".into(),
        name: "stub".into(),
        env: vec![("V".into(), "a  b".into())],
        runtime: Vec::new(),
        files: vec![("/opt/x.sh".into(), "torchrun \"$@\"\n".into())],
        script: "torchrun\ntorchrun '' \"$V\" 'x\ny' '*' \"'\" -- --k=v\n\
                 bash /opt/x.sh /opt/y\nexec_all python -c 'print(1)'\ncustom z\n\
                 exec_all bash -c 'python x'\nssh_wrapper host python w\n\
                 E= X=1 torchrun env\n"
            .into(),
        expect: Vec::new(),
        require: Require::None,
        stubs: vec!["custom".into()],
        expected_mismatch: None,
        crlf: false,
        watch: vec!["V".into(), "X".into(), "E".into()],
    };
    let run = run_case(&case).expect("bash runs");
    let argvs: Vec<Vec<String>> = run
        .calls
        .iter()
        .map(|c| c.argv().iter().map(|a| run.normalize(a)).collect())
        .collect();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    assert_eq!(
        argvs,
        vec![
            s(&["torchrun"]),
            s(&["torchrun", "", "a  b", "x\ny", "*", "'", "--", "--k=v"]),
            s(&["torchrun", "/opt/y"]),
            s(&["exec_all", "python", "-c", "print(1)"]),
            s(&["python", "-c", "print(1)"]),
            s(&["custom", "z"]),
            s(&["exec_all", "bash", "-c", "python x"]),
            s(&["python", "x"]),
            s(&["python", "w"]),
            s(&["torchrun", "env"]),
        ]
    );
    let some = |v: &str| Some(v.to_string());
    assert_eq!(run.calls[0].env, [some("a  b"), None, None]);
    assert_eq!(run.calls[9].env, [some("a  b"), some("1"), some("")]);
    let flags: Vec<(bool, bool)> = run
        .calls
        .iter()
        .map(|c| (c.direct_under_runner, c.on_node))
        .collect();
    let (f, t) = (false, true);
    assert_eq!(
        flags,
        [
            (f, f),
            (f, f),
            (f, f),
            (f, f),
            (t, t),
            (f, f),
            (f, f),
            (f, t),
            (f, t),
            (f, f)
        ]
    );
    assert!(run.stubs.contains(&"custom".to_string()));
    assert_eq!(
        show_argv(&s(&["a b", "it's", "x\ny\r", ""])),
        "'a b' 'it'\\''s' $'x\\ny\\r' ''"
    );
    assert_eq!(
        parse_log(&[b"@@CALL\0\0x\0".as_slice(), b"3\0a\0b\0c\0"].concat()).map_err(|_| ()),
        Err(())
    );
}

/// The comparison catches what it is there to catch: a wrong known argument, a wrong count,
/// a set of choices without bash's value, an `Always` command bash never ran, a `~` word
/// the evaluator claims; and it accepts unknowns and a right choice.
#[test]
fn comparison_reports_wrong_claims() {
    let span = Span {
        source: SourceId(0),
        range: 0..0,
    };
    let piece = |t: &str| {
        vec![Piece::Text {
            text: t.into(),
            origin: None,
        }]
    };
    let text = |t: &str| vec![piece(t)];
    let field = |choices: Vec<Vec<Piece>>| {
        Arg::Field(Field {
            choices,
            word: span.clone(),
        })
    };
    let exec = |argv: Vec<Arg>, certainty| Exec {
        argv,
        prefix: Vec::new(),
        variables: Arc::new(HashMap::new()),
        site: Site::Head,
        certainty,
        span: span.clone(),
        nesting: Vec::new(),
    };
    let call = Call {
        program: "torchrun".into(),
        args: vec!["--nnodes".into(), "2".into()],
        direct_under_runner: false,
        on_node: false,
        env: Vec::new(),
    };
    let stubs = vec!["torchrun".to_string()];
    let words = |w: &[(&str, bool)]| {
        w.iter()
            .map(|(t, u)| ExpectWord {
                text: t.to_string(),
                need: if *u { Need::Unknown } else { Need::Known },
            })
            .collect()
    };
    let check = |execs: Vec<Exec>, expect: Vec<Vec<ExpectWord>>| {
        let ev = Evaluation {
            execs,
            ..Evaluation::default()
        };
        compare(std::slice::from_ref(&call), Some(&expect), &ev, &stubs, &[])
    };
    let req = vec![words(&[
        ("torchrun", false),
        ("--nnodes", false),
        ("2", false),
    ])];

    let right = check(
        vec![exec(
            vec![
                field(text("torchrun")),
                field(text("--nnodes")),
                field(text("2")),
            ],
            Certainty::Always,
        )],
        req.clone(),
    );
    assert!(
        right.mismatches.is_empty() && right.unmet.is_empty(),
        "{right:?}"
    );
    assert_eq!((right.words, right.known, right.one_of), (3, 3, 0));

    let wrong = check(
        vec![exec(
            vec![
                field(text("torchrun")),
                field(text("--nnodes")),
                field(text("1")),
            ],
            Certainty::Always,
        )],
        req.clone(),
    );
    assert_eq!(wrong.mismatches.len(), 1, "{wrong:?}");
    assert!(wrong.mismatches[0].contains("argv[2]"), "{wrong:?}");

    let count = check(
        vec![exec(
            vec![field(text("torchrun")), field(text("--nnodes"))],
            Certainty::Always,
        )],
        req.clone(),
    );
    assert!(
        count.mismatches.iter().any(|m| m.contains("argc")),
        "{count:?}"
    );

    let choice = |a: &str, b: &str| {
        check(
            vec![exec(
                vec![
                    field(text("torchrun")),
                    field(text("--nnodes")),
                    field(vec![piece(a), piece(b)]),
                ],
                Certainty::Always,
            )],
            req.clone(),
        )
    };
    let good_choice = choice("1", "2");
    assert!(
        good_choice.mismatches.is_empty() && good_choice.unmet.is_empty(),
        "{good_choice:?}"
    );
    assert_eq!(good_choice.one_of, 1);
    let bad_choice = choice("1", "4");
    assert_eq!(bad_choice.mismatches.len(), 1, "{bad_choice:?}");

    let unknown = check(
        vec![exec(
            vec![
                field(text("torchrun")),
                Arg::Unknown(span.clone()),
                field(text("9")),
            ],
            Certainty::Always,
        )],
        req.clone(),
    );
    assert!(unknown.mismatches.is_empty(), "{unknown:?}");
    assert_eq!(unknown.unmet.len(), 1, "{unknown:?}");
    assert!(
        unknown.unmet[0].contains("argv[1] = --nnodes, argv[2] = 2"),
        "{unknown:?}"
    );

    let never_ran = check(
        vec![
            exec(
                vec![field(text("torchrun")), field(text("x"))],
                Certainty::Always,
            ),
            exec(
                vec![
                    field(text("torchrun")),
                    field(text("--nnodes")),
                    field(text("2")),
                ],
                Certainty::Always,
            ),
            exec(
                vec![field(text("torchrun")), field(text("y"))],
                Certainty::Maybe,
            ),
            exec(
                vec![field(text("torchrun")), field(text("z"))],
                Certainty::Always,
            ),
        ],
        req.clone(),
    );
    assert_eq!(never_ran.mismatches.len(), 2, "{never_ran:?}");
    assert!(
        never_ran.mismatches.iter().all(|m| m.contains("never ran")),
        "{never_ran:?}"
    );

    let runtime = vec![words(&[
        ("torchrun", false),
        ("--nnodes", false),
        ("2", true),
    ])];
    let claimed = check(
        vec![exec(
            vec![
                field(text("torchrun")),
                field(text("--nnodes")),
                field(text("2")),
            ],
            Certainty::Always,
        )],
        runtime.clone(),
    );
    assert_eq!(claimed.unmet.len(), 1, "{claimed:?}");
    let rt = check(
        vec![exec(
            vec![
                field(text("torchrun")),
                field(text("--nnodes")),
                field(vec![vec![Piece::Runtime {
                    name: "RANK".into(),
                    site: Site::Head,
                    origin: span.clone(),
                }]]),
            ],
            Certainty::Always,
        )],
        runtime,
    );
    assert!(rt.mismatches.is_empty() && rt.unmet.is_empty(), "{rt:?}");

    // The stub program behind commands that run their arguments as a command.
    let words_exec = |w: &[&str]| {
        exec(
            w.iter().map(|t| field(text(t))).collect(),
            Certainty::Always,
        )
    };
    let found = |w: &[&str]| exec_program(&words_exec(w), &stubs);
    assert_eq!(
        found(&["nohup", "env", "-u", "X", "A=1", "timeout", "-s", "KILL", "60", "torchrun", "x"]),
        Some(("torchrun".to_string(), 9))
    );
    assert_eq!(
        found(&["exec", "-a", "name", "/usr/bin/torchrun"]),
        Some(("torchrun".to_string(), 3))
    );
    assert_eq!(found(&["nice", "-n", "5", "bash", "torchrun"]), None);
    assert_eq!(found(&["env"]), None);
    assert_eq!(found(&["command", "-v", "torchrun"]), None);
    assert_eq!(
        found(&["command", "-p", "torchrun"]),
        Some(("torchrun".to_string(), 2))
    );

    // The environment: exported variables, prefix assignments over them, unexported ones absent.
    let var = |value: &str, exported| Variable {
        value: Value::Scalar(Field {
            choices: text(value),
            word: span.clone(),
        }),
        exported,
        origin: None,
    };
    let with_env = Exec {
        variables: Arc::new(HashMap::from([
            ("X".to_string(), var("1", true)),
            ("Y".to_string(), var("2", false)),
        ])),
        prefix: vec![(
            "Z".to_string(),
            Field {
                choices: text("3"),
                word: span.clone(),
            },
        )],
        ..words_exec(&["torchrun", "--nnodes", "2"])
    };
    let ev = Evaluation {
        execs: vec![with_env],
        ..Evaluation::default()
    };
    let watch = ["X", "Y", "Z", "W"].map(String::from);
    let env_of = |values: [Option<&str>; 4]| {
        let call = Call {
            env: values.iter().map(|v| v.map(String::from)).collect(),
            ..call.clone()
        };
        compare(std::slice::from_ref(&call), None, &ev, &stubs, &watch)
    };
    let right = env_of([Some("1"), None, Some("3"), None]);
    assert!(right.mismatches.is_empty(), "{right:?}");
    let wrong = env_of([Some("9"), Some("2"), Some("3"), Some("")]);
    assert_eq!(wrong.mismatches.len(), 1, "{wrong:?}");
    for name in ["environment X", "environment Y", "environment W"] {
        assert!(wrong.mismatches[0].contains(name), "{wrong:?}");
    }

    // A command a shell on each node expanded, claimed expanded on the head.
    let on_node = Call {
        on_node: true,
        ..call.clone()
    };
    let head = exec(
        vec![
            field(text("torchrun")),
            field(text("--nnodes")),
            field(text("2")),
        ],
        Certainty::Always,
    );
    let ev = Evaluation {
        execs: vec![head.clone()],
        ..Evaluation::default()
    };
    let site = compare(std::slice::from_ref(&on_node), None, &ev, &stubs, &[]);
    assert!(
        site.mismatches.len() == 1 && site.mismatches[0].contains("site"),
        "{site:?}"
    );
    let ev = Evaluation {
        execs: vec![Exec {
            site: Site::EachNode,
            ..head
        }],
        ..Evaluation::default()
    };
    let site = compare(std::slice::from_ref(&on_node), None, &ev, &stubs, &[]);
    assert!(site.mismatches.is_empty(), "{site:?}");
}

/// The span check finds an origin that is not where its text is, and one past the source.
#[test]
fn span_check_reports_wrong_origins() {
    let case = Case {
        place: "span_check_reports_wrong_origins".into(),
        name: "spans".into(),
        env: Vec::new(),
        runtime: Vec::new(),
        files: Vec::new(),
        script: "torchrun x\n".into(),
        expect: Vec::new(),
        require: Require::None,
        stubs: Vec::new(),
        expected_mismatch: None,
        crlf: false,
        watch: Vec::new(),
    };
    let run = run_case(&case).expect("bash runs");
    let span = |range: Range<usize>| Span {
        source: SourceId(0),
        range,
    };
    let evaluation = |x_origin: Range<usize>, word: Range<usize>| Evaluation {
        execs: vec![Exec {
            argv: vec![Arg::Field(Field {
                choices: vec![vec![Piece::Text {
                    text: "x".into(),
                    origin: Some(span(x_origin)),
                }]],
                word: span(word),
            })],
            prefix: Vec::new(),
            variables: Arc::new(HashMap::new()),
            site: Site::Head,
            certainty: Certainty::Always,
            span: span(0..10),
            nesting: Vec::new(),
        }],
        ..Evaluation::default()
    };
    assert_eq!(
        check_spans(&run, &evaluation(9..10, 9..10)),
        Vec::<String>::new()
    );
    let wrong = check_spans(&run, &evaluation(0..1, 9..10));
    assert!(
        wrong.len() == 1 && wrong[0].contains("where the source has t"),
        "{wrong:?}"
    );
    let outside = check_spans(&run, &evaluation(9..10, 9..99));
    assert!(
        outside.len() == 1 && outside[0].contains("not a range"),
        "{outside:?}"
    );
}

/// Wherever the evaluator claims to know an argument of a command bash ran, bash agrees; a
/// command it says always runs, bash ran. Prints the coverage.
#[test]
fn evaluator_agrees_with_bash() {
    let all = evaluate_all();
    let sum = |f: fn(&Outcome) -> usize| all.iter().map(|c| f(&c.outcome)).sum::<usize>();
    println!(
        "evaluator knew {} of {} words bash passed to the stubs ({} more as one of several \
         values), in {} cases; of the words the cases require, {} of {} as required",
        sum(|o| o.known),
        sum(|o| o.words),
        sum(|o| o.one_of),
        all.len(),
        sum(|o| o.required_met),
        sum(|o| o.required),
    );
    let mut per_file: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for c in &all {
        let file = c.run.case.place.split(':').next().unwrap_or_default();
        let e = per_file.entry(file).or_default();
        e.0 += 1;
        e.1 += c.outcome.known + c.outcome.one_of;
        e.2 += c.outcome.words;
    }
    for (file, (cases, known, words)) in per_file {
        println!("  {file}: {known} of {words} words known, {cases} cases");
    }
    for c in &all {
        let ok = c.outcome.mismatches.is_empty() && c.outcome.unmet.is_empty();
        if let (Some(why), true) = (&c.run.case.expected_mismatch, ok) {
            println!(
                "case `{}` is marked expected_mismatch ({why}) but agrees now",
                c.run.case.name
            );
        }
    }
    assert_no_problems("the evaluator contradicts bash", "MISMATCH", |o| {
        &o.mismatches
    });
}

/// Every span the evaluator gives points into the sources, a known text's origin at that very
/// text, a run-time value's at a text that names it.
#[test]
fn evaluator_spans_point_at_their_text() {
    assert_no_problems(
        "a span of the evaluation does not point at what it should",
        "BAD SPAN",
        |o| &o.bad_spans,
    );
}

/// The constructs the evaluator must model (cases with `-- require known`, the default) are
/// known, not unknown: every word bash passed, but `~` words, which it must not claim.
#[test]
fn evaluator_knows_what_it_must() {
    assert_no_problems(
        "the evaluator does not know a word it must (or claims one it cannot know)",
        "NOT AS REQUIRED",
        |o| &o.unmet,
    );
}
