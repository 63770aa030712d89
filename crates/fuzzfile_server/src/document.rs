//! Open documents: their text at the client's latest version, and the analysis of that text.
//!
//! Changes are applied in the order they arrive, each to the text the previous one produced.
//! An incremental change's range is converted with the negotiated encoding against the text
//! as it is at that moment (not as it was at the start of the notification), as the
//! specification requires for several changes in one notification.

use crate::position::{Encoding, Lines};
use fuzzfile_check::{Analysis, LineIndex};
use lsp_types::TextDocumentContentChangeEvent;
use std::path::PathBuf;
use std::sync::Arc;

/// Whether the server analyses a document.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// `.fz`, or language id `fuzzfile`: always analysed.
    Fuzzfile,
    /// A YAML file: analysed while its top level looks like a Fuzzfile.
    Yaml,
    /// Anything else: left alone.
    Other,
}

pub struct Document {
    pub uri: lsp_types::Uri,
    pub path: Option<PathBuf>,
    pub kind: Kind,
    /// An application template (by name: `template.yaml`, `*.template.yaml`): checked as a
    /// template (`crate::template`), never analysed as a Fuzzfile.
    pub template: bool,
    /// Named as a template's values file (`values.yaml`, `*.values.yaml`).
    pub values: bool,
    /// Whether the server analyses the text at this version (see [`Document::refresh_kind`]).
    pub analysed: bool,
    pub version: i32,
    pub text: String,
    /// The analysis of `text` with the settings of `generation`, computed on demand (and
    /// dropped again when other documents were used more recently: see the server).
    pub analysis: Option<(u64, Arc<Analysis>)>,
    /// Each job's and service's findings from the analyses of earlier versions: an analysis
    /// of the next version re-runs the per-task rules of the tasks the edit can change only
    /// ([`fuzzfile_check::task_cache`]).
    pub task_findings: fuzzfile_check::task_cache::TaskFindingsCache,
    /// When the analysis was last used (the server's clock), for keeping the recent ones.
    pub last_used: u64,
    /// The version whose diagnostics were last published (pushed), if any.
    pub published: Option<i32>,
    /// Whether the last publication was a non-empty set (so leaving the Fuzzfile state must
    /// clear it).
    pub published_any: bool,
}

impl Document {
    pub fn new(uri: lsp_types::Uri, language_id: &str, version: i32, text: String) -> Document {
        let path = file_path(uri.as_str());
        let kind = kind_of(uri.as_str(), language_id);
        // By its name, or by the editor's language (an untitled template in VS Code).
        let template =
            crate::template::is_template_uri(uri.as_str()) || language_id == TEMPLATE_LANGUAGE_ID;
        let values = crate::template::is_values_uri(uri.as_str());
        let mut d = Document {
            uri,
            path,
            kind,
            template,
            values,
            analysed: false,
            version,
            text,
            analysis: None,
            task_findings: Default::default(),
            last_used: 0,
            published: None,
            published_any: false,
        };
        d.refresh_kind();
        d
    }

    /// Decide, after a change, whether the server analyses this document: a YAML file is a
    /// Fuzzfile while its top level has `version:` and `jobs:` or `services:`, the same test
    /// `fuzzlint check` applies to directories.
    pub fn refresh_kind(&mut self) {
        self.analysed = match self.kind {
            // A template's text is not a Fuzzfile until rendered.
            _ if self.template => false,
            Kind::Fuzzfile => true,
            Kind::Yaml => fuzzfile_check::looks_like_fuzzfile(&self.text),
            Kind::Other => false,
        };
    }

    /// Apply one content change. A change without a range replaces the whole text.
    pub fn apply(&mut self, change: TextDocumentContentChangeEvent, encoding: Encoding) {
        let analysis = self.analysis.take();
        match change.range {
            None => self.text = change.text,
            Some(range) => {
                // The analysis of the text as it is has its line index (the usual case: a
                // keystroke after the diagnostics of the previous one); else one is built.
                let built;
                let index = match &analysis {
                    Some((_, a)) if a.text == self.text => &a.line_index,
                    _ => {
                        built = LineIndex::new(&self.text);
                        &built
                    }
                };
                let lines = Lines::new(&self.text, index, encoding);
                let r = lines.text_range(range);
                // `Lines` only returns offsets on character boundaries inside the text.
                let (start, end) = (r.start as usize, r.end as usize);
                if self.text.is_char_boundary(start) && self.text.is_char_boundary(end) {
                    self.text.replace_range(start..end, &change.text);
                }
            }
        }
    }
}

/// The kind of a document from its URI's extension and the client's language id.
/// The language id of application templates in the VS Code extension
/// (editors/vscode/package.json).
pub const TEMPLATE_LANGUAGE_ID: &str = "fuzzfile-template";

pub fn kind_of(uri: &str, language_id: &str) -> Kind {
    let path = uri.split(['?', '#']).next().unwrap_or(uri);
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".fz") || language_id == "fuzzfile" {
        Kind::Fuzzfile
    } else if lower.ends_with(".yaml")
        || lower.ends_with(".yml")
        || language_id == "yaml"
        || language_id == TEMPLATE_LANGUAGE_ID
    {
        Kind::Yaml
    } else {
        Kind::Other
    }
}

