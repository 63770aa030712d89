//! YAML 1.2 text → span tree.
//!
//! [`parse`] turns a Fuzzfile's text into a [`Tree`]: every mapping key, value, sequence item
//! and scalar is a [`Node`] with its byte range in the original text. Scalars keep their style,
//! their decoded value and an [`OffsetMap`] from decoded bytes back to source bytes, so a later
//! layer can point at one word inside a folded shell command. Comments are kept.
//!
//! Invariants:
//! - never panics and never fails: the result is always a tree (possibly empty) plus syntax
//!   errors;
//! - aliases are nodes that refer to their anchor by [`NodeId`]; nothing is copied, so an alias
//!   bomb costs one node per alias;
//! - YAML merge keys (`<<: *defaults`) are applied on reading, not in the tree:
//!   [`Tree::merged_entries`] and [`Tree::get_merged`] give a mapping's entries as Fuzzball's
//!   decoder sees them, each merged entry with its ranges in the anchor's text;
//! - input size and nesting depth are bounded ([`Limits`]), with a clear error when exceeded;
//! - after a syntax error the offending lines are blanked (same byte length, so ranges stay
//!   valid) and the text is parsed again, so one typo does not hide the rest of the file;
//! - no I/O.

mod debug;
mod decode;
#[doc(hidden)]
pub mod differential;
mod fast;
#[doc(hidden)]
pub mod invariants;
mod merge;
mod parse;
mod recovery;

pub use debug::debug_tree;
use decode::MapData;
pub use decode::OffsetMap;
pub use fuzzfile_diagnostics::TextRange;
pub use merge::MERGE_VALUE_MESSAGE;
#[doc(hidden)]
pub use parse::{
    fast_path_bail_line, parse_fast, parse_fast_with_limits, parse_reference,
    parse_reference_with_limits,
};
pub use parse::{parse, parse_bytes, parse_owned_bytes, parse_with_limits, Limits};
use std::collections::BTreeMap;

/// Index of a node in its [`Tree`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// How a scalar was written.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    /// `|` block.
    Literal,
    /// `>` block.
    Folded,
}

impl ScalarStyle {
    pub fn is_block(self) -> bool {
        matches!(self, ScalarStyle::Literal | ScalarStyle::Folded)
    }
    pub fn is_quoted(self) -> bool {
        matches!(self, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted)
    }
}

/// Block (`key: value` on lines) or flow (`{...}` / `[...]`) notation of a collection.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CollectionStyle {
    Block,
    Flow,
}

/// A scalar as the tree stores it: its decoded value is a range of the tree's one value buffer
/// and its offset map's base is inline; the map's segments (only for scalars the source spells
/// differently: escapes, folded lines, block scalars) are in a side table of the tree. Read it
/// through [`Tree::scalar`] or [`Tree::scalar_of`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarNode {
    value_start: u32,
    value_len: u32,
    map_base: u32,
    style: ScalarStyle,
    map_exact: bool,
    /// The map has segments, under `value_start` in [`Tree`]'s segment table (only scalars with
    /// a non-empty value have any: an empty value maps to the base either way).
    map_has_segments: bool,
}

impl ScalarNode {
    pub fn style(&self) -> ScalarStyle {
        self.style
    }
    /// Length in bytes of the decoded value.
    pub fn value_len(&self) -> usize {
        self.value_len as usize
    }
}

/// An offset map's `(decoded, source, synthesized source length)` segments.
type Segments = Box<[(u32, u32, u32)]>;

/// A scalar: its decoded value, style and offset map, borrowed from the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar<'a> {
    /// The value after YAML escape processing and line folding.
    pub value: &'a str,
    pub style: ScalarStyle,
    /// Decoded byte offset → source byte offset.
    pub map: OffsetMap<'a>,
}

/// One `key: value` pair of a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: NodeId,
    pub value: NodeId,
}

#[derive(Clone, Debug)]
pub enum NodeKind {
    Scalar(ScalarNode),
    /// Items and entries are boxed slices: exact size, no spare capacity.
    Sequence {
        style: CollectionStyle,
        items: Box<[NodeId]>,
    },
    Mapping {
        style: CollectionStyle,
        entries: Box<[Entry]>,
    },
    /// `*name` ([`Tree::alias_name`]); `target` is the anchored node, `None` when no anchor of
    /// that name precedes it.
    Alias {
        target: Option<NodeId>,
    },
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    /// Byte range of the node in the source: a scalar including its quotes or block header,
    /// a collection from its first to its last byte.
    pub range: TextRange,
}

