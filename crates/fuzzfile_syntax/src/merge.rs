//! YAML merge keys (`<<: *defaults`, `<<: [*a, *b]`), as Go's `yaml.v3` (Fuzzball's decoder)
//! applies them: the merge type of YAML 1.1 (<https://yaml.org/type/merge.html>), which
//! `yaml.v3` still honours (`decode.go`: `isMerge`, `(*decoder).merge`).
//!
//! - A key `<<` (plain, untagged, `!` or `!!merge`) whose value is a mapping, an alias of a
//!   mapping, or a list of those, adds the entries of those mappings to the mapping holding it.
//! - Keys written in the mapping itself win over merged ones, wherever `<<` stands; of several
//!   merged mappings, the earlier one in the list wins; a merged mapping's own keys win over
//!   what it merges in turn.
//! - The merge is shallow: a key written in the mapping replaces the merged value whole.
//! - `yaml.v3` refuses any other value ("map merge requires map or sequence of maps as the
//!   value"): an alias of a list, a scalar, a list holding a scalar. [`Tree::merge_problem`]
//!   says so; [`Tree::merged_entries`] leaves such sources out.
//! - Of two `<<` keys in one mapping `yaml.v3` keeps the last (and reports the duplicate key).
//!
//! Nothing is copied: a merged entry is the anchor's own [`Entry`], so its key and value keep
//! their ranges in the anchor's text. Each mapping is merged at most once per call, so the
//! work of one call is bounded by the size of the tree.

use crate::{Entry, NodeId, NodeKind, Tree};
use std::borrow::Cow;
use std::collections::HashSet;

/// The message of `yaml.v3` for a merge value that is not a mapping or a list of mappings.
pub const MERGE_VALUE_MESSAGE: &str = "map merge requires map or sequence of maps as the value";

impl Tree {
    /// Whether `key` is the merge key `<<`: a plain scalar, untagged or tagged `!` or `!!merge`
    /// (a quoted `"<<"` is an ordinary key, as in `yaml.v3`).
    pub fn is_merge_key(&self, key: NodeId) -> bool {
        let node = self.node(key);
        let NodeKind::Scalar(s) = &node.kind else {
            return false;
        };
        // The length first: every key of every mapping comes here.
        if s.style() != crate::ScalarStyle::Plain
            || s.value_len() != 2
            || self.scalar_of(s).value != "<<"
        {
            return false;
        }
        matches!(
            self.tag(key),
            None | Some("!") | Some("!!merge") | Some("!<tag:yaml.org,2002:merge>")
        )
    }

