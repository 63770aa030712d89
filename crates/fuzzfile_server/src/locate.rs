//! Where a cursor is: the path of keys from the top of the file, and the schema place
//! ([`fuzzfile_model::schema::Place`]) of the mapping around it.
//!
//! Two ways to find it. [`at`] walks the syntax tree (exact, for hover, navigation and
//! selection). [`line_context`] reads indentation (for completion): while a key is being typed
//! the line is usually not valid YAML yet (`    comm` with no colon is a syntax error, and
//! recovery blanks the line), so the tree does not know it; indentation does.

use fuzzfile_check::{TextRange, Tree};
use fuzzfile_model::schema::Place;
use fuzzfile_model::Version;
use fuzzfile_syntax::{Entry, NodeId, NodeKind};

/// One step of a path: a mapping key or a sequence item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Item,
}

impl Seg {
    fn as_str(&self) -> &str {
        match self {
            Seg::Key(k) => k,
            Seg::Item => "[]",
        }
    }
}

/// What the syntax tree holds at an offset.
#[derive(Debug, Default)]
pub struct Hit {
    /// Path from the top to the innermost collection holding the cursor.
    pub segs: Vec<Seg>,
    /// The innermost mapping entry the cursor is in, and whether it is on its key.
    pub entry: Option<(Entry, bool)>,
    /// The innermost scalar (key or value) under the cursor.
    pub scalar: Option<NodeId>,
    /// Ranges around the cursor, innermost first (entries, collections, the document).
    pub chain: Vec<TextRange>,
}

/// Walk the tree to `offset`. Aliases are not followed (their own range is what the cursor
/// is on); the walk is iterative and visits one node per level.
pub fn at(tree: &Tree, offset: u32) -> Hit {
    let mut hit = Hit::default();
    let Some(mut id) = tree.root() else {
        return hit;
    };
    let mut chain = vec![tree.node(id).range];
    loop {
        let node = tree.node(id);
        match &node.kind {
            NodeKind::Mapping { entries, .. } => {
                let found = entries.iter().copied().find(|e| {
                    tree.node(e.key).range.touches(offset)
                        || tree.node(e.value).range.touches(offset)
                });
                let Some(e) = found else { break };
                let key_range = tree.node(e.key).range;
                let value_range = tree.node(e.value).range;
                chain.push(key_range.cover(value_range));
                if key_range.touches(offset) {
                    hit.entry = Some((e, true));
                    if matches!(tree.node(e.key).kind, NodeKind::Scalar(_)) {
                        hit.scalar = Some(e.key);
                        chain.push(key_range);
                    }
                    break;
                }
                hit.entry = Some((e, false));
                hit.segs
                    .push(Seg::Key(tree.text(e.key).unwrap_or_default().to_owned()));
                id = e.value;
                chain.push(value_range);
            }
            NodeKind::Sequence { items, .. } => {
                let Some(&item) = items.iter().find(|&&i| tree.node(i).range.touches(offset))
                else {
                    break;
                };
                hit.segs.push(Seg::Item);
                hit.entry = None;
                id = item;
                chain.push(tree.node(item).range);
            }
            NodeKind::Scalar(_) => {
                // The root is entered without a range check: a document that is one scalar
                // after blank lines does not contain an offset before it.
                if node.range.touches(offset) {
                    hit.scalar = Some(id);
                }
                break;
            }
            NodeKind::Alias { .. } => break,
        }
    }
    // A value scalar's segs end with its key; the container is one level up.
    chain.dedup();
    chain.reverse();
    hit.chain = chain;
    hit
}