// Every node of a big file pays for these sizes (a 50 MB Fuzzfile has about 5 million nodes, and
// the node vector is most of the analysis's peak memory): a field that makes them grow fails the
// build here instead of showing only as a bigger run. 64-bit targets; a node was 136 bytes with
// its anchor, tag and map segments inline, 96 with them boxed and a `String` per scalar value,
// 40 with the values in one buffer and anchors, tags and alias names in side tables, NODE_SIZE
// with the map segments in a side table too.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<Node>() <= NODE_SIZE);
    assert!(std::mem::size_of::<ScalarNode>() <= 16);
    assert!(std::mem::size_of::<OffsetMap>() <= 32);
};
#[cfg(target_pointer_width = "64")]
const NODE_SIZE: usize = 32;

/// A `# comment`: `range` covers `#` to the end of the line (without the line break).
#[derive(Clone, Debug)]
pub struct Comment {
    pub range: TextRange,
    /// Text after `#`.
    pub text: String,
}

/// A YAML syntax problem. `range` starts where the problem starts (for an unclosed `[` or
/// quote: at the opening character).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub range: TextRange,
    pub message: String,
    /// Where the parser noticed it, when that differs from `range` (a `:` after an unclosed `[`).
    pub detected_at: Option<TextRange>,
    /// Advice for the reader.
    pub help: Option<String>,
}

/// The result of parsing one text.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    nodes: Vec<Node>,
    root: Option<NodeId>,
    /// Every scalar's decoded value, one after another: one buffer instead of a `String` per
    /// scalar.
    values: String,
    /// `&name` defined on a node, with the range of the `&name` token (few nodes have one).
    anchors: BTreeMap<NodeId, (Box<str>, TextRange)>,
    /// Explicit tags as written (`!!str`).
    tags: BTreeMap<NodeId, Box<str>>,
    /// The names of alias nodes (`*name` without the `*`).
    alias_names: BTreeMap<NodeId, Box<str>>,
    /// Offset map segments of the scalars that have them, by the start of their value in
    /// `values` (increasing: scalars are added in order, and only non-empty values have
    /// segments, so no two share a start).
    segments: Vec<(u32, Segments)>,
    pub comments: Vec<Comment>,
    pub errors: Vec<SyntaxError>,
    /// The text started with a UTF-8 byte order mark (its 3 bytes stay part of the offsets).
    pub has_bom: bool,
    /// Lines that were blanked to recover from syntax errors (0-based).
    pub blanked_lines: Vec<u32>,
}

/// What a plain scalar means under the YAML 1.2 core schema.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum CoreValue<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

