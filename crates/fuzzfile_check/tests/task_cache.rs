//! The findings kept per task between analyses (`fuzzfile_check::task_cache`, what the
//! language server passes in `Options::task_findings`) against analysing from scratch.
//!
//! Every Fuzzfile of the rule specs (with their cluster profiles), the corpus of Fuzzball's own
//! Fuzzfiles, the launch-script corpus, `examples/` and the fuzz seeds (hostile input) is edited
//! as a person edits it (typing and deleting in a value, a comment, a name; a line duplicated or
//! removed; a job renamed), and after each edit the analysis that reuses kept findings must equal, finding for finding
//! and position for position, the analysis that runs every hook. The counts then show that an
//! edit inside one job re-checks that job only.

use fuzz_test_support::rng::Xorshift;
mod spec_options;

use fuzzfile_check::task_cache::{TaskCounts, TaskFindingsCache};
use fuzzfile_check::{analyze_with, Options};
use spec_options::options_for;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The inputs, each with the cluster profile it is checked with.
fn inputs() -> Vec<(PathBuf, Options)> {
    let mut out = Vec::new();
    let specs = root().join("tests/specs");
    for path in fuzz_test_support::corpus::files_ending_with(&specs, ".fz") {
        let dir = path.parent().expect("a directory");
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let options = options_for(dir, stem);
        out.push((path, options));
    }
    let more = [
        root().join("../shared/corpus/plain"),
        root().join("../shared/corpus/docs"),
        root().join("crates/fuzzfile_check/tests/launch_corpus"),
        root().join("examples"),
    ];
    for dir in more {
        for path in fuzz_test_support::corpus::files_ending_with(&dir, ".fz") {
            out.push((path, Options::default()));
        }
    }
    // Hostile input: the fuzz seeds (an alias bomb, anchors merged across jobs, the inputs that
    // once crashed the parser).
    for path in fuzz_test_support::corpus::files_ending_with(&root().join("fuzz/seeds"), ".yaml") {
        out.push((path, Options::default()));
    }
    out
}

/// Edits drawn from a deterministic generator, so that a failure names edits that can be
/// replayed.
struct Edits(Xorshift);

impl Edits {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    /// One edit of `text`, as a person makes it; returns what it did.
    fn apply(&mut self, text: &mut String) -> String {
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < text.len())
            .collect();
        if line_starts.is_empty() {
            text.push_str("version: v4\n");
            return "wrote a version".into();
        }
        let line = line_starts[self.below(line_starts.len())];
        let line_end = text[line..].find('\n').map_or(text.len(), |i| line + i);
        match self.below(8) {
            // Type a character inside a word (a value, a name, a key, a comment).
            0..=2 => {
                let words: Vec<usize> = (line..line_end)
                    .filter(|&i| text.as_bytes()[i].is_ascii_alphanumeric())
                    .collect();
                let at = match words.get(self.below(words.len())) {
                    Some(&i) => i,
                    None => line_end,
                };
                let c = ['x', '7', 'a', '_', 'Z'][self.below(5)];
                text.insert(at, c);
                format!("typed {c:?} at {at}")
            }
            // Delete a character of a word.
            3 | 4 => {
                let words: Vec<usize> = (line..line_end)
                    .filter(|&i| text.as_bytes()[i].is_ascii_alphanumeric())
                    .collect();
                match words.get(self.below(words.len())) {
                    Some(&i) => {
                        text.remove(i);
                        format!("deleted at {i}")
                    }
                    None => "nothing".into(),
                }
            }
            // Duplicate a line (a second env entry, a repeated key).
            5 => {
                let copy = format!("{}\n", &text[line..line_end]);
                text.insert_str(line, &copy);
                format!("duplicated the line at {line}")
            }
            // Remove a line.
            6 => {
                let end = (line_end + 1).min(text.len());
                text.replace_range(line..end, "");
                format!("removed the line at {line}")
            }
            // Type a comment at the end of a line.
            _ => {
                text.insert_str(line_end, " # note");
                format!("commented at {line_end}")
            }
        }
    }
}

