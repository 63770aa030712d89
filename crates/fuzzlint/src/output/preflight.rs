//! The node preflight's report, the default of `fuzz check`: one line per file, `PATH: ready`
//! or `PATH: not runnable` (an error, which Fuzzball refuses), the latter followed by every
//! finding of the file and of its template's values file as
//! `PATH:LINE:COL: severity[CODE name]: message` and an indented `help:` line. A `--set`
//! problem, which is in no file, has no place.

use crate::{Body, Checked};
use fuzzfile_check::render::printable;
use fuzzfile_check::{Diagnostic, Rule, Severity};
use std::io::{self, Write};

pub fn write(out: &mut dyn Write, checked: &[Checked], max_per_file: usize) -> io::Result<()> {
    let mut w = io::BufWriter::new(out);
    let mut i = 0;
    while i < checked.len() {
        // A file and the values files listed with it (companions follow their template).
        let end = i + 1 + checked[i + 1..].iter().take_while(|c| c.companion).count();
        let group = &checked[i..end];
        i = end;
        let runnable = !group
            .iter()
            .flat_map(|c| c.diagnostics())
            .any(|d| d.severity == Severity::Error);
        let head = &group[0];
        if head.counted() {
            let status = if runnable { "ready" } else { "not runnable" };
            writeln!(w, "{}: {status}", printable(&head.display))?;
        }
        if runnable && head.counted() {
            continue;
        }
        let mut shown = 0;
        let mut rest = 0;
        for c in group {
            for d in c.diagnostics() {
                if shown == max_per_file {
                    rest += 1;
                    continue;
                }
                shown += 1;
                line(&mut w, c, d)?;
            }
        }
        let mut more = String::new();
        fuzzfile_check::render::more_diagnostics(&mut more, rest);
        w.write_all(more.as_bytes())?;
    }
    w.flush()
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