impl Tree {
    pub fn root(&self) -> Option<NodeId> {
        self.root
    }
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (NodeId(i as u32), n))
    }

    /// Follow aliases to the node they stand for. Alias chains cannot loop (an alias refers
    /// only to an anchor defined before it), but the walk is bounded anyway.
    pub fn resolve(&self, mut id: NodeId) -> NodeId {
        for _ in 0..64 {
            match &self.node(id).kind {
                NodeKind::Alias {
                    target: Some(t), ..
                } => id = *t,
                _ => return id,
            }
        }
        id
    }

    /// The scalar behind `id` (after aliases), if it is one.
    pub fn scalar(&self, id: NodeId) -> Option<Scalar<'_>> {
        match &self.node(self.resolve(id)).kind {
            NodeKind::Scalar(s) => Some(self.scalar_of(s)),
            _ => None,
        }
    }

    /// The value, style and offset map of a scalar node of this tree.
    pub fn scalar_of<'a>(&'a self, s: &'a ScalarNode) -> Scalar<'a> {
        let start = s.value_start as usize;
        let value = self
            .values
            .get(start..start + s.value_len as usize)
            .unwrap_or("");
        let segments: &[(u32, u32, u32)] = if s.map_has_segments {
            match self
                .segments
                .binary_search_by_key(&s.value_start, |(start, _)| *start)
            {
                Ok(i) => &self.segments[i].1,
                Err(_) => &[],
            }
        } else {
            &[]
        };
        Scalar {
            value,
            style: s.style,
            map: OffsetMap::from_parts(s.map_base, segments, s.value_len, s.map_exact),
        }
    }

    /// The anchor `&name` defined on node `id` and the range of the `&name` token.
    pub fn anchor(&self, id: NodeId) -> Option<(&str, TextRange)> {
        self.anchors.get(&id).map(|(name, range)| (&**name, *range))
    }

    /// The nodes that define an anchor (`&name`), in node order.
    pub fn anchored_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.anchors.keys().copied()
    }

    /// The explicit tag of node `id` as written (`!!str`).
    pub fn tag(&self, id: NodeId) -> Option<&str> {
        self.tags.get(&id).map(|t| &**t)
    }

    /// The nodes with an explicit tag and their tags, in node order.
    pub fn tagged_nodes(&self) -> impl Iterator<Item = (NodeId, &str)> {
        self.tags.iter().map(|(id, t)| (*id, &**t))
    }

    /// The name of alias node `id` (`*name` without the `*`).
    pub fn alias_name(&self, id: NodeId) -> Option<&str> {
        self.alias_names.get(&id).map(|t| &**t)
    }

    pub fn entries(&self, id: NodeId) -> Option<&[Entry]> {
        match &self.node(self.resolve(id)).kind {
            NodeKind::Mapping { entries, .. } => Some(entries),
            _ => None,
        }
    }

    pub fn items(&self, id: NodeId) -> Option<&[NodeId]> {
        match &self.node(self.resolve(id)).kind {
            NodeKind::Sequence { items, .. } => Some(items),
            _ => None,
        }
    }

    /// The decoded text of a scalar key or value.
    pub fn text(&self, id: NodeId) -> Option<&str> {
        self.scalar(id).map(|s| s.value)
    }

    /// Look up `key` in the mapping `id`: the first entry whose key is a scalar equal to `key`.
    pub fn get(&self, id: NodeId, key: &str) -> Option<Entry> {
        self.entries(id)?
            .iter()
            .copied()
            .find(|e| self.text(e.key) == Some(key))
    }

    /// Whether the node is an empty or `null`/`~` plain scalar (a key with nothing after it).
    pub fn is_null(&self, id: NodeId) -> bool {
        matches!(self.core_value(id), Some(CoreValue::Null))
    }

    /// Resolve a scalar with the YAML 1.2 core schema. Quoted and block scalars, and scalars
    /// tagged `!!str` (or the non-specific `!`), are strings. A core tag (`!!int`, `!!float`,
    /// `!!bool`, `!!null`) decides the type when the content matches it, quoted or not
    /// (`!!int "12"` is 12, `!!float 1` is 1.0); when it does not (`!!int hi`), the value
    /// resolves as if untagged and [`Tree::tag_mismatch`] says what is wrong. Other tags
    /// change nothing.
    pub fn core_value(&self, id: NodeId) -> Option<CoreValue<'_>> {
        let rid = self.resolve(id);
        let node = self.node(rid);
        let NodeKind::Scalar(s) = &node.kind else {
            return None;
        };
        let s = self.scalar_of(s);
        match self.tag(rid).map(core_tag) {
            Some(Some(CoreTag::Str)) => return Some(CoreValue::Str(s.value)),
            Some(Some(tag @ (CoreTag::Int | CoreTag::Float | CoreTag::Bool | CoreTag::Null))) => {
                match (tag, resolve_core(s.value)) {
                    (CoreTag::Int, v @ CoreValue::Int(_))
                    | (CoreTag::Float, v @ CoreValue::Float(_))
                    | (CoreTag::Bool, v @ CoreValue::Bool(_))
                    | (CoreTag::Null, v @ CoreValue::Null) => return Some(v),
                    (CoreTag::Float, CoreValue::Int(i)) => return Some(CoreValue::Float(i as f64)),
                    _ => {}
                }
            }
            _ => {}
        }
        if s.style != ScalarStyle::Plain {
            return Some(CoreValue::Str(s.value));
        }
        if node.range.is_empty() {
            return Some(CoreValue::Null);
        }
        Some(resolve_core(s.value))
    }

    /// What is wrong with node `id`'s explicit core tag, in the words of Go's `yaml.v3` (which
    /// Fuzzball decodes with): a scalar whose content is not of its tag's type (`!!int hi`:
    /// "cannot decode !!str `hi` as a !!int"), or a collection tag on another kind of node.
    /// `None` without a tag, with a matching one, and for tags outside the core schema (see
    /// [`core_tag`]).
    pub fn tag_mismatch(&self, id: NodeId) -> Option<String> {
        let node = self.node(id);
        let tag = core_tag(self.tag(id)?)?;
        let shown = |t: CoreTag| t.as_str();
        match (&node.kind, tag) {
            (NodeKind::Alias { .. }, _) => None,
            (NodeKind::Sequence { .. }, CoreTag::Seq)
            | (NodeKind::Mapping { .. }, CoreTag::Map) => None,
            (NodeKind::Sequence { .. }, t) => Some(format!("a list cannot be a {}", shown(t))),
            (NodeKind::Mapping { .. }, t) => Some(format!("a mapping cannot be a {}", shown(t))),
            (NodeKind::Scalar(s), t) => {
                let s = self.scalar_of(s);
                let found = match resolve_core(s.value) {
                    CoreValue::Null => CoreTag::Null,
                    CoreValue::Bool(_) => CoreTag::Bool,
                    CoreValue::Int(_) => CoreTag::Int,
                    CoreValue::Float(_) => CoreTag::Float,
                    CoreValue::Str(_) => CoreTag::Str,
                };
                let ok = match t {
                    CoreTag::Str => true,
                    CoreTag::Float => matches!(found, CoreTag::Float | CoreTag::Int),
                    CoreTag::Seq | CoreTag::Map => false,
                    t => t == found,
                };
                let value: String = s.value.chars().take(40).collect();
                (!ok).then(|| format!("cannot decode {} `{value}` as a {}", shown(found), shown(t)))
            }
        }
    }

    /// A short description of the node's type, for messages ("a mapping", "the string `x`").
    pub fn describe(&self, id: NodeId) -> String {
        let rid = self.resolve(id);
        match &self.node(rid).kind {
            NodeKind::Mapping { .. } => "a mapping".into(),
            NodeKind::Sequence { .. } => "a list".into(),
            NodeKind::Alias { .. } => format!(
                "the unresolved alias `*{}`",
                self.alias_name(rid).unwrap_or_default()
            ),
            NodeKind::Scalar(_) => match self.core_value(rid) {
                Some(CoreValue::Null) => "nothing (null)".into(),
                Some(CoreValue::Bool(b)) => format!("the boolean `{b}`"),
                Some(CoreValue::Int(i)) => format!("the integer `{i}`"),
                Some(CoreValue::Float(_)) => {
                    format!("the number `{}`", self.text(rid).unwrap_or(""))
                }
                Some(CoreValue::Str(s)) => {
                    let short: String = s.chars().take(40).collect();
                    if short.len() < s.len() {
                        format!("the string `{short}…`")
                    } else {
                        format!("the string `{short}`")
                    }
                }
                None => "a value".into(),
            },
        }
    }

    /// Source range of decoded bytes `decoded` inside scalar `id`.
    pub fn scalar_subrange(
        &self,
        id: NodeId,
        decoded: std::ops::Range<usize>,
    ) -> Option<TextRange> {
        self.scalar(id).map(|s| s.map.range_to_source(decoded))
    }

    pub(crate) fn push(&mut self, node: Node) -> NodeId {
        let id = NodeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.nodes.push(node);
        id
    }

    /// Add a scalar node: its value goes to the value buffer.
    pub(crate) fn push_scalar(
        &mut self,
        range: TextRange,
        value: &str,
        style: ScalarStyle,
        map: MapData,
    ) -> NodeId {
        let value_start = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        self.values.push_str(value);
        let map_has_segments = !map.segs.is_empty() && !value.is_empty();
        if map_has_segments {
            self.segments
                .push((value_start, map.segs.into_boxed_slice()));
        }
        self.push(Node {
            kind: NodeKind::Scalar(ScalarNode {
                value_start,
                value_len: u32::try_from(value.len()).unwrap_or(u32::MAX),
                map_base: map.base,
                style,
                map_exact: map.exact,
                map_has_segments,
            }),
            range,
        })
    }

    /// Make the map of scalar `id` inexact, pointing at `start`.
    pub(crate) fn demote_map(&mut self, id: NodeId, start: u32) {
        if let NodeKind::Scalar(s) = &mut self.node_mut(id).kind {
            s.map_base = start;
            s.map_exact = false;
            s.map_has_segments = false;
        }
    }

    pub(crate) fn set_anchor(&mut self, id: NodeId, name: &str, range: TextRange) {
        self.anchors.insert(id, (name.into(), range));
    }

    pub(crate) fn set_tag(&mut self, id: NodeId, tag: Box<str>) {
        self.tags.insert(id, tag);
    }

    pub(crate) fn set_alias_name(&mut self, id: NodeId, name: &str) {
        self.alias_names.insert(id, name.into());
    }

    /// Reserve room for about `bytes` of decoded values.
    pub(crate) fn reserve_values(&mut self, bytes: usize) {
        self.values.reserve(bytes);
    }

    /// Give back the spare capacity of the value buffer and the segment table.
    pub(crate) fn shrink_values(&mut self) {
        self.values.shrink_to_fit();
        self.segments.shrink_to_fit();
    }
    pub(crate) fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.0 as usize]
    }
    pub(crate) fn set_root(&mut self, id: NodeId) {
        self.root = Some(id);
    }
}

