//! The node preflight's report, the default of `fuzz check`: one line per file, `PATH: ready`
//! or `PATH: not runnable` (an error, which Fuzzball refuses), the latter followed by every
//! finding of the file and of its template's values file as
//! `PATH:LINE:COL: severity[CODE name]: message` and an indented `help:` line. A `--set`
//! problem, which is in no file, has no place.

use crate::{Body, Checked};
use fuzzfile_check::render::printable;
use fuzzfile_check::{Diagnostic, Rule, Severity};
use std::io::{self, Write};

/// One file's findings, a line each (and its `help:` line), with where each finding's lines
/// end: a file and the values files listed with it show at most `max_per_file` findings
/// together, which the report's writer cuts ([`group`]).
pub fn entry(out: &mut Vec<u8>, c: &Checked, finding_ends: &mut Vec<usize>) -> io::Result<()> {
    for d in c.diagnostics() {
        line(out, c, d)?;
        finding_ends.push(out.len());
    }
    Ok(())
}

/// A file's part of the report from its own part and those of the values files listed with
/// it (companions follow their template): `PATH: ready` or `PATH: not runnable` and the
/// findings of all of them, at most `max_per_file`.
pub fn group(
    out: &mut dyn Write,
    group: &[&super::EntryReport],
    max_per_file: usize,
) -> io::Result<()> {
    let Some(head) = group.first() else {
        return Ok(());
    };
    let runnable = !group
        .iter()
        .any(|e| e.severity_counts[Severity::Error as usize] > 0);
    let counted = !head.companion;
    if counted {
        let status = if runnable { "ready" } else { "not runnable" };
        writeln!(out, "{}: {status}", printable(&head.display))?;
    }
    if runnable && counted {
        return Ok(());
    }
    let mut shown = 0;
    let mut rest = 0;
    for e in group {
        let mut start = 0;
        for &end in &e.finding_ends {
            if shown == max_per_file {
                rest += 1;
                continue;
            }
            shown += 1;
            out.write_all(&e.fragment[start..end])?;
            start = end;
        }
    }
    let mut more = String::new();
    fuzzfile_check::render::more_diagnostics(&mut more, rest);
    out.write_all(more.as_bytes())
}

fn line(w: &mut dyn Write, c: &Checked, d: &Diagnostic) -> io::Result<()> {
    let place = if matches!(c.body, Body::Template(_)) && d.rule == Rule::ValuesFileError {
        String::new()
    } else {
        let p = c.line_col(d.range.start);
        format!("{}:{}:{}: ", printable(&c.display), p.line, p.column)
    };
    writeln!(
        w,
        "{place}{}[{} {}]: {}",
        d.severity,
        d.rule.code(),
        d.rule.name(),
        printable(&d.message)
    )?;
    if let Some(h) = &d.help {
        writeln!(w, "  help: {}", printable(h))?;
    }
    Ok(())
}
