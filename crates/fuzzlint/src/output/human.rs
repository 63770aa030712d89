//! Code frames for people (ariadne), with a summary line.

use crate::Checked;
use ariadne::{Color, Config, IndexType, Label, Report, ReportKind, Source};
use fuzzfile_check::Severity;
use std::io::{self, Write};

pub fn write(out: &mut dyn Write, checked: &[Checked], color: bool) -> io::Result<()> {
    let mut counts = [0usize; 3];
    for c in checked {
        let a = &c.analysis;
        if a.diagnostics.is_empty() {
            continue;
        }
        let source = Source::from(a.text.as_str());
        for d in &a.diagnostics {
            counts[d.severity as usize] += 1;
            let (kind, col) = match d.severity {
                Severity::Error => (ReportKind::Error, Color::Red),
                Severity::Warning => (ReportKind::Warning, Color::Yellow),
                Severity::Info => (ReportKind::Advice, Color::Cyan),
            };
            let span = d.range.as_usize();
            // ariadne starts a new frame, headed by the primary position, for a label above an
            // earlier one: order the labels by position so that one frame shows them all.
            let order = |start: u32| i32::try_from(start).unwrap_or(i32::MAX);
            let mut report = Report::build(kind, (c.display.clone(), span.clone()))
                .with_config(
                    Config::default()
                        .with_index_type(IndexType::Byte)
                        .with_color(color),
                )
                .with_code(format!("{} {}", d.rule.code(), d.rule.name()))
                .with_message(&d.message)
                .with_label(
                    Label::new((c.display.clone(), span))
                        .with_message(&d.message)
                        .with_color(col)
                        .with_order(order(d.range.start)),
                );
            for l in &d.labels {
                report = report.with_label(
                    Label::new((c.display.clone(), l.range.as_usize()))
                        .with_message(&l.message)
                        .with_color(Color::Blue)
                        .with_order(order(l.range.start)),
                );
            }
            if let Some(h) = &d.help {
                report = report.with_help(h);
            }
            if let Some(f) = &d.fix {
                report = report.with_note(format!(
                    "fix available: {} (`fuzzlint check --fix`)",
                    f.message
                ));
            }
            let mut buf = Vec::new();
            report
                .finish()
                .write((c.display.clone(), &source), &mut buf)?;
            out.write_all(&buf)?;
        }
    }
    let [info, warn, err] = counts;
    let files = checked.len();
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if err + warn + info == 0 {
        writeln!(out, "{}: no problems found", plural(files, "file"))?;
    } else {
        writeln!(
            out,
            "{} checked: {}, {}, {}",
            plural(files, "file"),
            plural(err, "error"),
            plural(warn, "warning"),
            plural(info, "note")
        )?;
    }
    Ok(())
}