/// A tag of the YAML core schema (the failsafe, JSON and core tags).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CoreTag {
    Str,
    Int,
    Float,
    Bool,
    Null,
    Seq,
    Map,
}

impl CoreTag {
    pub fn as_str(self) -> &'static str {
        match self {
            CoreTag::Str => "!!str",
            CoreTag::Int => "!!int",
            CoreTag::Float => "!!float",
            CoreTag::Bool => "!!bool",
            CoreTag::Null => "!!null",
            CoreTag::Seq => "!!seq",
            CoreTag::Map => "!!map",
        }
    }
}

/// The core-schema tag a tag as written stands for: `!!int` or its long form
/// `!<tag:yaml.org,2002:int>`; the non-specific `!` makes a scalar a string. `None` for every
/// other tag (`!foo`, `!!timestamp`, `!!binary`, `!<tag:example.com:x>`).
pub fn core_tag(tag: &str) -> Option<CoreTag> {
    let name = tag
        .strip_prefix("!!")
        .or_else(|| tag.strip_prefix("!<tag:yaml.org,2002:")?.strip_suffix('>'));
    let name = match name {
        Some(n) => n,
        None if tag == "!" => "str",
        None => return None,
    };
    Some(match name {
        "str" => CoreTag::Str,
        "int" => CoreTag::Int,
        "float" => CoreTag::Float,
        "bool" => CoreTag::Bool,
        "null" => CoreTag::Null,
        "seq" => CoreTag::Seq,
        "map" => CoreTag::Map,
        _ => return None,
    })
}

