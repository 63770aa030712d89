//! Rendered-text positions back to template positions, through the render's source map.
//!
//! - A range inside text the template copied to the output (one segment of copied text) maps
//!   exactly: the same bytes in the template.
//! - A range touching bytes an action printed maps to the whole action (`{{ ... }}`), or from
//!   the start of the first segment's mapping to the end of the last one's; the values that
//!   action read are kept, so a message can name them.
//! - A fix maps only when every edit maps exactly ([`Mapper::exact`]): a fix never edits a
//!   template where the bytes came from an action or a value.
//!
//! Each lookup is a binary search over the segments: no text is read again.

use fuzzfile_diagnostics::TextRange;
use fuzzfile_template::ast::{Arg, Node, Pipeline};
use fuzzfile_template::{Origin, Segment, SourceMap, Template};

/// A rendered range seen in the template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapped {
    pub range: TextRange,
    /// The whole rendered range is copied template text of one segment.
    pub exact: bool,
    /// The values (root data keys) the printed bytes of the range derive from, in first-seen
    /// order.
    pub values: Vec<String>,
}

pub struct Mapper<'m> {
    segments: &'m [Segment],
    /// The rendered text (to tell an insertion at a line start).
    output: &'m str,
    /// The template's printing actions (`{{ pipeline }}` without a declaration) with the
    /// values their pipelines read, sorted by start: an action that printed nothing leaves
    /// no segment, and is found in the gap it leaves between two copied texts.
    actions: &'m [(std::ops::Range<usize>, Vec<String>)],
    template: &'m str,
}

impl<'m> Mapper<'m> {
    pub fn new(map: &'m SourceMap, output: &'m str) -> Self {
        Mapper {
            segments: &map.segments,
            output,
            actions: &[],
            template: "",
        }
    }

    /// With the template's printing actions (see [`printing_actions`]) and its text: an
    /// insertion point where an action printed nothing maps to that action.
    pub fn with_actions(
        mut self,
        template: &'m str,
        actions: &'m [(std::ops::Range<usize>, Vec<String>)],
    ) -> Self {
        self.template = template;
        self.actions = actions;
        self
    }

