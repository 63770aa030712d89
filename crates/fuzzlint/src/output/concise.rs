//! `path:line:col: CODE name message`, one line per finding, nothing else: for grep, an
//! editor's quickfix list (`:cexpr`, `compile-mode`) and CI problem matchers.

use crate::Checked;
use fuzzfile_check::render::printable;
use fuzzfile_check::Diagnostic;
use std::io::{self, Write};

/// The line of one finding (without the line break). Text from the file (the path, names in
/// the message) is escaped (`printable`): a line is always one line.
pub fn line(c: &Checked, d: &Diagnostic) -> String {
    let s = c.line_col(d.range.start);
    format!(
        "{}:{}:{}: {} {} {}",
        printable(&c.display),
        s.line,
        s.column,
        d.rule.code(),
        d.rule.name(),
        printable(&d.message)
    )
}

/// The lines of one file's findings.
pub fn entry(out: &mut Vec<u8>, c: &Checked) -> io::Result<()> {
    for d in c.diagnostics() {
        writeln!(out, "{}", line(c, d))?;
    }
    Ok(())
}