/// The place of the mapping at `segs` (a path to a mapping), if the schema knows it.
pub fn place_of(segs: &[Seg], version: Option<Version>) -> Option<Place> {
    let s: Vec<&str> = segs.iter().map(Seg::as_str).collect();
    match s.as_slice() {
        [] => Some(Place::Root),
        ["defaults"] => Some(Place::Defaults),
        ["defaults", "job"] => Some(Place::DefaultsJob),
        ["defaults", "job", rest @ ..] => task_place(rest, Place::Job, version),
        ["jobs", name, rest @ ..] if *name != "[]" => {
            if rest.is_empty() {
                Some(Place::Job)
            } else {
                task_place(rest, Place::Job, version)
            }
        }
        ["services", name, rest @ ..] if *name != "[]" => {
            if rest.is_empty() {
                Some(Place::Service)
            } else {
                task_place(rest, Place::Service, version)
            }
        }
        ["volumes", key, rest @ ..] if *key != "[]" => match rest {
            [] => Some(Place::Volume),
            ["ingress" | "egress", "[]"] => Some(Place::Transfer),
            ["ingress" | "egress", "[]", "source" | "destination"] => Some(Place::TransferUri),
            ["ingress" | "egress", "[]", "policy"] => Some(Place::Policy),
            ["ingress" | "egress", "[]", "policy", "timeout"] => Some(Place::Timeout),
            _ => None,
        },
        _ => None,
    }
}

fn task_place(rest: &[&str], task: Place, version: Option<Version>) -> Option<Place> {
    let service = task == Place::Service;
    Some(match rest {
        ["image"] => Place::Image,
        ["resource"] => Place::Resource,
        ["resource", "cpu"] => Place::Cpu,
        ["resource", "memory"] => Place::Memory,
        ["multinode"] => Place::Multinode,
        ["task-array"] => Place::TaskArray,
        ["policy"] => Place::Policy,
        ["policy", "timeout"] => Place::Timeout,
        ["policy", "retry"] => Place::Retry,
        ["depends-on", "[]"] => Place::Dependency,
        ["network"] if service => Place::ServiceNetwork,
        ["network"] => Place::JobNetwork,
        ["network", "ports", "[]"] => Place::Port,
        ["network", "endpoints", "[]"] => Place::Endpoint,
        ["readiness-probe"] => Place::Probe,
        ["readiness-probe", "exec"] => Place::ProbeExec,
        ["readiness-probe", "http-get"] => Place::ProbeHttpGet,
        ["readiness-probe", "http-get", "http-headers", "[]"] => Place::HttpHeader,
        ["readiness-probe", "tcp-socket"] => Place::ProbeTcpSocket,
        ["readiness-probe", "grpc"] => Place::ProbeGrpc,
        ["mounts", _] if version == Some(Version::V1) => Place::MountV1,
        ["mounts", _] => Place::MountV4,
        _ => return None,
    })
}

/// The completion context of a cursor, read from indentation.
#[derive(Debug, PartialEq, Eq)]
pub struct LineContext {
    /// Path to the collection the current line belongs to.
    pub segs: Vec<Seg>,
    /// `key: |`: the key whose value is being typed.
    pub key: Option<String>,
    /// The word being typed, and where it starts.
    pub word: String,
    pub word_start: u32,
    /// The line starts with `- ` (a list item) and has no `key:` before the cursor.
    pub item: bool,
    /// Column (in bytes) where a key on this line starts.
    pub key_col: usize,
}

struct LineShape<'a> {
    /// Columns of the `- ` markers.
    dashes: Vec<usize>,
    /// Column and text of the key, when the line has `key:`.
    key: Option<(usize, &'a str)>,
    /// Column of the first thing after the markers.
    content_col: usize,
}

/// Read a line's shape: list markers, then `key:` (a colon followed by a space or the end).
fn shape(line: &str) -> Option<LineShape<'_>> {
    let bytes = line.as_bytes();
    let mut i = bytes.iter().take_while(|&&b| b == b' ').count();
    if i >= bytes.len() || bytes[i] == b'#' {
        return None;
    }
    let mut dashes = Vec::new();
    while i < bytes.len() && bytes[i] == b'-' && (i + 1 == bytes.len() || bytes[i + 1] == b' ') {
        dashes.push(i);
        i += 1;
        i += bytes[i..].iter().take_while(|&&b| b == b' ').count();
    }
    let content = line.get(i..).unwrap_or("");
    let key = key_of(content).map(|k| (i, k));
    Some(LineShape {
        dashes,
        key,
        content_col: i,
    })
}