    /// The entries of the mapping `id` (after aliases) with its merge keys applied: its own
    /// entries in order (without the `<<` entries), then the merged entries whose keys it does
    /// not already have. Borrowed when the mapping has no merge key. `None` when `id` is not a
    /// mapping.
    pub fn merged_entries(&self, id: NodeId) -> Option<Cow<'_, [Entry]>> {
        let rid = self.resolve(id);
        let entries = self.entries(rid)?;
        if !entries.iter().any(|e| self.is_merge_key(e.key)) {
            return Some(Cow::Borrowed(entries));
        }
        let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
        let mut seen: HashSet<&str> = HashSet::new();
        let mut visited: HashSet<NodeId> = HashSet::new();
        visited.insert(rid);
        // The mapping's own entries all stay (a duplicate key is reported elsewhere).
        for e in entries {
            if self.is_merge_key(e.key) {
                continue;
            }
            if let Some(k) = self.text(e.key) {
                seen.insert(k);
            }
            out.push(*e);
        }
        if let Some(source) = self.merge_value(entries) {
            self.merge_from(source, &mut out, &mut seen, &mut visited);
        }
        Some(Cow::Owned(out))
    }

    /// Look up `key` in the mapping `id` with its merge keys applied: the entry written in the
    /// mapping, else the merged one that wins.
    pub fn get_merged(&self, id: NodeId, key: &str) -> Option<Entry> {
        self.merged_entries(id)?
            .iter()
            .copied()
            .find(|e| self.text(e.key) == Some(key))
    }

    /// What is wrong with the value of a merge key, in `yaml.v3`'s words, with the node at
    /// fault (the value, or the list item). `None` for a mapping, an alias of a mapping, or a
    /// list of those.
    pub fn merge_problem(&self, value: NodeId) -> Option<(NodeId, &'static str)> {
        let is_mapping = |id: NodeId| matches!(self.node(id).kind, NodeKind::Mapping { .. });
        match &self.node(value).kind {
            NodeKind::Mapping { .. } => None,
            NodeKind::Alias { target: None, .. } => None,
            NodeKind::Alias { .. } => {
                (!is_mapping(self.resolve(value))).then_some((value, MERGE_VALUE_MESSAGE))
            }
            NodeKind::Sequence { items, .. } => items.iter().find_map(|&item| {
                let ok = match &self.node(item).kind {
                    NodeKind::Mapping { .. } => true,
                    NodeKind::Alias { target: None, .. } => true,
                    NodeKind::Alias { .. } => is_mapping(self.resolve(item)),
                    _ => false,
                };
                (!ok).then_some((item, MERGE_VALUE_MESSAGE))
            }),
            NodeKind::Scalar(_) => Some((value, MERGE_VALUE_MESSAGE)),
        }
    }

    /// The value of the last merge key among `entries`.
    fn merge_value(&self, entries: &[Entry]) -> Option<NodeId> {
        entries
            .iter()
            .rev()
            .find(|e| self.is_merge_key(e.key))
            .map(|e| e.value)
    }

    /// Push onto `stack`, in reverse, the mappings the merge value `source` names, so that
    /// they are popped in order. A value `yaml.v3` refuses brings nothing (a list brings its
    /// mappings).
    fn push_sources(&self, source: NodeId, stack: &mut Vec<NodeId>) {
        let mapping = |id: NodeId| {
            let r = self.resolve(id);
            matches!(self.node(r).kind, NodeKind::Mapping { .. }).then_some(r)
        };
        match &self.node(source).kind {
            NodeKind::Sequence { items, .. } => {
                stack.extend(items.iter().rev().filter_map(|&i| mapping(i)));
            }
            _ => stack.extend(mapping(source)),
        }
    }

    /// Add the entries of the mappings `source` names, depth first (a merged mapping's own
    /// keys, then what it merges, then the next source), each key only the first time.
    /// Iterative: a long chain of merges cannot exhaust the stack.
    fn merge_from<'t>(
        &'t self,
        source: NodeId,
        out: &mut Vec<Entry>,
        seen: &mut HashSet<&'t str>,
        visited: &mut HashSet<NodeId>,
    ) {
        let mut stack = Vec::new();
        self.push_sources(source, &mut stack);
        while let Some(map) = stack.pop() {
            // A mapping merged twice brings nothing new the second time.
            if !visited.insert(map) {
                continue;
            }
            let Some(entries) = self.entries(map) else {
                continue;
            };
            for e in entries {
                if self.is_merge_key(e.key) {
                    continue;
                }
                match self.text(e.key) {
                    Some(k) => {
                        if seen.insert(k) {
                            out.push(*e);
                        }
                    }
                    None => out.push(*e),
                }
            }
            if let Some(next) = self.merge_value(entries) {
                self.push_sources(next, &mut stack);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::{parse, NodeId, Tree};

    /// `key = value` of each merged entry of the mapping at `path`, with the source text of
    /// the value (so where it points is visible).
    fn merged(text: &str, tree: &Tree, path: &[&str]) -> Vec<(String, String)> {
        let mut id = tree.root().unwrap();
        for p in path {
            id = tree.get_merged(id, p).unwrap().value;
        }
        tree.merged_entries(id)
            .unwrap()
            .iter()
            .map(|e| {
                let v = tree.node(tree.resolve(e.value)).range.slice(text);
                (tree.text(e.key).unwrap_or("?").to_owned(), v.to_owned())
            })
            .collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn explicit_keys_win_wherever_the_merge_key_stands() {
        let text = "base: &base\n  cpu: 4\n  mem: 8GiB\n  gpu: 1\nbefore:\n  cpu: 16\n  <<: *base\nafter:\n  <<: *base\n  gpu: 8\n";
        let tree = parse(text);
        assert!(tree.errors.is_empty());
        assert_eq!(
            merged(text, &tree, &["before"]),
            pairs(&[("cpu", "16"), ("mem", "8GiB"), ("gpu", "1")])
        );
        assert_eq!(
            merged(text, &tree, &["after"]),
            pairs(&[("gpu", "8"), ("cpu", "4"), ("mem", "8GiB")])
        );
        // A merged value is the anchor's own node: its range is in the anchor's text.
        let after = tree.get(tree.root().unwrap(), "after").unwrap().value;
        let mem = tree.get_merged(after, "mem").unwrap();
        assert_eq!(mem.value, {
            let base = tree.get(tree.root().unwrap(), "base").unwrap().value;
            tree.get(base, "mem").unwrap().value
        });
        assert_eq!(
            tree.node(mem.key).range.start as usize,
            text.find("mem").unwrap()
        );
        // The raw view is unchanged.
        assert!(tree.get(after, "mem").is_none());
        assert!(tree.get(after, "<<").is_some());
    }

    #[test]
    fn earlier_mappings_of_a_list_win_and_merges_nest() {
        // The example of https://yaml.org/type/merge.html, in its four forms.
        let text = "- &CENTER { x: 1, y: 2 }\n- &LEFT { x: 0, y: 2 }\n- &BIG { r: 10 }\n- &SMALL { r: 1 }\n- x: 1\n  y: 2\n  r: 10\n  label: center/big\n- << : *CENTER\n  r: 10\n  label: center/big\n- << : [ *CENTER, *BIG ]\n  label: center/big\n- << : [ *BIG, *LEFT, *SMALL ]\n  x: 1\n  label: center/big\n";
        let tree = parse(text);
        assert!(tree.errors.is_empty(), "{:?}", tree.errors);
        let items = tree.items(tree.root().unwrap()).unwrap().to_vec();
        let as_sorted = |id: NodeId| {
            let mut v: Vec<(String, String)> = tree
                .merged_entries(id)
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        tree.text(e.key).unwrap().to_owned(),
                        tree.text(e.value).unwrap().to_owned(),
                    )
                })
                .collect();
            v.sort();
            v
        };
        let expected = as_sorted(items[4]);
        assert_eq!(expected.len(), 4);
        for &i in &items[5..] {
            assert_eq!(as_sorted(i), expected);
        }

        // A merged mapping's own keys win over what it merges; its merges apply too.
        let text = "a: &a {k: a, only_a: 1}\nb: &b {<<: *a, k: b}\nc: {<<: [*b, *a], own: 1}\n";
        let tree = parse(text);
        assert_eq!(
            merged(text, &tree, &["c"]),
            pairs(&[("own", "1"), ("k", "b"), ("only_a", "1")])
        );
    }

    #[test]
    fn what_yaml_v3_refuses_is_a_problem_and_brings_nothing() {
        let text = "l: &l [1, 2]\nm: &m {k: 1}\na: {<<: *l, x: 1}\nb: {<<: 3}\nc: {<<: [*m, 4]}\nd: {<<: [*m, {j: 2}]}\ne: {\"<<\": *m}\nf: {!!merge <<: *m}\n";
        let tree = parse(text);
        assert!(tree.errors.is_empty(), "{:?}", tree.errors);
        let root = tree.root().unwrap();
        let problem = |k: &str| {
            let map = tree.get(root, k).unwrap().value;
            let v = tree.get(map, "<<").unwrap().value;
            tree.merge_problem(v)
                .map(|(at, m)| (tree.node(at).range.slice(text).to_owned(), m))
        };
        let msg = super::MERGE_VALUE_MESSAGE;
        assert_eq!(problem("a"), Some(("*l".into(), msg)));
        assert_eq!(problem("b"), Some(("3".into(), msg)));
        assert_eq!(problem("c"), Some(("4".into(), msg)));
        assert_eq!(problem("d"), None);
        assert_eq!(merged(text, &tree, &["a"]), pairs(&[("x", "1")]));
        assert_eq!(merged(text, &tree, &["c"]), pairs(&[("k", "1")]));
        assert_eq!(
            merged(text, &tree, &["d"]),
            pairs(&[("k", "1"), ("j", "2")])
        );
        // A quoted `"<<"` is an ordinary key; `!!merge <<` is the merge key.
        assert_eq!(merged(text, &tree, &["e"]), pairs(&[("<<", "{k: 1}")]));
        assert_eq!(merged(text, &tree, &["f"]), pairs(&[("k", "1")]));
    }

    /// The idiom of Kubernetes GPU pod specs (an nccl-tests MPIJob worker, as published in
    /// NVIDIA and cloud guides): `requests: &resources {...}` then `limits: {<<: *resources}`.
    #[test]
    fn kubernetes_limits_merged_from_requests() {
        let text = "resources:\n  requests: &resources\n    nvidia.com/rail-1: \"1\"\n    nvidia.com/gpu: 8\n  limits:\n    <<: *resources\n";
        let tree = parse(text);
        assert!(tree.errors.is_empty(), "{:?}", tree.errors);
        assert_eq!(
            merged(text, &tree, &["resources", "limits"]),
            pairs(&[("nvidia.com/rail-1", "\"1\""), ("nvidia.com/gpu", "8")])
        );
        let root = tree.root().unwrap();
        let limits = tree.get_merged(tree.get(root, "resources").unwrap().value, "limits");
        let gpu = tree
            .get_merged(limits.unwrap().value, "nvidia.com/gpu")
            .unwrap();
        // The value is the one written under `requests`.
        assert_eq!(
            tree.node(gpu.value).range.start as usize,
            text.find("gpu: 8").unwrap() + "gpu: ".len()
        );
    }

    #[test]
    fn a_mapping_that_merges_itself_or_an_unknown_anchor_is_read_as_written() {
        for text in [
            "a: &a {k: 1, <<: *a}\n",
            "a: &a {k: 1, <<: [*a, *a]}\n",
            "a: {k: 1, <<: *nowhere}\n",
        ] {
            let tree = parse(text);
            crate::invariants::check_invariants(text, &tree).unwrap();
            assert_eq!(merged(text, &tree, &["a"]), pairs(&[("k", "1")]), "{text}");
        }
    }

    #[test]
    fn a_long_chain_of_merges_is_linear_and_keeps_the_stack() {
        let n = 20_000;
        let mut text = String::from("m0: &m0 {k0: 0}\n");
        for i in 1..n {
            text.push_str(&format!("m{i}: &m{i} {{<<: *m{}, k{i}: {i}}}\n", i - 1));
        }
        let tree = parse(&text);
        assert!(tree.errors.is_empty());
        let last = tree
            .get(tree.root().unwrap(), &format!("m{}", n - 1))
            .unwrap()
            .value;
        let start = std::time::Instant::now();
        let entries = tree.merged_entries(last).unwrap();
        assert_eq!(entries.len(), n);
        assert_eq!(
            tree.text(entries[0].key),
            Some(format!("k{}", n - 1).as_str())
        );
        assert_eq!(tree.text(entries[n - 1].key), Some("k0"));
        assert!(start.elapsed().as_secs() < 5);
    }
}
