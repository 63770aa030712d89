//! JUnit XML, as CI test reports read it (GitLab `artifacts: reports: junit:`, Jenkins, Azure):
//! one `<testsuite>` per file; a file without findings is one passing `<testcase>`, a file
//! with findings has a failing `<testcase>` per finding (`classname` the file, `name` the
//! rule and position, `<failure type="SEVERITY" message="...">` with the concise line).
//!
//! Text from a file (paths, names in messages) is escaped twice: first as for a terminal
//! (`printable`: control characters, line separators and bidirectional overrides become
//! `\u{..}`), which also keeps out every character XML 1.0 forbids, then as XML. The report has
//! no time stamps: the same input gives the same bytes.

use crate::Checked;
use fuzzfile_check::render::printable;
use fuzzfile_check::Severity;
use std::io::{self, Write};

/// `text` as XML character data or an attribute value (in double quotes).
pub fn escape(text: &str) -> String {
    let text = printable(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            // Not allowed in XML 1.0 at all (`printable` leaves tabs and non-characters).
            '\u{fffe}' | '\u{ffff}' => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn severity(s: Severity) -> &'static str {
    s.as_str()
}

/// The report's head: `findings` failing test cases, `cases` in all (a file without findings
/// is one passing case). The counts need every file: the report's writer keeps the files'
/// parts until then.
pub fn head(out: &mut dyn Write, cases: usize, findings: usize) -> io::Result<()> {
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="fuzzlint" tests="{cases}" failures="{findings}" errors="0">"#
    )
}

/// One file's test suite.
pub fn entry(w: &mut Vec<u8>, c: &Checked) -> io::Result<()> {
    let diagnostics = c.diagnostics();
    let file = escape(&c.display);
    writeln!(
        w,
        r#"  <testsuite name="{file}" tests="{}" failures="{}" errors="0" skipped="0">"#,
        diagnostics.len().max(1),
        diagnostics.len()
    )?;
    if diagnostics.is_empty() {
        writeln!(
            w,
            r#"    <testcase name="no problems found" classname="{file}" file="{file}"/>"#
        )?;
    }
    for d in diagnostics {
        let s = c.line_col(d.range.start);
        writeln!(
            w,
            r#"    <testcase name="{} {} at {}:{}" classname="{file}" file="{file}" line="{}">"#,
            d.rule.code(),
            d.rule.name(),
            s.line,
            s.column,
            s.line
        )?;
        let mut body = super::concise::line(c, d);
        if let Some(h) = &d.help {
            body.push_str("\nhelp: ");
            body.push_str(h);
        }
        writeln!(
            w,
            r#"      <failure type="{}" message="{}">{}</failure>"#,
            severity(d.severity),
            escape(&d.message),
            escape_body(&body)
        )?;
        writeln!(w, "    </testcase>")?;
    }
    writeln!(w, "  </testsuite>")
}

/// The report's end.
pub fn tail(out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "</testsuites>")
}

/// Character data that may span lines: each line escaped, the line breaks kept.
fn escape_body(text: &str) -> String {
    text.split('\n').map(escape).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn escape_leaves_nothing_xml_forbids() {
        let e = super::escape("a<b>&\"'\u{1b}[2J\u{0}\u{7}\n\u{202e}\u{ffff}\tz");
        assert_eq!(
            e,
            "a&lt;b&gt;&amp;&quot;&apos;\\u{1b}[2J\\u{0}\\u{7}\\n\\u{202e}\\u{ffff}&#9;z"
        );
    }
}