/// The key of `key: ...` / `key:` (plain or quoted), if the text starts with one.
fn key_of(content: &str) -> Option<&str> {
    if content.starts_with(['"', '\'']) {
        let q = content.chars().next()?;
        let end = content[1..].find(q)? + 1;
        let after = &content[end + 1..];
        return (after.starts_with(": ") || after == ":" || after.starts_with(":\t"))
            .then(|| &content[1..end]);
    }
    if content.starts_with(['{', '[', '#', '|', '>']) {
        return None;
    }
    let mut from = 0;
    while let Some(i) = content[from..].find(':') {
        let at = from + i;
        let after = &content[at + 1..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            let k = content[..at].trim_end();
            return (!k.is_empty()).then_some(k);
        }
        from = at + 1;
    }
    None
}

#[derive(Clone, Copy)]
enum Anchor {
    Key(usize),
    Dash(usize),
}

/// The completion context at `offset`, from the lines above it.
pub fn line_context(text: &str, index: &fuzzfile_check::LineIndex, offset: u32) -> LineContext {
    let line_no = index.line_of(offset);
    let line_start = index.line_start(line_no) as usize;
    let offset = (offset as usize).min(text.len()).max(line_start);
    let before = text.get(line_start..offset).unwrap_or("");
    let word_len = before
        .bytes()
        .rev()
        .take_while(|b| !matches!(b, b' ' | b'\t' | b'[' | b',' | b'{' | b'"' | b'\'' | b'$'))
        .count();
    let word_start = offset - word_len;
    let word = before[before.len() - word_len..].to_owned();

    let mut rev: Vec<Seg> = Vec::new();
    let (mut anchor, key, item, key_col) = match shape(before) {
        Some(sh) => {
            let key = sh.key.map(|(_, k)| k.to_owned());
            let item = !sh.dashes.is_empty() && key.is_none();
            for _ in &sh.dashes {
                rev.push(Seg::Item);
            }
            let anchor = match sh.dashes.first() {
                Some(&d) => Anchor::Dash(d),
                None => Anchor::Key(sh.content_col),
            };
            (anchor, key, item, sh.content_col)
        }
        None => {
            let col = before.len() - before.trim_start_matches(' ').len();
            (Anchor::Key(col), None, false, col)
        }
    };
    let mut l = line_no;
    while l > 0 {
        if matches!(anchor, Anchor::Key(0)) {
            break;
        }
        l -= 1;
        let r = index.line_range(text, l);
        let Some(sh) = shape(r.slice(text)) else {
            continue;
        };
        let first_dash = sh.dashes.first().copied();
        match anchor {
            Anchor::Key(x) => match sh.key {
                Some((kc, _)) if kc == x && !sh.dashes.is_empty() => {
                    for _ in &sh.dashes {
                        rev.push(Seg::Item);
                    }
                    anchor = Anchor::Dash(first_dash.unwrap_or(0));
                }
                Some((kc, k)) if kc < x => {
                    rev.push(Seg::Key(k.to_owned()));
                    for _ in &sh.dashes {
                        rev.push(Seg::Item);
                    }
                    anchor = match first_dash {
                        Some(d) => Anchor::Dash(d),
                        None => Anchor::Key(kc),
                    };
                }
                Some(_) => {}
                None => {
                    if let Some(d) = first_dash {
                        if d < x && sh.content_col == x {
                            for _ in &sh.dashes {
                                rev.push(Seg::Item);
                            }
                            anchor = Anchor::Dash(d);
                        }
                    }
                }
            },
            Anchor::Dash(d0) => {
                if first_dash == Some(d0) {
                    continue;
                }
                match sh.key {
                    Some((kc, k)) if kc <= d0 && first_dash.is_none_or(|d| d < d0) => {
                        rev.push(Seg::Key(k.to_owned()));
                        for _ in &sh.dashes {
                            rev.push(Seg::Item);
                        }
                        anchor = match first_dash {
                            Some(d) => Anchor::Dash(d),
                            None => Anchor::Key(kc),
                        };
                    }
                    _ => {
                        if let Some(d) = first_dash {
                            if d < d0 && sh.key.is_none() {
                                rev.push(Seg::Item);
                                anchor = Anchor::Dash(d);
                            }
                        }
                    }
                }
            }
        }
    }
    rev.reverse();
    LineContext {
        segs: rev,
        key,
        word,
        word_start: u32::try_from(word_start).unwrap_or(u32::MAX),
        item,
        key_col,
    }
}

