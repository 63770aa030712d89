//! Semantic tokens for the shell inside `script:` bodies, which a YAML grammar colours as
//! one string: each command's name, its `-flags`, and `$VARIABLES`. The shell is parsed by
//! `fuzzfile_shell` (the parser the launcher analysis uses) and every range goes through the
//! scalar's offset map, so tokens land on the source bytes.

use crate::server::View;
use fuzzfile_check::TextRange;
use lsp_types::{
    SemanticToken, SemanticTokenType, SemanticTokens, SemanticTokensFullOptions,
    SemanticTokensLegend, SemanticTokensOptions, SemanticTokensServerCapabilities,
};

const TYPES: [SemanticTokenType; 3] = [
    SemanticTokenType::FUNCTION,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::VARIABLE,
];

/// Commands that run the command after them.
const WRAPPERS: &[&str] = &["exec_all", "exec", "nohup", "time", "srun", "mpirun"];

pub fn capability() -> SemanticTokensServerCapabilities {
    SemanticTokensServerCapabilities::SemanticTokensOptions(SemanticTokensOptions {
        legend: SemanticTokensLegend {
            token_types: TYPES.to_vec(),
            token_modifiers: Vec::new(),
        },
        range: None,
        full: Some(SemanticTokensFullOptions::Bool(true)),
        work_done_progress_options: Default::default(),
    })
}

pub fn tokens(v: &View<'_>) -> SemanticTokens {
    let a = v.analysis;
    let mut found: Vec<(TextRange, u32)> = Vec::new();
    for task in a.model.tasks() {
        let Some(script) = &task.script else { continue };
        let Some(scalar) = a.tree.scalar(script.node) else {
            continue;
        };
        if !scalar.map.is_exact() {
            continue;
        }
        let parsed = fuzzfile_shell::parse(scalar.value);
        let map = |r: std::ops::Range<usize>| scalar.map.range_to_source(r);
        for cmd in &parsed.commands {
            // The command name, and the command a wrapper (`exec_all torchrun ...`) runs.
            let mut name_at = 0;
            for (i, w) in cmd.words.iter().enumerate() {
                if i == name_at && !w.dynamic {
                    found.push((map(w.range.clone()), 0));
                    if WRAPPERS.contains(&w.text.as_str()) {
                        name_at = i + 1;
                    }
                } else if w.text.starts_with('-') && !w.dynamic {
                    found.push((map(w.range.clone()), 1));
                }
            }
        }
        // `$NAME` and `${NAME}` anywhere in the body (also inside strings and heredocs).
        let b = scalar.value.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'$' {
                let braced = b.get(i + 1) == Some(&b'{');
                let start = i + 1 + usize::from(braced);
                let len = b[start..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                if len > 0 && !b[start].is_ascii_digit() {
                    let end =
                        start + len + usize::from(braced && b.get(start + len) == Some(&b'}'));
                    found.push((map(i..end), 2));
                    i = end;
                    continue;
                }
            }
            i += 1;
        }
    }
    found.sort_by_key(|(r, _)| (r.start, r.end));
    let mut data = Vec::new();
    let (mut prev_line, mut prev_char) = (0u32, 0u32);
    let mut last_end = 0u32;
    for (r, ty) in found {
        if r.is_empty() || r.start < last_end {
            continue;
        }
        let start = v.lines.position(r.start);
        let end = v.lines.position(r.end);
        if start.line != end.line {
            continue;
        }
        let delta_line = start.line - prev_line;
        let delta_start = if delta_line == 0 {
            start.character - prev_char
        } else {
            start.character
        };
        data.push(SemanticToken {
            delta_line,
            delta_start,
            length: v.lines.len(r),
            token_type: ty,
            token_modifiers_bitset: 0,
        });
        prev_line = start.line;
        prev_char = start.character;
        last_end = r.end;
    }
    SemanticTokens {
        result_id: None,
        data,
    }
}
