//! Shell text → simple commands with byte-exact word ranges.
//!
//! Fuzzfiles put shell in `script:` bodies and in `command: [/bin/sh, -c, "..."]` strings. This
//! crate parses such text with the tree-sitter bash grammar (error tolerant: a broken line
//! leaves the rest usable) and returns every simple command, wherever it is nested: in
//! pipelines, `&&`/`||`/`;` lists, `if`/`for`/`while` bodies, functions, subshells and `$(...)`
//! substitutions. Each word keeps its byte range in the given text and its static value
//! (quotes removed, expansions such as `$RANK` kept as written), so the caller can resolve
//! variables and map the range back to the Fuzzfile.
//!
//! Invariants: never panics; ranges are byte ranges into the text passed in; no I/O; no state
//! kept between calls but one reused parser per thread (a parser, not results).

pub mod eval;

use std::ops::Range;

/// One word of a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The value with quoting removed. Parameter expansions (`$X`, `${X}`) and command
    /// substitutions are kept as written.
    pub text: String,
    /// Byte range of the whole word in the shell text, quotes included.
    pub range: Range<usize>,
    /// The word contains an expansion that the shell evaluates (`$X`, `${X}`, `$(...)`).
    pub dynamic: bool,
    /// The word is entirely single-quoted (`'$RANK'`): this shell does not expand it, a shell
    /// the word is handed to later may.
    pub single_quoted: bool,
}

/// `NAME=value` written before a command or as a statement of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub name: String,
    pub value: String,
    pub range: Range<usize>,
}

/// A simple command: optional assignments, then words (the first is the program).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub assignments: Vec<Assignment>,
    pub words: Vec<Word>,
    pub range: Range<usize>,
}

/// The commands of a shell text, in source order, and the variable assignments that stand as
/// statements of their own (`NPROC=4`, `export NCCL_IB_HCA=mlx5`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    pub commands: Vec<Command>,
    pub assignments: Vec<Assignment>,
    /// The grammar found errors; what is around them is still returned.
    pub has_errors: bool,
}

impl Script {
    /// The value last assigned to `name` before byte `offset` by a statement of its own.
    pub fn assigned_before(&self, name: &str, offset: usize) -> Option<&Assignment> {
        self.assignments
            .iter()
            .rfind(|a| a.name == name && a.range.start < offset)
    }
}

thread_local! {
    /// One parser per thread: creating one and loading the grammar costs more than parsing a
    /// typical script.
    static PARSER: std::cell::RefCell<Option<tree_sitter::Parser>> = const { std::cell::RefCell::new(None) };
}

/// Parse shell text with the tree-sitter grammar: the simple commands as written (for
/// highlighting). What a script does when it runs is [`eval::evaluate`]'s.
pub fn parse(text: &str) -> Script {
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut p = tree_sitter::Parser::new();
            if p.set_language(&tree_sitter_bash::LANGUAGE.into()).is_ok() {
                *slot = Some(p);
            }
        }
        slot.as_mut().and_then(|p| p.parse(text, None))
    });
    let mut script = Script::default();
    let Some(tree) = tree else {
        return script;
    };
    let root = tree.root_node();
    script.has_errors = root.has_error();
    // Iterative walk: the input may nest deeply.
    let mut cursor = root.walk();
    let mut stack = vec![root];
    let mut seen = 0usize;
    while let Some(node) = stack.pop() {
        seen += 1;
        if seen > 1_000_000 {
            break;
        }
        match node.kind() {
            "command" => {
                if let Some(c) = command(text, node) {
                    script.commands.push(c);
                }
            }
            // Only assignments that are statements of their own (or under `export` /
            // `declare`), not the prefix of a command (handled in `command`).
            "variable_assignment" if node.parent().is_some_and(|p| p.kind() != "command") => {
                if let Some(a) = assignment(text, node) {
                    script.assignments.push(a);
                }
            }
            _ => {}
        }
        let children: Vec<_> = node.children(&mut cursor).collect();
        for child in children.into_iter().rev() {
            stack.push(child);
        }
    }
    script.commands.sort_by_key(|c| c.range.start);
    script.assignments.sort_by_key(|a| a.range.start);
    script
}

fn slice<'t>(text: &'t str, node: tree_sitter::Node<'_>) -> &'t str {
    text.get(node.byte_range()).unwrap_or("")
}

fn command(text: &str, node: tree_sitter::Node<'_>) -> Option<Command> {
    let mut cmd = Command {
        assignments: Vec::new(),
        words: Vec::new(),
        range: node.byte_range(),
    };
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "variable_assignment" => {
                if let Some(a) = assignment(text, child) {
                    cmd.assignments.push(a);
                }
            }
            "command_name" => {
                let inner = child.named_child(0).unwrap_or(child);
                cmd.words.push(word(text, inner));
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" | "comment" => {}
            _ => cmd.words.push(word(text, child)),
        }
    }
    (!cmd.words.is_empty()).then_some(cmd)
}

fn assignment(text: &str, node: tree_sitter::Node<'_>) -> Option<Assignment> {
    let name = node
        .child_by_field_name("name")
        .map(|n| slice(text, n).to_owned())?;
    let value = node
        .child_by_field_name("value")
        .map(|v| word(text, v).text)
        .unwrap_or_default();
    Some(Assignment {
        name,
        value,
        range: node.byte_range(),
    })
}

/// The static value of a word node.
fn word(text: &str, node: tree_sitter::Node<'_>) -> Word {
    let mut out = String::new();
    let mut dynamic = false;
    value(text, node, &mut out, &mut dynamic, 0);
    Word {
        text: out,
        range: node.byte_range(),
        dynamic,
        single_quoted: node.kind() == "raw_string",
    }
}

