//! `--statistics` (a count per rule instead of the findings, as ruff's), `--show-files` (the
//! files that would be checked, each with its config) and `--verbose` (which configs, how
//! long; on standard error).

use crate::Checked;
use fuzzfile_check::settings::FileSettings;
use fuzzfile_check::{Applicability, Rule};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// One rule's row: how many findings, and how many of them carry a safe or an unsafe fix.
#[derive(Default)]
struct Row {
    count: usize,
    safe: usize,
    unsafe_: usize,
}

/// The rows, most findings first (then by code).
fn rows(checked: &[Checked]) -> Vec<(Rule, Row)> {
    let mut by_rule: BTreeMap<Rule, Row> = BTreeMap::new();
    for d in checked.iter().flat_map(|c| c.diagnostics()) {
        let row = by_rule.entry(d.rule).or_default();
        row.count += 1;
        match d.fix_applicability() {
            Some(Applicability::Safe) => row.safe += 1,
            Some(Applicability::Unsafe) => row.unsafe_ += 1,
            None => {}
        }
    }
    let mut rows: Vec<(Rule, Row)> = by_rule.into_iter().collect();
    rows.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.code().cmp(b.0.code())));
    rows
}

/// `--statistics`: `count  code  [*] name` lines (`[*]`: some findings have a safe fix, `[-]`:
/// only unsafe ones), or with `json` an array of `{code, name, count, fixable,
/// unsafe_fixable}`.
pub fn write(out: &mut dyn Write, checked: &[Checked], json: bool) -> io::Result<()> {
    let rows = rows(checked);
    if json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|(r, row)| {
                serde_json::json!({
                    "code": r.code(),
                    "name": r.name(),
                    "count": row.count,
                    "fixable": row.safe,
                    "unsafe_fixable": row.unsafe_,
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&list).unwrap_or_default();
        return writeln!(out, "{text}");
    }
    let width = rows
        .iter()
        .map(|(_, r)| r.count.to_string().len())
        .max()
        .unwrap_or(1);
    for (rule, row) in &rows {
        let mark = if row.safe > 0 {
            "[*]"
        } else if row.unsafe_ > 0 {
            "[-]"
        } else {
            "   "
        };
        writeln!(
            out,
            "{:>width$}\t{}\t{mark} {}",
            row.count,
            rule.code(),
            rule.name()
        )?;
    }
    Ok(())
}

/// How a file's config is shown: `none`, or the file and what it extends.
pub fn config_of(s: &FileSettings) -> String {
    match &s.config {
        None => "no config".to_owned(),
        Some(c) if s.extends.is_empty() => c.clone(),
        Some(c) => format!("{c} (extends {})", s.extends.join(", ")),
    }
}

/// `--show-files`: each file that would be checked, with its config, one a line.
pub fn show_files(
    out: &mut dyn Write,
    files: &[PathBuf],
    settings: &[Arc<FileSettings>],
) -> io::Result<()> {
    for (f, s) in files.iter().zip(settings) {
        let mut line = format!(
            "{}\t{}",
            fuzzfile_check::render::printable(&crate::discover::display(f)),
            config_of(s)
        );
        if !s.ignored_here.is_empty() {
            line.push_str(&format!(
                "\tper-file-ignores: {}",
                s.ignored_here.join(", ")
            ));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// `--verbose`, before checking: each config used, once, with how many files it applies to.
pub fn say_configs(settings: &[Arc<FileSettings>]) {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for s in settings {
        *counts.entry(config_of(s)).or_default() += 1;
    }
    for (config, n) in counts {
        eprintln!(
            "fuzzlint: config {config}: {n} file{}",
            if n == 1 { "" } else { "s" }
        );
    }
}

/// `--verbose`, at the end: how many files, and how long it took.
pub fn say_time(files: usize, started: std::time::Instant) {
    eprintln!(
        "fuzzlint: checked {files} file{} in {:.1} ms",
        if files == 1 { "" } else { "s" },
        started.elapsed().as_secs_f64() * 1000.0
    );
}
