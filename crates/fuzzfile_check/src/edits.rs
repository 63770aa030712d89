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
    let line_start = line_start_of(text, r.start);
    if !text[line_start..r.start]
        .bytes()
        .all(|b| b == b' ' || b == b'-')
        || text[line_start..r.start].contains('-')
    {
        return None;
    }
    let tail = text[r.end..line_end_of(text, r.end)].trim();
    if !(tail.is_empty() || tail.starts_with('#')) {
        return None;
    }
    Some(Edit {
        range: TextRange::from_usize(
            line_start,
            fuzzfile_diagnostics::next_line_start(text, r.end),
        ),
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
/// at the indentation of its keys. `None` when the mapping is empty or its shape is unusual,
/// and when it already has `key`, written or through a merge key (`<<: *defaults`): a key
/// written over a merged one replaces the merged value whole.
pub fn add_mapping_entry(
    text: &str,
    tree: &fuzzfile_syntax::Tree,
    map: fuzzfile_syntax::NodeId,
    key: &str,
    value: &str,
) -> Option<Edit> {
    use fuzzfile_syntax::{CollectionStyle, NodeKind};
    if tree.get_merged(map, key).is_some() {
        return None;
    }
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
            let line_start = line_start_of(text, key_start);
            let indent = &text[line_start..key_start];
            if !indent.bytes().all(|b| b == b' ') {
                // `- key: v` compact form: indent is the column of the key
                if !indent.trim_start().starts_with('-') {
                    return None;
                }
            }
            let indent: String = " ".repeat(text[line_start..key_start].chars().count());
            let line_end = line_end_of(text, node.range.end as usize);
            let newline = newline_of(text);
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

/// `s` as a YAML scalar that reads back as the string `s`: plain when that is unambiguous,
/// double-quoted otherwise. `flow` is true inside `[...]` / `{...}`, where `,[]{}` also need
/// quotes.
pub fn yaml_scalar(s: &str, flow: bool) -> String {
    let plain = !s.is_empty()
        && s.trim() == s
        && !s.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%',
            '@', '`',
        ])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && !s.contains(['\n', '\r', '\t'])
        && !(flow && s.contains([',', '[', ']', '{', '}']))
        && matches!(
            fuzzfile_syntax::resolve_core(s),
            fuzzfile_syntax::CoreValue::Str(_)
        );
    if plain {
        s.to_owned()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Offset of the start of the line holding `offset` (`\n`, `\r\n` and a lone `\r` end lines).
fn line_start_of(text: &str, offset: usize) -> usize {
    fuzzfile_diagnostics::line_start_at(text, offset)
}

/// Offset of the end of the line holding `offset`, before its line break.
fn line_end_of(text: &str, offset: usize) -> usize {
    fuzzfile_diagnostics::line_end_at(text, offset)
}

/// The line break the text uses.
fn newline_of(text: &str) -> &'static str {
    fuzzfile_diagnostics::newline_of(text)
}

/// Where the content of `id` really ends: the last byte of its last descendant. `None` when
/// that is a block scalar with `+` chomping (its kept trailing lines belong to it, so nothing
/// can be inserted after its last line).
fn content_end(
    text: &str,
    tree: &fuzzfile_syntax::Tree,
    id: fuzzfile_syntax::NodeId,
) -> Option<usize> {
    use fuzzfile_syntax::{CollectionStyle, NodeKind};
    let mut id = id;
    for _ in 0..256 {
        let node = tree.node(id);
        match &node.kind {
            NodeKind::Mapping {
                style: CollectionStyle::Block,
                entries,
            } => match entries.last() {
                Some(e) if !tree.node(e.value).range.is_empty() => id = e.value,
                Some(e) => return Some(tree.node(e.key).range.end as usize),
                None => return Some(node.range.end as usize),
            },
            NodeKind::Sequence {
                style: CollectionStyle::Block,
                items,
            } => match items.last() {
                Some(&i) => id = i,
                None => return Some(node.range.end as usize),
            },
            NodeKind::Scalar(s) if s.style().is_block() => {
                let header =
                    fuzzfile_diagnostics::lines(text.get(node.range.as_usize())?).next()?;
                if header.contains('+') {
                    return None;
                }
                return Some(node.range.end as usize);
            }
            _ => return Some(node.range.end as usize),
        }
    }
    None
}

/// Whether the rest of the line after `offset` is blank or a comment.
fn rest_of_line_is_blank(text: &str, offset: usize) -> bool {
    let end = line_end_of(text, offset);
    let rest = text[offset..end].trim();
    rest.is_empty() || rest.starts_with('#')
}

/// An edit that appends `item` (a string, quoted as needed) to the sequence `seq`, keeping every
/// other byte: for a block list a new `- item` line with the indentation of the last item, for
/// a flow list `, item` after the last item (or `item` inside `[]`). `None` when the list is an
/// alias or its shape is unusual (nested `- - x`, a last item that is a `|+` block scalar).
pub fn add_sequence_item(
    text: &str,
    tree: &fuzzfile_syntax::Tree,
    seq: fuzzfile_syntax::NodeId,
    item: &str,
) -> Option<Edit> {
    use fuzzfile_syntax::{CollectionStyle, NodeKind};
    let node = tree.node(seq);
    let NodeKind::Sequence { style, items } = &node.kind else {
        return None;
    };
    match style {
        CollectionStyle::Flow => {
            let r = node.range.as_usize();
            let bytes = text.as_bytes();
            if bytes.get(r.start) != Some(&b'[')
                || r.end == 0
                || bytes.get(r.end - 1) != Some(&b']')
            {
                return None;
            }
            let value = yaml_scalar(item, true);
            match items.last() {
                Some(&last) => Some(Edit {
                    range: TextRange::empty(tree.node(last).range.end),
                    replacement: format!(", {value}"),
                }),
                None => Some(Edit {
                    range: TextRange::from_usize(r.start + 1, r.start + 1),
                    replacement: value,
                }),
            }
        }
        CollectionStyle::Block => {
            let &last = items.last()?;
            let start = tree.node(last).range.start as usize;
            let ls = line_start_of(text, start);
            let prefix = &text[ls..start];
            let dash = prefix.trim_start_matches(' ');
            if !(dash.starts_with('-') && dash[1..].bytes().all(|b| b == b' ') && dash.len() > 1) {
                return None;
            }
            let end = content_end(text, tree, last)?;
            if !rest_of_line_is_blank(text, end) {
                return None;
            }
            let at = line_end_of(text, end);
            Some(Edit {
                range: TextRange::from_usize(at, at),
                replacement: format!("{}{prefix}{}", newline_of(text), yaml_scalar(item, false)),
            })
        }
    }
}

/// The indentation step a new nested block list under a key of `map` should use: taken from a
/// block collection already nested in `map` (a list's `-` may sit at the key's own column),
/// else 2.
fn nested_step(text: &str, tree: &fuzzfile_syntax::Tree, map: fuzzfile_syntax::NodeId) -> usize {
    use fuzzfile_syntax::{CollectionStyle, NodeKind};
    let Some(entries) = tree.entries(map) else {
        return 2;
    };
    let column = |offset: usize| text[line_start_of(text, offset)..offset].chars().count();
    let mut map_step = None;
    for e in entries {
        let key_col = column(tree.node(e.key).range.start as usize);
        match &tree.node(e.value).kind {
            NodeKind::Sequence {
                style: CollectionStyle::Block,
                items,
            } => {
                if let Some(&i) = items.first() {
                    let item = tree.node(i).range.start as usize;
                    let ls = line_start_of(text, item);
                    let dash_col = text[ls..item].trim_end().chars().count().saturating_sub(1);
                    return dash_col.saturating_sub(key_col);
                }
            }
            NodeKind::Mapping {
                style: CollectionStyle::Block,
                entries: sub,
            } if map_step.is_none() => {
                if let Some(s) = sub.first() {
                    let c = column(tree.node(s.key).range.start as usize);
                    if c > key_col {
                        map_step = Some(c - key_col);
                    }
                }
            }
            _ => {}
        }
    }
    map_step.unwrap_or(2)
}

/// An edit that adds the environment entry `entry` (`NAME=value`) to the job or service whose
/// body is the mapping `body`, keeping every other byte: appended to an existing `env` list
/// (block or flow, see [`add_sequence_item`]), or, when the body has no `env`, a new `env:` key
/// with one item after the body's last entry, at the indentation of its keys. `None` when `env`
/// is an alias or not a list, or the body's shape is unusual.
pub fn add_env_entry(
    text: &str,
    tree: &fuzzfile_syntax::Tree,
    body: fuzzfile_syntax::NodeId,
    entry: &str,
) -> Option<Edit> {
    use fuzzfile_syntax::{CollectionStyle, NodeKind};
    if let Some(e) = tree.get(body, "env") {
        return match &tree.node(e.value).kind {
            NodeKind::Sequence { .. } => add_sequence_item(text, tree, e.value, entry),
            _ => None,
        };
    }
    // An `env` merged from elsewhere (`<<: *defaults`): a new `env:` would replace it whole.
    if tree.get_merged(body, "env").is_some() {
        return None;
    }
    let node = tree.node(body);
    let NodeKind::Mapping { style, entries } = &node.kind else {
        return None;
    };
    match style {
        CollectionStyle::Flow => add_mapping_entry(
            text,
            tree,
            body,
            "env",
            &format!("[{}]", yaml_scalar(entry, true)),
        ),
        CollectionStyle::Block => {
            let first = entries.first()?;
            let key_start = tree.node(first.key).range.start as usize;
            let ls = line_start_of(text, key_start);
            let prefix = &text[ls..key_start];
            if !prefix.bytes().all(|b| b == b' ' || b == b'-')
                || prefix
                    .trim_start_matches(' ')
                    .trim_start_matches('-')
                    .contains('-')
            {
                return None;
            }
            let indent = " ".repeat(prefix.chars().count());
            let step = " ".repeat(nested_step(text, tree, body));
            let end = content_end(text, tree, body)?;
            if !rest_of_line_is_blank(text, end) {
                return None;
            }
            let at = line_end_of(text, end);
            let nl = newline_of(text);
            Some(Edit {
                range: TextRange::from_usize(at, at),
                replacement: format!(
                    "{nl}{indent}env:{nl}{indent}{step}- {}",
                    yaml_scalar(entry, false)
                ),
            })
        }
    }
}

/// An edit that adds `key: value` (value already written as YAML, e.g. a flow mapping) under
/// the nested mappings `path` of `map`, creating the missing ones as flow mappings:
/// `path = ["resource", "annotations"]` adds to `resource.annotations`, or adds
/// `annotations: {key: value}` to `resource`, or `resource: {annotations: {key: value}}` to
/// `map`. `None` when an existing step is not a mapping (or is an alias).
pub fn add_nested_entry(
    text: &str,
    tree: &fuzzfile_syntax::Tree,
    map: fuzzfile_syntax::NodeId,
    path: &[&str],
    key: &str,
    value: &str,
) -> Option<Edit> {
    use fuzzfile_syntax::NodeKind;
    let mut node = map;
    for (i, step) in path.iter().enumerate() {
        match tree.get(node, step) {
            Some(e) => {
                if !matches!(tree.node(e.value).kind, NodeKind::Mapping { .. }) {
                    return None;
                }
                node = e.value;
            }
            // Merged from elsewhere (`<<: *defaults`): writing the step would replace it whole.
            None if tree.get_merged(node, step).is_some() => return None,
            None => {
                let mut inner = format!("{{{key}: {value}}}");
                for p in path[i + 1..].iter().rev() {
                    inner = format!("{{{p}: {inner}}}");
                }
                return add_mapping_entry(text, tree, node, step, &inner);
            }
        }
    }
    add_mapping_entry(text, tree, node, key, value)
}

/// An edit that removes item `index` of the sequence `seq`: in a flow list with the `, ` before
/// it (or after it, for the first item); in a block list its whole line. `None` when the item
/// shares its line with something else or spans several lines in a block list.
pub fn delete_sequence_item(
    text: &str,
    tree: &fuzzfile_syntax::Tree,
    seq: fuzzfile_syntax::NodeId,
    index: usize,
) -> Option<Edit> {
    use fuzzfile_syntax::{CollectionStyle, NodeKind};
    let NodeKind::Sequence { style, items } = &tree.node(seq).kind else {
        return None;
    };
    let item = tree.node(*items.get(index)?).range;
    match style {
        CollectionStyle::Flow => {
            let range = if index > 0 {
                TextRange::new(tree.node(items[index - 1]).range.end, item.end)
            } else if let Some(&next) = items.get(1) {
                TextRange::new(item.start, tree.node(next).range.start)
            } else {
                item
            };
            Some(Edit {
                range,
                replacement: String::new(),
            })
        }
        CollectionStyle::Block => {
            let start = item.start as usize;
            let ls = line_start_of(text, start);
            let dash = text[ls..start].trim_start_matches(' ');
            if !(dash.starts_with('-') && dash[1..].bytes().all(|b| b == b' ')) {
                return None;
            }
            let end = item.end as usize;
            if text[start..end].contains(['\n', '\r']) || !rest_of_line_is_blank(text, end) {
                return None;
            }
            let after = fuzzfile_diagnostics::next_line_start(text, end);
            Some(Edit {
                range: TextRange::from_usize(ls, after),
                replacement: String::new(),
            })
        }
    }
}

#[cfg(test)]
mod env_entry_tests {
    use super::*;

    fn body(tree: &fuzzfile_syntax::Tree) -> fuzzfile_syntax::NodeId {
        let jobs = tree.get(tree.root().unwrap(), "jobs").unwrap().value;
        tree.get(jobs, "train").unwrap().value
    }

    fn add(text: &str, entry: &str) -> Option<String> {
        let tree = fuzzfile_syntax::parse(text);
        let e = add_env_entry(text, &tree, body(&tree), entry)?;
        Some(fuzzfile_diagnostics::apply_edits(text, [&e]))
    }

    #[test]
    fn appends_to_a_block_list_with_its_indentation() {
        let text = "jobs:\n  train:\n    env:\n      - A=1\n      - B=2  # two\n    command: [x]\n";
        assert_eq!(
            add(text, "NCCL_IB_HCA=mlx5").unwrap(),
            "jobs:\n  train:\n    env:\n      - A=1\n      - B=2  # two\n      - NCCL_IB_HCA=mlx5\n    command: [x]\n"
        );
        // `-` at the key's column, and CRLF line breaks.
        let text = "jobs:\r\n  train:\r\n    env:\r\n    - A=1\r\n";
        assert_eq!(
            add(text, "X=1").unwrap(),
            "jobs:\r\n  train:\r\n    env:\r\n    - A=1\r\n    - X=1\r\n"
        );
    }

    #[test]
    fn inserts_into_a_flow_list_before_the_bracket() {
        let text = "jobs:\n  train:\n    env: [A=1, \"B=2\"]\n";
        assert_eq!(
            add(text, "NCCL_IB_HCA=mlx5").unwrap(),
            "jobs:\n  train:\n    env: [A=1, \"B=2\", NCCL_IB_HCA=mlx5]\n"
        );
        // A comma in the value needs quotes inside `[...]`.
        assert_eq!(
            add(text, "NCCL_IB_HCA=mlx5_0,mlx5_1").unwrap(),
            "jobs:\n  train:\n    env: [A=1, \"B=2\", \"NCCL_IB_HCA=mlx5_0,mlx5_1\"]\n"
        );
        let text = "jobs:\n  train:\n    env: []\n";
        assert_eq!(
            add(text, "X=1").unwrap(),
            "jobs:\n  train:\n    env: [X=1]\n"
        );
    }

    #[test]
    fn adds_an_env_key_at_the_body_indentation() {
        let text = "jobs:\n  train:\n    image: {uri: docker://x:1}\n    resource:\n      devices:\n        nvidia.com/gpu: 4\nvolumes: {}\n";
        assert_eq!(
            add(text, "NCCL_IB_HCA=mlx5").unwrap(),
            "jobs:\n  train:\n    image: {uri: docker://x:1}\n    resource:\n      devices:\n        nvidia.com/gpu: 4\n    env:\n      - NCCL_IB_HCA=mlx5\nvolumes: {}\n"
        );
        // After a literal script, whose last line is the last line of the job.
        let text =
            "jobs:\n  train:\n    script: |\n      #!/bin/sh\n      echo hi\n\n  other: {}\n";
        assert_eq!(
            add(text, "X=1").unwrap(),
            "jobs:\n  train:\n    script: |\n      #!/bin/sh\n      echo hi\n    env:\n      - X=1\n\n  other: {}\n"
        );
        // A `|+` script keeps its trailing lines: nothing can follow it safely.
        assert!(add("jobs:\n  train:\n    script: |+\n      echo hi\n\n", "X=1").is_none());
        // Flow body.
        assert_eq!(
            add("jobs:\n  train: {image: x}\n", "X=1").unwrap(),
            "jobs:\n  train: {image: x, env: [X=1]}\n"
        );
    }

    #[test]
    fn refuses_aliases_and_mappings() {
        assert!(add("jobs:\n  train:\n    env: {A: 1}\n", "X=1").is_none());
        assert!(add("e: &e [A=1]\njobs:\n  train:\n    env: *e\n", "X=1").is_none());
    }

    #[test]
    fn a_key_merged_from_an_anchor_is_not_written_over() {
        // A new `env:` (or `resource:`, `devices:`) beside `<<: *base` would replace the
        // merged value whole: the merged entries would be lost.
        let text = "base: &base\n  env: [A=1]\n  resource:\n    devices: {nvidia.com/gpu: 4}\njobs:\n  train:\n    <<: *base\n    command: [a]\n";
        assert!(add(text, "X=1").is_none());
        let tree = fuzzfile_syntax::parse(text);
        let train = body(&tree);
        assert!(add_mapping_entry(text, &tree, train, "resource", "{}").is_none());
        assert!(
            add_nested_entry(text, &tree, train, &["resource", "annotations"], "k", "v").is_none()
        );
        // A key the merge does not bring can still be added.
        assert!(add_mapping_entry(text, &tree, train, "cwd", "/w").is_some());
        // Without the merge key, the same job gets its `env`.
        assert!(add(&text.replace("    <<: *base\n", ""), "X=1").is_some());
    }

    #[test]
    fn every_result_parses_and_keeps_the_other_entries() {
        for text in [
            "jobs:\n  train:\n    env:\n      - A=1\n",
            "jobs:\n  train:\n    env: [A=1]\n",
            "jobs:\n  train:\n    command: [a]\n",
            "jobs:\n  train:\n    command:\n    - a\n    - b\n",
        ] {
            let out = add(text, "NCCL_IB_HCA=mlx5_0,mlx5_1").unwrap();
            let a = crate::analyze(&format!("version: v4\n{out}"));
            assert!(a.tree.errors.is_empty(), "{out}");
            let job = &a.model.jobs[0];
            assert!(
                job.env
                    .iter()
                    .any(|e| e.name == "NCCL_IB_HCA" && e.value == "mlx5_0,mlx5_1"),
                "{out}"
            );
        }
    }

    #[test]
    fn nested_entries_create_missing_mappings() {
        let run = |text: &str| {
            let tree = fuzzfile_syntax::parse(text);
            let e = add_nested_entry(
                text,
                &tree,
                body(&tree),
                &["resource", "annotations"],
                "nvidia.com/gpu.product",
                "GB200",
            )
            .unwrap();
            fuzzfile_diagnostics::apply_edits(text, [&e])
        };
        assert_eq!(
            run("jobs:\n  train:\n    resource:\n      annotations:\n        a: b\n"),
            "jobs:\n  train:\n    resource:\n      annotations:\n        a: b\n        nvidia.com/gpu.product: GB200\n"
        );
        assert_eq!(
            run("jobs:\n  train:\n    resource:\n      devices: {nvidia.com/gpu: 4}\n"),
            "jobs:\n  train:\n    resource:\n      devices: {nvidia.com/gpu: 4}\n      annotations: {nvidia.com/gpu.product: GB200}\n"
        );
        assert_eq!(
            run("jobs:\n  train:\n    image: x\n"),
            "jobs:\n  train:\n    image: x\n    resource: {annotations: {nvidia.com/gpu.product: GB200}}\n"
        );
    }

    #[test]
    fn deletes_list_items() {
        let run = |text: &str, i: usize| {
            let tree = fuzzfile_syntax::parse(text);
            let seq = tree.get(tree.root().unwrap(), "c").unwrap().value;
            let e = delete_sequence_item(text, &tree, seq, i).unwrap();
            fuzzfile_diagnostics::apply_edits(text, [&e])
        };
        assert_eq!(run("c: [a, --use-env, b]\n", 1), "c: [a, b]\n");
        assert_eq!(run("c: [a, b]\n", 0), "c: [b]\n");
        assert_eq!(
            run("c:\n  - a\n  - --use-env\n  - b\n", 1),
            "c:\n  - a\n  - b\n"
        );
    }

    #[test]
    fn scalars_are_quoted_only_when_needed() {
        assert_eq!(yaml_scalar("NCCL_IB_HCA=mlx5", false), "NCCL_IB_HCA=mlx5");
        assert_eq!(yaml_scalar("a,b", false), "a,b");
        assert_eq!(yaml_scalar("a,b", true), "\"a,b\"");
        assert_eq!(yaml_scalar("true", false), "\"true\"");
        assert_eq!(yaml_scalar("-x", false), "\"-x\"");
        assert_eq!(yaml_scalar("a: b", false), "\"a: b\"");
    }
}
