//! Building blocks for fixes that keep the rest of the file byte for byte.

use fuzzfile_diagnostics::{Edit, TextRange};

/// An edit that deletes the whole lines covered by `range` (a block mapping entry such as
/// `retry:` with its nested lines), including their line breaks. `None` when something else
/// shares the first or last line, so deleting lines would delete more than the entry.
pub fn delete_lines(text: &str, range: TextRange) -> Option<Edit> {
    let r = range.as_usize();
    if r.end > text.len() || !text.is_char_boundary(r.start) || !text.is_char_boundary(r.end) {
        return None;
    }
    let line_start = text[..r.start].rfind('\n').map_or(0, |i| i + 1);
    if !text[line_start..r.start]
        .bytes()
        .all(|b| b == b' ' || b == b'-')
        || text[line_start..r.start].contains('-')
    {
        return None;
    }
    let rest = &text[r.end..];
    let line_end_rel = rest.find('\n').map_or(rest.len(), |i| i + 1);
    let tail = rest[..line_end_rel].trim_end_matches(['\n', '\r']).trim();
    if !(tail.is_empty() || tail.starts_with('#')) {
        return None;
    }
    Some(Edit {
        range: TextRange::from_usize(line_start, r.end + line_end_rel),
        replacement: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletes_an_entry_with_its_children() {
        let text = "policy:\n  retry:\n    attempts: 3\n  timeout:\n    execute: 1h\n";
        let start = text.find("retry").unwrap();
        let end = text.find("3\n").unwrap() + 1;
        let e = delete_lines(text, TextRange::from_usize(start, end)).unwrap();
        assert_eq!(
            fuzzfile_diagnostics::apply_edits(text, [&e]),
            "policy:\n  timeout:\n    execute: 1h\n"
        );
    }

    #[test]
    fn refuses_when_the_line_is_shared() {
        let text = "policy: {retry: {attempts: 3}}\n";
        let start = text.find("retry").unwrap();
        assert!(delete_lines(text, TextRange::from_usize(start, start + 5)).is_none());
    }
}