#[test]
fn kept_findings_equal_a_fresh_analysis_after_every_edit() {
    let inputs = inputs();
    assert!(
        inputs.len() > 300,
        "the rule specs and examples are beside the tests ({} inputs)",
        inputs.len()
    );
    let mut total = TaskCounts::default();
    let mut edits_made = 0;
    for (n, (path, options)) in inputs.iter().enumerate() {
        let Ok(mut text) = std::fs::read_to_string(path) else {
            continue;
        };
        let cache = TaskFindingsCache::default();
        let reusing = Options {
            task_findings: Some(cache.clone()),
            ..options.clone()
        };
        let mut edits = Edits(Xorshift::new(0x9E37_79B9_7F4A_7C15 ^ (n as u64 + 1)));
        let mut history = Vec::new();
        for round in 0..14 {
            if round > 0 {
                history.push(edits.apply(&mut text));
                edits_made += 1;
            }
            let kept = analyze_with(&text, &reusing);
            let fresh = analyze_with(&text, options);
            assert_eq!(
                kept.diagnostics,
                fresh.diagnostics,
                "{}: after edits {history:?}",
                path.display()
            );
            // The facts of the tasks whose findings were reused, derived when asked for.
            for (k, f) in kept.model.tasks().zip(fresh.model.tasks()) {
                assert_eq!(
                    format!("{:?}", kept.facts(k)),
                    format!("{:?}", fresh.facts(f)),
                    "{}: after edits {history:?}",
                    path.display()
                );
            }
        }
        let c = cache.counts();
        total.reused += c.reused;
        total.checked += c.checked;
    }
    // Not a vacuous comparison: the kept findings were used (most files have one or two jobs,
    // each checked on its first analysis and after every edit of its own text).
    assert!(
        total.reused * 3 > total.checked,
        "{edits_made} edits: {total:?}"
    );
}

/// A Fuzzfile of `jobs` jobs, each with a launcher script, env and a dependency on the one
/// before, and a comment line above each.
fn many_jobs(jobs: usize) -> String {
    let mut s =
        String::from("version: v4\ndefaults:\n  job:\n    env:\n      - NCCL_DEBUG=WARN\njobs:\n");
    for i in 0..jobs {
        s.push_str(&format!(
            "  # stage {i}\n  job-{i}:\n    image:\n      uri: docker://nvcr.io/nvidia/pytorch:25.01-py3\n    env:\n      - NPROC=4\n    script: |\n      #!/bin/bash\n      torchrun --standalone --nproc-per-node $NPROC /opt/train.py --epoch {i}\n    resource:\n      cpu: {{cores: 16}}\n      memory: {{size: 64GiB}}\n      devices: {{nvidia.com/gpu: 4}}\n"
        ));
        if i > 0 {
            s.push_str(&format!("    depends-on:\n      - name: job-{}\n", i - 1));
        }
    }
    s
}

/// The counts an analysis of `text` adds to `cache`, and for how many tasks it derived the
/// facts (what a job runs: its shell evaluated, its launches read).
fn counts_and_derived(text: &str, cache: &TaskFindingsCache) -> (TaskCounts, usize) {
    let before = cache.counts();
    let options = Options {
        task_findings: Some(cache.clone()),
        ..Options::default()
    };
    let a = analyze_with(text, &options);
    assert_eq!(
        a.diagnostics,
        analyze_with(text, &Options::default()).diagnostics
    );
    let after = cache.counts();
    let counts = TaskCounts {
        reused: after.reused - before.reused,
        checked: after.checked - before.checked,
    };
    (counts, a.semantics.derived())
}

fn counts_of(text: &str, cache: &TaskFindingsCache) -> TaskCounts {
    counts_and_derived(text, cache).0
}