/// The byte range of the run of `is_word` characters around `offset` inside `node`, if it is
/// not empty (`offset` is clamped into the node).
pub(crate) fn word_around(
    text: &str,
    node: TextRange,
    offset: u32,
    is_word: impl Fn(char) -> bool,
) -> Option<(usize, usize)> {
    let lo = node.start as usize;
    let hi = (node.end as usize).min(text.len());
    let at = (offset as usize).clamp(lo, hi);
    let before = text.get(lo..at)?;
    let after = text.get(at..hi)?;
    let start = at
        - before
            .chars()
            .rev()
            .take_while(|&c| is_word(c))
            .map(char::len_utf8)
            .sum::<usize>();
    let end = at
        + after
            .chars()
            .take_while(|&c| is_word(c))
            .map(char::len_utf8)
            .sum::<usize>();
    (start < end).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuzzfile_check::LineIndex;

    fn ctx(src: &str) -> LineContext {
        let at = src.find('|').expect("cursor");
        let text = src.replace('|', "");
        let index = LineIndex::new(&text);
        line_context(&text, &index, at as u32)
    }
    fn keys(segs: &[Seg]) -> Vec<&str> {
        segs.iter().map(Seg::as_str).collect()
    }

    #[test]
    fn indentation_gives_the_path_even_in_broken_yaml() {
        let c = ctx("version: v4\njobs:\n  a:\n    image: {uri: x}\n    resource:\n      cpu:\n        cores: 2\n      mem|\n");
        assert_eq!(keys(&c.segs), ["jobs", "a", "resource"]);
        assert_eq!(c.word, "mem");
        assert_eq!(c.key, None);
        let c = ctx("jobs:\n  a:\n    multinode:\n      implementation: ge|\n");
        assert_eq!(keys(&c.segs), ["jobs", "a", "multinode"]);
        assert_eq!(c.key.as_deref(), Some("implementation"));
        assert_eq!(c.word, "ge");
    }

    #[test]
    fn list_items_and_compact_sequences() {
        let c = ctx("jobs:\n  a:\n    depends-on:\n      - name: b\n        status: FINISHED\n      - name: |\n");
        assert_eq!(keys(&c.segs), ["jobs", "a", "depends-on", "[]"]);
        assert_eq!(c.key.as_deref(), Some("name"));
        let c = ctx("jobs:\n  a:\n    depends-on:\n    - name: b\n      sta|\n");
        assert_eq!(keys(&c.segs), ["jobs", "a", "depends-on", "[]"]);
        let c = ctx("jobs:\n  a:\n    env:\n      - A=1\n      - NCCL_|\n");
        assert_eq!(keys(&c.segs), ["jobs", "a", "env", "[]"]);
        assert!(c.item);
        assert_eq!(c.word, "NCCL_");
        let c = ctx("jobs:\n  a:\n    requires: [b, |\n");
        assert_eq!(keys(&c.segs), ["jobs", "a"]);
        assert_eq!(c.key.as_deref(), Some("requires"));
        assert_eq!(c.word, "");
    }

    #[test]
    fn block_scalars_of_siblings_do_not_confuse_the_walk() {
        let c = ctx("jobs:\n  a:\n    script: |\n      #!/bin/sh\n      x: y\n    po|\n");
        assert_eq!(keys(&c.segs), ["jobs", "a"]);
        let c = ctx("ver|");
        assert!(c.segs.is_empty());
        assert_eq!(place_of(&c.segs, None), Some(Place::Root));
    }

    #[test]
    fn places() {
        let k = |v: &[&str]| -> Vec<Seg> {
            v.iter()
                .map(|s| {
                    if *s == "[]" {
                        Seg::Item
                    } else {
                        Seg::Key((*s).into())
                    }
                })
                .collect()
        };
        assert_eq!(
            place_of(&k(&["jobs", "a", "resource", "cpu"]), None),
            Some(Place::Cpu)
        );
        assert_eq!(
            place_of(&k(&["services", "s", "network"]), None),
            Some(Place::ServiceNetwork)
        );
        assert_eq!(
            place_of(&k(&["jobs", "a", "mounts", "/d"]), Some(Version::V1)),
            Some(Place::MountV1)
        );
        assert_eq!(
            place_of(&k(&["volumes", "v", "ingress", "[]", "source"]), None),
            Some(Place::TransferUri)
        );
        assert_eq!(
            place_of(&k(&["defaults", "job", "resource"]), None),
            Some(Place::Resource)
        );
        assert_eq!(place_of(&k(&["jobs", "[]"]), None), None);
    }

    /// Every place of the schema is reached by some path, so hover and completion know the
    /// keys of every place.
    #[test]
    fn every_schema_place_has_a_path() {
        let paths: &[(&str, Option<Version>)] = &[
            ("", None),
            ("defaults", None),
            ("defaults job", None),
            ("jobs a", None),
            ("services s", None),
            ("jobs a image", None),
            ("jobs a resource", None),
            ("jobs a resource cpu", None),
            ("jobs a resource memory", None),
            ("jobs a multinode", None),
            ("jobs a task-array", None),
            ("jobs a policy", None),
            ("jobs a policy timeout", None),
            ("jobs a policy retry", None),
            ("jobs a depends-on []", None),
            ("jobs a network", None),
            ("services s network", None),
            ("services s network ports []", None),
            ("services s network endpoints []", None),
            ("services s readiness-probe", None),
            ("services s readiness-probe exec", None),
            ("services s readiness-probe http-get", None),
            ("services s readiness-probe tcp-socket", None),
            ("services s readiness-probe grpc", None),
            ("services s readiness-probe http-get http-headers []", None),
            ("volumes v", None),
            ("volumes v ingress []", None),
            ("volumes v egress [] destination", None),
            ("jobs a mounts data", Some(Version::V1)),
            ("jobs a mounts /data", Some(Version::V4)),
        ];
        let mut reached = Vec::new();
        for (p, v) in paths {
            let segs: Vec<Seg> = p
                .split_whitespace()
                .map(|s| {
                    if s == "[]" {
                        Seg::Item
                    } else {
                        Seg::Key(s.into())
                    }
                })
                .collect();
            reached.push(place_of(&segs, *v).unwrap_or_else(|| panic!("{p}")));
        }
        for place in fuzzfile_model::schema::ALL_PLACES {
            assert!(reached.contains(place), "{place:?} is reached by no path");
        }
    }

    #[test]
    fn tree_walk_finds_keys_values_and_items() {
        let text = "jobs:\n  a:\n    requires: [b]\n    env:\n      - X=1\n";
        let tree = fuzzfile_syntax::parse(text);
        let h = at(&tree, text.find("requires").unwrap_or(0) as u32 + 2);
        assert_eq!(keys(&h.segs), ["jobs", "a"]);
        assert!(matches!(h.entry, Some((_, true))));
        let h = at(&tree, text.find("b]").unwrap_or(0) as u32);
        assert_eq!(keys(&h.segs), ["jobs", "a", "requires", "[]"]);
        assert!(h.scalar.is_some());
        let h = at(&tree, text.find("X=").unwrap_or(0) as u32);
        assert_eq!(keys(&h.segs), ["jobs", "a", "env", "[]"]);
        assert!(h.chain.len() >= 5, "{:?}", h.chain);
        assert!(h
            .chain
            .windows(2)
            .all(|w| w[1].start <= w[0].start && w[0].end <= w[1].end));
    }
}