    /// The action that printed nothing between copied texts `i - 1` and `i`: the gap
    /// between them in the template is that action and whitespace.
    fn silent_action(&self, i: usize) -> Option<&'m (std::ops::Range<usize>, Vec<String>)> {
        let (Origin::Text { template: a }, Origin::Text { template: b }) = (
            &self.segments.get(i.checked_sub(1)?)?.origin,
            &self.segments.get(i)?.origin,
        ) else {
            return None;
        };
        let gap = a.end..b.start;
        if gap.start >= gap.end {
            return None;
        }
        let k = self.actions.partition_point(|(s, _)| s.start < gap.start);
        let (span, _) = self.actions.get(k)?;
        let inside = span.end <= gap.end;
        let blank = |r: std::ops::Range<usize>| {
            self.template
                .get(r)
                .is_some_and(|t| t.chars().all(char::is_whitespace))
        };
        (inside && blank(gap.start..span.start) && blank(span.end..gap.end))
            .then(|| &self.actions[k])
    }

    /// Index of the segment holding output byte `offset` (the last one past the end).
    fn index_at(&self, offset: u32) -> Option<usize> {
        if self.segments.is_empty() {
            return None;
        }
        let offset = offset as usize;
        let i = self.segments.partition_point(|s| s.output.end <= offset);
        Some(i.min(self.segments.len() - 1))
    }

    fn is_text(&self, i: usize) -> bool {
        matches!(self.segments[i].origin, Origin::Text { .. })
    }

    /// The segment an empty range (an insertion point) at `offset` belongs to, and whether
    /// an insertion there is one in template text: inside copied text, or at the start of
    /// a line of copied text (or the end of copied text ending the output). An insertion
    /// right after printed text would join the printed value.
    fn point(&self, offset: u32) -> Option<(usize, bool)> {
        let at = offset as usize;
        let i = self.index_at(offset)?;
        let s = &self.segments[i];
        if at >= s.output.end {
            // The end of the output.
            return Some((i, self.is_text(i)));
        }
        if at > s.output.start {
            return Some((i, self.is_text(i)));
        }
        // At the start of segment `i`: an insertion is in the template's text only at the
        // start of a line of copied text; right after a printed value (or after an action
        // that printed nothing) it would join the value.
        let before_text = i > 0 && self.segments[i - 1].output.end == at && self.is_text(i - 1);
        let line_start = at == 0
            || self
                .output
                .as_bytes()
                .get(at - 1)
                .is_some_and(|b| *b == b'\n' || *b == b'\r');
        if line_start {
            return Some((i, self.is_text(i)));
        }
        if before_text {
            // Prefer the copied text before the point.
            return Some((i - 1, false));
        }
        Some((i, false))
    }

    /// The template offset of output byte `offset` as the start of a range in segment `i`.
    fn start_in(&self, i: usize, offset: u32) -> u32 {
        let s = &self.segments[i];
        match &s.origin {
            Origin::Text { template } => {
                let k = (offset as usize).saturating_sub(s.output.start);
                clamp(template.start.saturating_add(k).min(template.end))
            }
            Origin::Action { action, .. } => clamp(action.start),
        }
    }

    /// The template offset of output offset `end` as the end of a range in segment `i`.
    fn end_in(&self, i: usize, end: u32) -> u32 {
        let s = &self.segments[i];
        match &s.origin {
            Origin::Text { template } => {
                let k = (end as usize).saturating_sub(s.output.start);
                clamp(template.start.saturating_add(k).min(template.end))
            }
            Origin::Action { action, .. } => clamp(action.end),
        }
    }

    /// `range` of the rendered text, in the template.
    pub fn map(&self, range: TextRange) -> Mapped {
        let none = Mapped {
            range: TextRange::empty(0),
            exact: false,
            values: Vec::new(),
        };
        if range.is_empty() {
            let Some((i, exact)) = self.point(range.start) else {
                return none;
            };
            let s = &self.segments[i];
            // A point followed on its line only by blanks (and the `:` of the key it ends),
            // then an action that printed nothing (`uri: {{ .Empty }}`, reported at the end
            // of `uri`): what is reported there is that action's.
            let rest = self
                .output
                .get(range.start as usize..s.output.end)
                .unwrap_or("\n");
            let rest = rest.strip_prefix(':').unwrap_or(rest);
            if rest.chars().all(|c| c == ' ' || c == '\t') {
                if let Some((span, values)) = self.silent_action(i + 1) {
                    return Mapped {
                        range: TextRange::from_usize(span.start, span.end),
                        exact: false,
                        values: values.clone(),
                    };
                }
            }
            return match &s.origin {
                Origin::Text { template } => {
                    let k = (range.start as usize).saturating_sub(s.output.start);
                    let at = clamp(template.start.saturating_add(k).min(template.end));
                    Mapped {
                        range: TextRange::empty(at),
                        exact,
                        values: Vec::new(),
                    }
                }
                Origin::Action { action, values } => Mapped {
                    range: TextRange::from_usize(action.start, action.end),
                    exact: false,
                    values: values.clone(),
                },
            };
        }
        let (Some(first), Some(last)) = (self.index_at(range.start), self.index_at(range.end - 1))
        else {
            return none;
        };
        let start = self.start_in(first, range.start);
        let mut end = self.end_in(last, range.end);
        if end < start {
            // The range runs over a loop's iterations back to earlier template text: keep
            // the first segment's part.
            end = self.end_in(first, range.end.min(clamp(self.segments[first].output.end)));
        }
        let mut values: Vec<String> = Vec::new();
        for s in &self.segments[first..=last] {
            if let Origin::Action { values: v, .. } = &s.origin {
                for name in v {
                    if !values.contains(name) {
                        values.push(name.clone());
                    }
                }
            }
        }
        Mapped {
            range: TextRange::new(start, end.max(start)),
            exact: first == last && matches!(self.segments[first].origin, Origin::Text { .. }),
            values,
        }
    }

    /// `range` in the template when the rendered bytes are copied template text of one
    /// segment (insertion points too, at the end of copied text); else `None`.
    pub fn exact(&self, range: TextRange) -> Option<TextRange> {
        let m = self.map(range);
        m.exact.then_some(m.range)
    }
}

/// The printing actions of a template (`{{ pipeline }}` that declares no variable), each
/// with the root values its pipeline reads (`.Name`, `$.Name`), sorted by start.
pub fn printing_actions(t: &Template) -> Vec<(std::ops::Range<usize>, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack: Vec<&Node> = t.root.iter().collect();
    stack.extend(t.defines.values().flat_map(|d| d.body.iter()));
    while let Some(n) = stack.pop() {
        match n {
            Node::Action { span, pipe } if pipe.decl.is_empty() => {
                let mut values = Vec::new();
                pipe_values(pipe, &mut values);
                out.push((span.clone(), values));
            }
            Node::If(b) | Node::With(b) | Node::Range(b) => {
                stack.extend(b.list.iter());
                stack.extend(b.else_list.iter().flatten());
            }
            _ => {}
        }
    }
    out.sort_by_key(|(s, _)| s.start);
    out
}