/// YAML 1.2 core schema resolution of a plain scalar.
pub fn resolve_core(s: &str) -> CoreValue<'_> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return CoreValue::Null,
        "true" | "True" | "TRUE" => return CoreValue::Bool(true),
        "false" | "False" | "FALSE" => return CoreValue::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return CoreValue::Float(f64::INFINITY)
        }
        "-.inf" | "-.Inf" | "-.INF" => return CoreValue::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return CoreValue::Float(f64::NAN),
        _ => {}
    }
    let b = s.as_bytes();
    let digits =
        |t: &[u8], radix: u32| !t.is_empty() && t.iter().all(|c| (*c as char).is_digit(radix));
    if let Some(hex) = s.strip_prefix("0x") {
        if digits(hex.as_bytes(), 16) {
            if let Ok(v) = i64::from_str_radix(hex, 16) {
                return CoreValue::Int(v);
            }
        }
    }
    if let Some(oct) = s.strip_prefix("0o") {
        if digits(oct.as_bytes(), 8) {
            if let Ok(v) = i64::from_str_radix(oct, 8) {
                return CoreValue::Int(v);
            }
        }
    }
    let unsigned = match b.first() {
        Some(b'-' | b'+') => &b[1..],
        _ => b,
    };
    if digits(unsigned, 10) {
        if let Ok(v) = s.parse::<i64>() {
            return CoreValue::Int(v);
        }
        return CoreValue::Float(s.parse::<f64>().unwrap_or(f64::NAN));
    }
    // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
    let mut i = 0;
    let n = unsigned.len();
    let mut mantissa_digits = 0;
    while i < n && unsigned[i].is_ascii_digit() {
        i += 1;
        mantissa_digits += 1;
    }
    if i < n && unsigned[i] == b'.' {
        i += 1;
        while i < n && unsigned[i].is_ascii_digit() {
            i += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits > 0 {
        if i < n && (unsigned[i] == b'e' || unsigned[i] == b'E') {
            i += 1;
            if i < n && (unsigned[i] == b'-' || unsigned[i] == b'+') {
                i += 1;
            }
            let exp_start = i;
            while i < n && unsigned[i].is_ascii_digit() {
                i += 1;
            }
            if i == exp_start {
                return CoreValue::Str(s);
            }
        }
        if i == n {
            if let Ok(v) = s.parse::<f64>() {
                return CoreValue::Float(v);
            }
        }
    }
    CoreValue::Str(s)
}

#[cfg(test)]
mod tests;
