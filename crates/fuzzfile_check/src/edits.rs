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

/// An edit that adds `key: value` to the mapping `map` (block or flow), after its last entry,
/// at the indentation of its keys. `None` when the mapping is empty or its shape is unusual.
pub fn add_mapping_entry(
    text: &str,
    tree: &fuzzfile_syntax::Tree,
    map: fuzzfile_syntax::NodeId,
    key: &str,
    value: &str,
) -> Option<Edit> {
    use fuzzfile_syntax::{CollectionStyle, NodeKind};
    let node = tree.node(tree.resolve(map));
    let NodeKind::Mapping { style, entries } = &node.kind else {
        return None;
    };
    let first = entries.first()?;
    match style {
        CollectionStyle::Flow => {
            let close = node.range.end.checked_sub(1)?;
            if text.as_bytes().get(close as usize) != Some(&b'}') {
                return None;
            }
            let last_end = entries
                .last()
                .map(|e| tree.node(e.value).range.end.max(tree.node(e.key).range.end))?;
            Some(Edit {
                range: TextRange::empty(last_end),
                replacement: format!(", {key}: {value}"),
            })
        }
        CollectionStyle::Block => {
            let key_start = tree.node(first.key).range.start as usize;
            let line_start = text[..key_start].rfind('\n').map_or(0, |i| i + 1);
            let indent = &text[line_start..key_start];
            if !indent.bytes().all(|b| b == b' ') {
                // `- key: v` compact form: indent is the column of the key
                if !indent.trim_start().starts_with('-') {
                    return None;
                }
            }
            let indent: String = " ".repeat(text[line_start..key_start].chars().count());
            let end = node.range.end as usize;
            let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
            let line_end = if text[..line_end].ends_with('\r') {
                line_end - 1
            } else {
                line_end
            };
            let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
            Some(Edit {
                range: TextRange::from_usize(line_end, line_end),
                replacement: format!("{newline}{indent}{key}: {value}"),
            })
        }
    }
}

#[cfg(test)]
mod mapping_tests {
    use super::*;

    fn apply(text: &str, key: &str, value: &str, path: &[&str]) -> String {
        let tree = fuzzfile_syntax::parse(text);
        let mut node = tree.root().unwrap();
        for p in path {
            node = tree.get(node, p).unwrap().value;
        }
        let e = add_mapping_entry(text, &tree, node, key, value).unwrap();
        fuzzfile_diagnostics::apply_edits(text, [&e])
    }

    #[test]
    fn adds_to_block_and_flow_mappings() {
        assert_eq!(
            apply(
                "m:\n  nodes: 2\n  implementation: generic\nx: 1\n",
                "procs-per-node",
                "4",
                &["m"]
            ),
            "m:\n  nodes: 2\n  implementation: generic\n  procs-per-node: 4\nx: 1\n"
        );
        assert_eq!(
            apply(
                "m: {nodes: 2, implementation: generic}\n",
                "procs-per-node",
                "4",
                &["m"]
            ),
            "m: {nodes: 2, implementation: generic, procs-per-node: 4}\n"
        );
        assert_eq!(
            apply(
                "r:\n  cpu:\n    cores: 4\n",
                "devices",
                "{nvidia.com/gpu: 4}",
                &["r"]
            ),
            "r:\n  cpu:\n    cores: 4\n  devices: {nvidia.com/gpu: 4}\n"
        );
        assert_eq!(
            apply("m:\r\n  nodes: 2 # c\r\n", "k", "v", &["m"]),
            "m:\r\n  nodes: 2 # c\r\n  k: v\r\n"
        );
    }
}
