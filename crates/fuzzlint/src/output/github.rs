//! GitHub Actions workflow commands: `::error file=F,line=L,col=C,...::F:L:C: CODE name message`.

use crate::Checked;
use fuzzfile_check::render::printable;
use fuzzfile_check::Severity;
use std::io::{self, Write};

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The workflow commands of one file's findings.
pub fn entry(out: &mut Vec<u8>, c: &Checked) -> io::Result<()> {
    for d in c.diagnostics() {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let s = c.line_col(d.range.start);
        let e = c.line_col(d.range.end);
        // The message starts with the location (`path:line:col: CODE name message`, the
        // concise line): GitHub shows only the first annotations of a step, the rest are
        // read in the log. Text from the file is escaped first (`printable`): only the
        // line break this writer puts between message and help stays one.
        let mut msg = super::concise::line(c, d);
        if let Some(h) = &d.help {
            msg.push('\n');
            msg.push_str(&printable(h));
        }
        writeln!(
            out,
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            escape_property(&c.display),
            s.line,
            s.column,
            e.line,
            e.column,
            escape_property(&format!("{} {}", d.rule.code(), d.rule.name())),
            escape_data(&msg)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_the_runner_expects() {
        assert_eq!(escape_data("50% a\nb"), "50%25 a%0Ab");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