/// The local path of a `file:` URI (percent-decoded), or `None` for other schemes.
pub fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri
        .strip_prefix("file://")
        .or_else(|| uri.strip_prefix("FILE://"))?;
    // `file://host/path`: only an empty host or `localhost` is this machine.
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(i) if rest[..i].eq_ignore_ascii_case("localhost") => &rest[i..],
        _ => return None,
    };
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = percent_decode(path);
    String::from_utf8(bytes).ok().map(PathBuf::from)
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_decode_and_other_schemes_have_no_path() {
        assert_eq!(
            file_path("file:///w/a%20b/x.fz"),
            Some(PathBuf::from("/w/a b/x.fz"))
        );
        assert_eq!(
            file_path("file://localhost/w/x.fz"),
            Some(PathBuf::from("/w/x.fz"))
        );
        assert_eq!(file_path("untitled:Untitled-1"), None);
        assert_eq!(file_path("file://other/x"), None);
        assert_eq!(file_path("file:///w/%"), Some(PathBuf::from("/w/%")));
        assert_eq!(file_path("file:///w/%4"), Some(PathBuf::from("/w/%4")));
    }

    #[test]
    fn kinds() {
        assert_eq!(kind_of("file:///a/x.fz", "plaintext"), Kind::Fuzzfile);
        assert_eq!(kind_of("untitled:1", "fuzzfile"), Kind::Fuzzfile);
        assert_eq!(kind_of("file:///a/x.YML", ""), Kind::Yaml);
        assert_eq!(kind_of("file:///a/x.json", "json"), Kind::Other);
        assert_eq!(kind_of("untitled:2", "fuzzfile-template"), Kind::Yaml);
    }

    #[test]
    fn an_untitled_document_in_the_template_language_is_a_template() {
        let uri: lsp_types::Uri = "untitled:Untitled-1".parse().expect("uri");
        let d = Document::new(uri, "fuzzfile-template", 1, "jobs: {}\n".into());
        assert!(d.template);
        let uri: lsp_types::Uri = "untitled:Untitled-2".parse().expect("uri");
        let d = Document::new(uri, "yaml", 1, "jobs: {}\n".into());
        assert!(!d.template);
    }

    /// An incremental change replacing `(l1, c1)..(l2, c2)` with `t`.
    fn ch(l1: u32, c1: u32, l2: u32, c2: u32, t: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(lsp_types::Range::new(
                lsp_types::Position::new(l1, c1),
                lsp_types::Position::new(l2, c2),
            )),
            range_length: None,
            text: t.into(),
        }
    }

    #[test]
    fn incremental_changes_apply_against_the_current_text() {
        let uri: lsp_types::Uri = "file:///x.fz".parse().expect("uri");
        let mut d = Document::new(uri, "fuzzfile", 1, "a: é\nb: 1\n".into());
        // UTF-16: `é` is one unit; replace it, then (against the new text) the `1`.
        d.apply(ch(0, 3, 0, 4, "ü😀"), Encoding::Utf16);
        d.apply(ch(1, 3, 1, 4, "2"), Encoding::Utf16);
        assert_eq!(d.text, "a: ü😀\nb: 2\n");
        // UTF-8: the emoji is 4 bytes.
        d.apply(ch(0, 5, 0, 9, ""), Encoding::Utf8);
        assert_eq!(d.text, "a: ü\nb: 2\n");
        // Out of range: clamped to the end.
        d.apply(ch(99, 0, 99, 5, "c: 3\n"), Encoding::Utf8);
        assert_eq!(d.text, "a: ü\nb: 2\nc: 3\n");
    }

    /// A change is placed with the line index of the cached analysis when that analysis is of
    /// the text as it is, and with a new one otherwise: the same text either way.
    #[test]
    fn a_change_lands_at_the_same_place_with_or_without_a_cached_analysis() {
        let uri: lsp_types::Uri = "file:///x.fz".parse().expect("uri");
        let text = "version: v4\r\njobs:\n  a: é\r  b: 1\n";
        let change = || ch(3, 5, 3, 6, "22");
        let mut plain = Document::new(uri.clone(), "fuzzfile", 1, text.into());
        plain.apply(change(), Encoding::Utf16);
        let mut cached = Document::new(uri.clone(), "fuzzfile", 1, text.into());
        cached.analysis = Some((0, Arc::new(fuzzfile_check::analyze(text))));
        cached.apply(change(), Encoding::Utf16);
        assert!(cached.analysis.is_none());
        // An analysis of another text (with its lines elsewhere) is not used.
        let mut other = Document::new(uri, "fuzzfile", 1, text.into());
        other.analysis = Some((0, Arc::new(fuzzfile_check::analyze("\n\n\n\n\nx\n"))));
        other.apply(change(), Encoding::Utf16);
        assert_eq!(plain.text, "version: v4\r\njobs:\n  a: é\r  b: 22\n");
        assert_eq!(cached.text, plain.text);
        assert_eq!(other.text, plain.text);
    }

    /// Regression: with lone CR line breaks the server took the whole text for one line, so
    /// an edit on line 2 landed at the end of the text.
    #[test]
    fn incremental_changes_in_a_lone_cr_document() {
        let uri: lsp_types::Uri = "file:///x.fz".parse().expect("uri");
        let mut d = Document::new(uri, "fuzzfile", 1, "a: 1\rb: 2\rc: 3\r".into());
        d.apply(ch(1, 3, 1, 4, "20"), Encoding::Utf16);
        assert_eq!(d.text, "a: 1\rb: 20\rc: 3\r");
        // Delete line 0 with its break, then insert a line before the last one.
        d.apply(ch(0, 0, 1, 0, ""), Encoding::Utf8);
        d.apply(ch(1, 0, 1, 0, "x: 9\r"), Encoding::Utf8);
        assert_eq!(d.text, "b: 20\rx: 9\rc: 3\r");
    }
}