/// The root values (`.Name`, `$.Name`) read by the innermost pipeline (of an action, an
/// `if`/`with`/`range`, a `template` call) whose action holds `span`: what a render error
/// there was computing with.
pub fn values_read_at(t: &Template, span: &std::ops::Range<usize>) -> Vec<String> {
    let mut pipes: Vec<&Pipeline> = Vec::new();
    let mut stack: Vec<&Node> = t.root.iter().collect();
    stack.extend(t.defines.values().flat_map(|d| d.body.iter()));
    while let Some(n) = stack.pop() {
        match n {
            Node::Action { pipe, .. }
            | Node::Template {
                pipe: Some(pipe), ..
            } => pipes.push(pipe),
            Node::If(b) | Node::With(b) | Node::Range(b) => {
                pipes.push(&b.pipe);
                stack.extend(b.list.iter());
                stack.extend(b.else_list.iter().flatten());
            }
            _ => {}
        }
    }
    let innermost = pipes
        .into_iter()
        .filter(|p| p.span.start <= span.start && span.end <= p.span.end)
        .min_by_key(|p| p.span.end - p.span.start);
    let mut out = Vec::new();
    if let Some(pipe) = innermost {
        pipe_values(pipe, &mut out);
    }
    out
}

/// The root values read by the conditions (`if`, `else if`, `with`, `range`) around `span`:
/// what decided that a `fail` there was reached.
pub fn values_deciding(t: &Template, span: &std::ops::Range<usize>) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<&Node> = t.root.iter().collect();
    stack.extend(t.defines.values().flat_map(|d| d.body.iter()));
    while let Some(n) = stack.pop() {
        if let Node::If(b) | Node::With(b) | Node::Range(b) = n {
            if b.span.start <= span.start && span.end <= b.span.end {
                pipe_values(&b.pipe, &mut out);
                stack.extend(b.list.iter());
                stack.extend(b.else_list.iter().flatten());
            }
        }
    }
    out
}

fn pipe_values(p: &Pipeline, out: &mut Vec<String>) {
    for c in &p.cmds {
        for a in &c.args {
            arg_values(a, out);
        }
    }
}

