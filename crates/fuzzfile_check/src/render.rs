//! A plain, colourless rendering of diagnostics with a one-line code frame, used by snapshot
//! tests and anywhere a stable text form is wanted. (The CLI's human format uses ariadne.)

use crate::Analysis;
use std::fmt::Write;

/// Render every diagnostic of `a` as `severity[code name] line:col-line:col message`, the
/// source line with a caret underline, labels, help and fix.
pub fn plain(a: &Analysis) -> String {
    let mut out = String::new();
    for d in &a.diagnostics {
        let s = a.line_col(d.range.start);
        let e = a.line_col(d.range.end);
        let _ = writeln!(
            out,
            "{}[{} {}] {}:{}-{}:{} {}",
            d.severity,
            d.rule.code(),
            d.rule.name(),
            s.line,
            s.column,
            e.line,
            e.column,
            d.message
        );
        frame(a, d.range, &mut out);
        for l in &d.labels {
            let p = a.line_col(l.range.start);
            let _ = writeln!(out, "  note {}:{}: {}", p.line, p.column, l.message);
            frame(a, l.range, &mut out);
        }
        if let Some(h) = &d.help {
            let _ = writeln!(out, "  help: {h}");
        }
        if let Some(f) = &d.fix {
            let _ = writeln!(out, "  fix: {}", f.message);
            for ed in &f.edits {
                let p = a.line_col(ed.range.start);
                let q = a.line_col(ed.range.end);
                let _ = writeln!(
                    out,
                    "    {}:{}-{}:{} {:?} -> {:?}",
                    p.line,
                    p.column,
                    q.line,
                    q.column,
                    ed.range.slice(&a.text),
                    ed.replacement
                );
            }
        }
    }
    out
}

fn frame(a: &Analysis, range: fuzzfile_diagnostics::TextRange, out: &mut String) {
    let line = a.line_index.line_of(range.start);
    let lr = a.line_index.line_range(&a.text, line);
    let text = lr.slice(&a.text);
    let _ = writeln!(out, "  {:>3} | {}", line + 1, text.replace('\t', "→"));
    let start_col = lr
        .slice(&a.text)
        .get(..(range.start - lr.start) as usize)
        .map_or(0, |s| s.chars().count());
    let end = range.end.min(lr.end).max(range.start);
    let width = a
        .text
        .get(range.start as usize..end as usize)
        .map_or(0, |s| s.chars().count())
        .max(1);
    let more = if range.end > lr.end { "…" } else { "" };
    let _ = writeln!(
        out,
        "      | {}{}{more}",
        " ".repeat(start_col),
        "^".repeat(width)
    );
}