#[test]
fn an_edit_re_checks_the_tasks_it_can_change_only() {
    let jobs = 40;
    let text = many_jobs(jobs);
    let cache = TaskFindingsCache::default();
    let first = counts_of(&text, &cache);
    assert_eq!(
        first,
        TaskCounts {
            reused: 0,
            checked: jobs as u64
        }
    );

    // Keystrokes in one job's script, one after the other: that job only, wherever it is.
    let mut current = text.clone();
    for (job, typed) in [
        (0, "--epoch 0"),
        (17, "--epoch 17"),
        (39, "--epoch 39"),
        (17, "--epoch 171"),
    ] {
        current = current.replacen(typed, &format!("{typed}1"), 1);
        let (counts, derived) = counts_and_derived(&current, &cache);
        assert_eq!(
            counts,
            TaskCounts {
                reused: jobs as u64 - 1,
                checked: 1
            },
            "an edit of job-{job}"
        );
        // The facts of the edited job, and of the first job that uses GPUs (the file-level
        // note that no cluster profile is configured names it): not those of every job.
        assert!(
            derived <= 2,
            "an edit of job-{job}: {derived} tasks' facts derived"
        );
        // What is kept is the last version's, not every version's.
        assert_eq!(cache.kept_tasks(), jobs);
    }
    // A line added to the first job moves every job after it: none is checked again.
    current = current.replacen("      - NPROC=4\n", "      - NPROC=4\n      - EXTRA=1\n", 1);
    assert_eq!(
        counts_of(&current, &cache),
        TaskCounts {
            reused: jobs as u64 - 1,
            checked: 1
        }
    );
    // Typing in a comment between two jobs changes no task.
    current = current.replacen("# stage 20", "# stage 20 (slow)", 1);
    assert_eq!(
        counts_of(&current, &cache),
        TaskCounts {
            reused: jobs as u64,
            checked: 0
        }
    );
    // Undoing the edits: the three jobs whose text changed are checked once more, the others
    // reused.
    assert_eq!(
        counts_of(&text, &cache),
        TaskCounts {
            reused: jobs as u64 - 3,
            checked: 3
        }
    );
    // A key being typed in one job (`resou`, no colon yet) is a syntax error; recovery blanks
    // that line: that job is checked, every other job reused, and again on the next keystroke.
    for typing in ["    resou\n", "    resour\n"] {
        let typed = text.replacen("  job-30:\n", &format!("  job-30:\n{typing}"), 1);
        let a = analyze_with(&typed, &Options::default());
        assert!(
            !a.tree.blanked_lines.is_empty(),
            "{typing:?} is a syntax error"
        );
        assert_eq!(
            counts_of(&typed, &cache),
            TaskCounts {
                reused: jobs as u64 - 1,
                checked: 1
            },
            "{typing:?}"
        );
    }
    // The defaults every job reads: every job is checked again.
    let edited = text.replacen("NCCL_DEBUG=WARN", "NCCL_DEBUG=INFO", 1);
    assert_eq!(
        counts_of(&edited, &cache),
        TaskCounts {
            reused: 0,
            checked: jobs as u64
        }
    );
    // A job renamed: the names a dependency can read changed, every job is checked again.
    let renamed = edited.replace("job-5:", "job-five:");
    assert_eq!(
        counts_of(&renamed, &cache),
        TaskCounts {
            reused: 0,
            checked: jobs as u64
        }
    );
    // What that is for: a job waits for `job-x` to be RUNNING; no task has that name until one
    // is renamed to it, and then the waiting job (its own text unchanged) has a finding
    // (`invalid-value`: only services are ever RUNNING). `counts_of` compares with a fresh
    // analysis.
    let waiting = format!(
        "{}  waiting:\n    image: {{uri: docker://alpine:3.20}}\n    command: [true]\n    depends-on:\n      - name: job-x\n        status: RUNNING\n",
        many_jobs(3)
    );
    counts_of(&waiting, &cache);
    let named = waiting.replace("job-2:", "job-x:");
    let found = analyze_with(&named, &Options::default()).diagnostics;
    assert!(
        found
            .iter()
            .any(|d| d.rule == fuzzfile_check::Rule::InvalidValue),
        "{found:?}"
    );
    assert_eq!(counts_of(&named, &cache).reused, 0);
}