fn arg_values(a: &Arg, out: &mut Vec<String>) {
    let name = match a {
        Arg::Field { names, .. } => names.first(),
        Arg::Variable { name, fields, .. } if name == "$" => fields.first(),
        Arg::Chain { node, .. } => return arg_values(node, out),
        Arg::Pipe { pipe, .. } => return pipe_values(pipe, out),
        _ => None,
    };
    if let Some(n) = name {
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
}

fn clamp(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuzzfile_template::Segment;

    /// Template `a: {{ .X }}\nb: c\n` (`{{ .X }}` at 3..11) rendered with X = `hello`:
    /// `a: hello\nb: c\n`.
    const OUT: &str = "a: hello\nb: c\n";

    fn map() -> SourceMap {
        SourceMap {
            segments: vec![
                Segment {
                    output: 0..3,
                    origin: Origin::Text { template: 0..3 },
                },
                Segment {
                    output: 3..8,
                    origin: Origin::Action {
                        action: 3..11,
                        values: vec!["X".into()],
                    },
                },
                Segment {
                    output: 8..14,
                    origin: Origin::Text { template: 11..17 },
                },
            ],
        }
    }

    #[test]
    fn copied_text_maps_exactly() {
        let m = map();
        let mapper = Mapper::new(&m, OUT);
        // `b: c` at 9..13 of the output is 12..16 of the template.
        let got = mapper.map(TextRange::new(9, 13));
        assert_eq!(got.range, TextRange::new(12, 16));
        assert!(got.exact);
        assert!(got.values.is_empty());
        assert_eq!(
            mapper.exact(TextRange::new(9, 13)),
            Some(TextRange::new(12, 16))
        );
    }

    #[test]
    fn printed_text_maps_to_the_action_with_its_values() {
        let m = map();
        let mapper = Mapper::new(&m, OUT);
        let got = mapper.map(TextRange::new(4, 6));
        assert_eq!(got.range, TextRange::new(3, 11));
        assert!(!got.exact);
        assert_eq!(got.values, vec!["X".to_owned()]);
        assert_eq!(mapper.exact(TextRange::new(4, 6)), None);
    }

    #[test]
    fn a_range_over_text_and_action_spans_both() {
        let m = map();
        let mapper = Mapper::new(&m, OUT);
        // `a: hello` (0..8) is `a: {{ .X }}` (0..11).
        let got = mapper.map(TextRange::new(0, 8));
        assert_eq!(got.range, TextRange::new(0, 11));
        assert!(!got.exact);
        assert_eq!(got.values, vec!["X".to_owned()]);
    }

    #[test]
    fn insertion_points_are_exact_only_in_copied_text() {
        let m = map();
        let mapper = Mapper::new(&m, OUT);
        // Output offset 3: the end of `a: ` and the start of the printed value: an insertion
        // there would join the value (`docker://` before it), so it is not exact, though it
        // maps to the action.
        assert_eq!(mapper.exact(TextRange::empty(3)), None);
        assert_eq!(mapper.map(TextRange::empty(3)).range, TextRange::empty(3));
        // Right after the printed value, before `\n`: not exact either.
        assert_eq!(mapper.exact(TextRange::empty(8)), None);
        // Inside copied text, and at the start of a line of it.
        assert_eq!(mapper.exact(TextRange::empty(1)), Some(TextRange::empty(1)));
        assert_eq!(
            mapper.exact(TextRange::empty(9)),
            Some(TextRange::empty(12))
        );
        // The end of the output: the end of the last copied text.
        assert_eq!(
            mapper.exact(TextRange::empty(14)),
            Some(TextRange::empty(17))
        );
        // Inside printed text: not exact.
        assert_eq!(mapper.exact(TextRange::empty(5)), None);
    }

    #[test]
    fn loop_iterations_map_to_the_first_segment() {
        // `{{range .L}}x{{end}}` with two elements: `xx`, both from template byte 12.
        let m = SourceMap {
            segments: vec![
                Segment {
                    output: 0..1,
                    origin: Origin::Text { template: 12..13 },
                },
                Segment {
                    output: 1..2,
                    origin: Origin::Text { template: 12..13 },
                },
            ],
        };
        let mapper = Mapper::new(&m, OUT);
        let got = mapper.map(TextRange::new(0, 2));
        assert_eq!(got.range, TextRange::new(12, 13));
        assert!(!got.exact);
        assert_eq!(
            mapper.map(TextRange::new(1, 2)).range,
            TextRange::new(12, 13)
        );
    }

    #[test]
    fn a_point_before_an_action_that_printed_nothing_maps_to_the_action() {
        // `a: {{ .E }}\nb: c\n` with E empty: `a: \nb: c\n`; `{{ .E }}` at 3..11.
        let template = "a: {{ .E }}\nb: c\n";
        let out = "a: \nb: c\n";
        let m = SourceMap {
            segments: vec![
                Segment {
                    output: 0..3,
                    origin: Origin::Text { template: 0..3 },
                },
                Segment {
                    output: 3..9,
                    origin: Origin::Text { template: 11..17 },
                },
            ],
        };
        let actions = vec![(3..11, vec!["E".to_owned()])];
        let mapper = Mapper::new(&m, out).with_actions(template, &actions);
        // At the end of the key `a` (where a rule reports an empty value), after `a:` and
        // after `a: `.
        for at in [1, 2, 3] {
            let got = mapper.map(TextRange::empty(at));
            assert_eq!(got.range, TextRange::new(3, 11), "{at}");
            assert_eq!(got.values, vec!["E".to_owned()]);
            assert!(!got.exact);
        }
        // Inside `b: c`: copied text.
        assert_eq!(
            mapper.exact(TextRange::empty(5)),
            Some(TextRange::empty(13))
        );
        // Without the actions: the end of `a: `, not an insertion point of the template.
        let plain = Mapper::new(&m, out);
        assert_eq!(plain.map(TextRange::empty(3)).range, TextRange::empty(3));
        assert_eq!(plain.exact(TextRange::empty(3)), None);
    }

    #[test]
    fn an_empty_map_maps_to_the_start() {
        let m = SourceMap::default();
        let got = Mapper::new(&m, OUT).map(TextRange::new(0, 0));
        assert_eq!(got.range, TextRange::empty(0));
        assert!(!got.exact);
    }
}
