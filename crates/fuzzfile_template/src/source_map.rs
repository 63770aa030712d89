//! From the rendered output back to the template: which template bytes (and which values) each
//! output byte came from.

use crate::Span;

/// Segments in output order; together they cover the output, without overlap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    pub segments: Vec<Segment>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Byte offsets into the output.
    pub output: Span,
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Copied from the template's text: output byte `output.start + k` is template byte
    /// `template.start + k`.
    Text { template: Span },
    /// Printed by the action at `action` (`{{ ... }}` with its delimiters); `values` names the
    /// data keys of the root (`.Name`, `$.Name`) the printed text derives from: read in the
    /// action's pipeline, or carried by a variable it uses.
    Action { action: Span, values: Vec<String> },
}

impl SourceMap {
    /// The segment holding output byte `offset` (the last segment for the end of the output).
    pub fn segment_at(&self, offset: usize) -> Option<&Segment> {
        let i = self
            .segments
            .partition_point(|s| s.output.end <= offset)
            .min(self.segments.len().saturating_sub(1));
        self.segments.get(i)
    }

    /// The template byte an output byte came from: exact inside copied text, the action's
    /// start inside printed text.
    pub fn template_offset(&self, offset: usize) -> Option<usize> {
        let s = self.segment_at(offset)?;
        Some(match &s.origin {
            Origin::Text { template } => {
                (template.start + offset.saturating_sub(s.output.start)).min(template.end)
            }
            Origin::Action { action, .. } => action.start,
        })
    }

    /// Output bytes `range` as template bytes: exact when the whole range is copied text of
    /// one segment (what a fix may edit), else `None`.
    pub fn template_range_exact(&self, range: Span) -> Option<Span> {
        let s = self.segment_at(range.start)?;
        match &s.origin {
            Origin::Text { template } if range.end <= s.output.end => {
                let start = template.start + (range.start - s.output.start);
                Some(start..start + (range.end - range.start))
            }
            _ => None,
        }
    }
}
