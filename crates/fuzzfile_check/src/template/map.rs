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
use fuzzfile_template::{Origin, Segment, SourceMap};

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
}

impl<'m> Mapper<'m> {
    pub fn new(map: &'m SourceMap, output: &'m str) -> Self {
        Mapper {
            segments: &map.segments,
            output,
        }
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
    /// an insertion there is one in template text: the bytes on both sides are copied text
    /// (or the one before is a line break, or the point is the end of copied text that ends
    /// the output). An insertion right after printed text would join the printed value.
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
        // At the start of segment `i`.
        let before_text = i > 0 && self.segments[i - 1].output.end == at && self.is_text(i - 1);
        let line_start = at == 0
            || self
                .output
                .as_bytes()
                .get(at - 1)
                .is_some_and(|b| *b == b'\n' || *b == b'\r');
        let exact = self.is_text(i) && (before_text || line_start);
        // Prefer the copied text before the point, where its position is exact.
        if before_text && !self.is_text(i) {
            return Some((i - 1, false));
        }
        Some((i, exact))
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
    fn an_empty_map_maps_to_the_start() {
        let m = SourceMap::default();
        let got = Mapper::new(&m, OUT).map(TextRange::new(0, 0));
        assert_eq!(got.range, TextRange::empty(0));
        assert!(!got.exact);
    }
}