fn value(
    text: &str,
    node: tree_sitter::Node<'_>,
    out: &mut String,
    dynamic: &mut bool,
    depth: usize,
) {
    let src = slice(text, node);
    if depth > 64 {
        out.push_str(src);
        return;
    }
    match node.kind() {
        "raw_string" => {
            out.push_str(
                src.strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(src),
            );
        }
        "string" => {
            // Children carry the expansions; the text between them is literal.
            let inner_start = node.start_byte() + 1;
            let inner_end = node.end_byte().saturating_sub(1).max(inner_start);
            let mut pos = inner_start;
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                if child.kind() == "string_content" {
                    continue;
                }
                if child.start_byte() > pos {
                    out.push_str(&unescape_double(
                        text.get(pos..child.start_byte()).unwrap_or(""),
                    ));
                }
                value(text, child, out, dynamic, depth + 1);
                pos = child.end_byte();
            }
            if inner_end > pos {
                out.push_str(&unescape_double(text.get(pos..inner_end).unwrap_or("")));
            }
        }
        "simple_expansion"
        | "expansion"
        | "command_substitution"
        | "arithmetic_expansion"
        | "process_substitution" => {
            *dynamic = true;
            out.push_str(src);
        }
        "concatenation" => {
            let mut cursor = node.walk();
            let mut pos = node.start_byte();
            for child in node.children(&mut cursor) {
                if child.start_byte() > pos {
                    out.push_str(text.get(pos..child.start_byte()).unwrap_or(""));
                }
                value(text, child, out, dynamic, depth + 1);
                pos = child.end_byte();
            }
        }
        "word" | "number" => out.push_str(&unescape_bare(src)),
        "ansi_c_string" | "translated_string" => {
            *dynamic = true;
            out.push_str(src);
        }
        _ => out.push_str(src),
    }
}

/// Backslash escapes outside quotes: `\x` is `x`; a backslash-newline disappears.
fn unescape_bare(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside double quotes only `\$`, `` \` ``, `\"`, `\\` and backslash-newline are escapes.
fn unescape_double(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.push(chars.next().unwrap_or('\\')),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {

    use super::*;

    fn words(c: &Command) -> Vec<&str> {
        c.words.iter().map(|w| w.text.as_str()).collect()
    }

    #[test]
    fn finds_commands_everywhere() {
        let s = parse(
            "#!/bin/bash\nset -e\nNPROC=4\nexport NCCL_IB_HCA=mlx5\nf() { torchrun --nproc-per-node $NPROC a.py; }\nif true; then\n  exec_all torchrun \\\n    --nnodes 2 \\\n    --node-rank '$RANK' \\\n    --master-addr \"$MULTINODE_NODE_IP\" x.py && echo ok | tee log\nfi\nfor i in 1 2; do echo $(hostname); done\ncat <<EOF\ntorchrun not-a-command\nEOF\n",
        );
        let all: Vec<Vec<&str>> = s.commands.iter().map(words).collect();
        assert!(all.contains(&vec!["set", "-e"]));
        assert!(all.contains(&vec!["torchrun", "--nproc-per-node", "$NPROC", "a.py"]));
        assert!(all.contains(&vec![
            "exec_all",
            "torchrun",
            "--nnodes",
            "2",
            "--node-rank",
            "$RANK",
            "--master-addr",
            "$MULTINODE_NODE_IP",
            "x.py"
        ]));
        assert!(all.contains(&vec!["hostname"]), "{all:?}");
        assert!(
            !all.iter().any(|c| c.contains(&"not-a-command")),
            "heredoc bodies are not commands"
        );
        let ea = s
            .commands
            .iter()
            .find(|c| c.words[0].text == "exec_all")
            .unwrap();
        let rank = &ea.words[5];
        assert!(rank.single_quoted && rank.text == "$RANK");
        let addr = &ea.words[7];
        assert!(addr.dynamic && !addr.single_quoted);
        assert_eq!(
            s.assigned_before("NPROC", 1000).map(|a| a.value.as_str()),
            Some("4")
        );
        assert_eq!(
            s.assigned_before("NCCL_IB_HCA", 1000)
                .map(|a| a.value.as_str()),
            Some("mlx5")
        );
    }

    #[test]
    fn word_ranges_are_exact() {
        let text = "torchrun --nproc-per-node=8 \"a b.py\" 'x'";
        let s = parse(text);
        let c = &s.commands[0];
        for w in &c.words {
            let src = &text[w.range.clone()];
            assert!(
                src.contains(w.text.trim_matches('"')) || src.trim_matches(['"', '\'']) == w.text,
                "{src:?} vs {:?}",
                w.text
            );
        }
        assert_eq!(&text[c.words[1].range.clone()], "--nproc-per-node=8");
        assert_eq!(c.words[2].text, "a b.py");
    }

    #[test]
    fn inline_assignments_and_errors() {
        let s = parse("NCCL_DEBUG=INFO torchrun x.py\nif then fi ((\necho after");
        let c = &s.commands[0];
        assert_eq!(c.assignments[0].name, "NCCL_DEBUG");
        assert_eq!(words(c), vec!["torchrun", "x.py"]);
        assert!(s.has_errors);
        assert!(
            s.commands.iter().any(|c| c.words[0].text == "echo"),
            "{:?}",
            s.commands
        );
    }

    #[test]
    fn never_panics_on_garbage() {
        for t in [
            "",
            "'",
            "\"",
            "$(",
            "<<EOF",
            "\\",
            "((((((",
            "a=\u{0}",
            &"(".repeat(5000),
        ] {
            let _ = parse(t);
        }
    }
}
