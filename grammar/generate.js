#!/usr/bin/env node
// Writes fuzzfile.tmLanguage.json and fuzzfile-template.tmLanguage.json beside this file,
// and Helix's highlights query (editors/helix/runtime/queries/fuzzfile/highlights.scm).
//
// The grammars are written here as JavaScript (regular expressions are easier to read in
// String.raw than in JSON) and two tables are read from the Rust sources, so there is one
// source of truth for each:
//   - the Fuzzfile keys: crates/fuzzfile_model/src/schema.rs (every `KeySpec` of every place);
//   - the template functions: crates/fuzzfile_template/src/funcs.rs (`NAMES`).
// The generated files are committed; tests/grammar fails when they differ from what this
// script writes (`node grammar/generate.js` or UPDATE_SNAPSHOTS=1 in tests/grammar rewrites).
// Node.js only, no packages.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const ROOT = path.join(__dirname, "..");
const SCHEMA_RS = path.join(ROOT, "crates", "fuzzfile_model", "src", "schema.rs");
const FUNCS_RS = path.join(ROOT, "crates", "fuzzfile_template", "src", "funcs.rs");

/// Every key of the model's table, with whether any place has it as a current key.
function modelKeys(text = fs.readFileSync(SCHEMA_RS, "utf8")) {
  const keys = new Map(); // name -> current anywhere
  const note = (name, current) => keys.set(name, (keys.get(name) || false) || current);
  for (const m of text.matchAll(/\b(k|v4|dep|removed)\(\s*"([^"]+)"/g)) {
    note(m[2], m[1] === "k" || m[1] === "v4");
  }
  for (const m of text.matchAll(/KeySpec\s*\{\s*name:\s*"([^"]+)"[\s\S]*?status:\s*Status::(\w+)/g)) {
    note(m[1], m[2] === "Current");
  }
  if (keys.size < 20) {
    throw new Error(`${SCHEMA_RS}: found only ${keys.size} keys; has the table's form changed?`);
  }
  const current = [...keys].filter(([, c]) => c).map(([n]) => n).sort();
  const retired = [...keys].filter(([, c]) => !c).map(([n]) => n).sort();
  return { current, retired };
}

/// The template engine's function names (Go builtins and slim-sprig), in table order.
function templateFunctions(text = fs.readFileSync(FUNCS_RS, "utf8")) {
  const start = text.indexOf("pub const NAMES: &[&str] = &[");
  const end = start < 0 ? -1 : text.indexOf("\n];", start);
  if (start < 0 || end < 0) throw new Error(`${FUNCS_RS}: no \`pub const NAMES\` table`);
  const table = text.slice(start, end);
  // The table lists Go's builtins first, then (after a `// slim-sprig` comment) sprig's.
  const split = table.indexOf("// slim-sprig");
  const words = (t) => [...t.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  const builtins = words(split < 0 ? "" : table.slice(0, split));
  const sprig = words(split < 0 ? table : table.slice(split)).filter((n) => !builtins.includes(n));
  if (builtins.length < 10 || sprig.length < 20) {
    throw new Error(`${FUNCS_RS}: found ${builtins.length} builtins and ${sprig.length} sprig functions`);
  }
  return { builtins, sprig };
}

/// A regex alternation of literal words, longest first (so `task-array` wins over `task`).
function alternation(words) {
  return [...words]
    .sort((a, b) => b.length - a.length || a.localeCompare(b))
    .map((w) => w.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&"))
    .join("|");
}

// A shell program as the first word of `command:` (`sh`, `/bin/bash`, `/usr/bin/dash`, ...).
const SHELL = String.raw`(?:/usr)?(?:/bin/)?(?:ba|da|z|k|mk)?sh`;
// The first word of a one-line script (`sh -c "echo hi"`): VS Code's shell grammar names a
// command only after a line start or an operator, and here a quote comes before it.
const FIRST_COMMAND = {
  match: String.raw`\G[ \t]*+(?!(?:if|then|else|elif|fi|for|while|until|do|done|case|esac|select|function|time|in)(?![\w./+-]))([A-Za-z_./][A-Za-z0-9_./+-]*)(?=[ \t;|&)]|$)`,
  captures: { 1: { name: "entity.name.function.call.shell entity.name.command.shell" } },
};
// What may follow a key's colon on its line when the value is on the next lines.
const REST = String.raw`[ \t]*(#.*)?$`;
// Only whole grammars are included (`source.yaml`, `source.shell`), never one of their rules:
// hosts ship different YAML grammars (VS Code's has other rule names than TextMate's).
const COMMENT = { patterns: [{ include: "#comment" }] };
const ITEM = "punctuation.definition.block.sequence.item.yaml";
const COLON = "punctuation.separator.key-value.mapping.yaml";
const KEY = "support.type.property-name.fuzzfile";
// A block scalar header: `|`, `>-`, `|2+` ...
const BLOCK_HEADER = String.raw`(?:(\|)|(>))([1-9])?([-+])?([1-9])?`;
const blockHeaderCaptures = (first) => ({
  [first]: { name: "keyword.control.flow.block-scalar.literal.yaml" },
  [first + 1]: { name: "keyword.control.flow.block-scalar.folded.yaml" },
  [first + 2]: { name: "constant.numeric.indentation-indicator.yaml" },
  [first + 3]: { name: "storage.modifier.chomping-indicator.yaml" },
  [first + 4]: { name: "constant.numeric.indentation-indicator.yaml" },
  [first + 5]: COMMENT,
});
// Lines that still belong to what a line indented by \1 opened: deeper lines and blank lines.
const DEEPER = String.raw`^(?=\1[ \t]+\S|[ \t]*$)`;
// ... and, for a key whose value is a block sequence, items at the key's own indentation.
const DEEPER_OR_ITEM = String.raw`^(?=\1[ \t]+\S|\1-[ \t]|\1-$|[ \t]*$)`;

function fuzzfileGrammar(keys) {
  return {
    $schema: "https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json",
    $comment:
      "Generated by grammar/generate.js from crates/fuzzfile_model/src/schema.rs; do not edit. A Fuzzfile is YAML (source.yaml) with its keys, job and service names, references and $VARs scoped, and the shell (source.shell) inside `script:` and after `sh -c` in `command:`.",
    name: "Fuzzfile",
    scopeName: "source.fuzzfile",
    fileTypes: ["fz"],
    patterns: [{ include: "#section" }, { include: "#body" }],
    injections: {
      // $VAR and ${VAR} in YAML scalars (the shell grammar scopes its own).
      "L:source.fuzzfile -source.shell -comment -entity.name.tag": { patterns: [{ include: "#variable" }] },
      // Keys in flow mappings: `image: {uri: ...}`, `cpu: {cores: 8}`.
      "L:meta.flow-mapping.yaml -meta.flow-pair -meta.dependencies -string -comment": { patterns: [{ include: "#flow-key" }] },
    },
    repository: {
      section: {
        // `jobs:` and `services:`: the keys one level in are names; what is under them is a
        // job's or a service's body.
        patterns: [
          {
            begin: String.raw`^(jobs|services)[ \t]*(:)${REST}`,
            beginCaptures: { 1: { name: KEY }, 2: { name: COLON }, 3: COMMENT },
            while: String.raw`^(?=[ \t]|$|#)`,
            name: "meta.section.$1.fuzzfile",
            patterns: [{ include: "#member" }, { include: "#body" }],
          },
          {
            begin: String.raw`^(volumes|files)[ \t]*(:)${REST}`,
            beginCaptures: { 1: { name: KEY }, 2: { name: COLON }, 3: COMMENT },
            while: String.raw`^(?=[ \t]|$|#)`,
            name: "meta.section.$1.fuzzfile",
            patterns: [{ include: "#named-block" }, { include: "#named" }, { include: "#body" }],
          },
        ],
      },
      member: {
        // A job's or a service's name (a template may write it as an action: `{{ .Name }}:`).
        begin: String.raw`^([ \t]+)(?=(?:[A-Za-z0-9_"']|\{\{)[^:#]*?[ \t]*:[ \t]*(?:#.*)?$)`,
        while: String.raw`^(?=\1[ \t]+\S|[ \t]*$|[ \t]*#)`,
        name: "meta.member.fuzzfile",
        patterns: [
          {
            match: String.raw`\G(["']?)([A-Za-z0-9_][A-Za-z0-9_.-]*)\1[ \t]*(:)`,
            captures: {
              2: { name: "entity.name.function.member.fuzzfile" },
              3: { name: COLON },
            },
          },
          { include: "#body" },
        ],
      },
      "named-block": {
        // A file's content under `files:` (`run.sh: |`): shell when the name ends in .sh or
        // .bash, else a string.
        patterns: [
          {
            begin: String.raw`^([ \t]+)([A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:sh|bash))[ \t]*(:)[ \t]+${BLOCK_HEADER}${REST}`,
            beginCaptures: { 2: { name: "entity.name.type.fuzzfile" }, 3: { name: COLON }, ...blockHeaderCaptures(4) },
            while: DEEPER,
            name: "meta.embedded.block.shell.fuzzfile",
            contentName: "source.shell",
            patterns: [{ include: "source.shell" }],
          },
          {
            begin: String.raw`^([ \t]+)([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*(:)[ \t]+${BLOCK_HEADER}${REST}`,
            beginCaptures: { 2: { name: "entity.name.type.fuzzfile" }, 3: { name: COLON }, ...blockHeaderCaptures(4) },
            while: DEEPER,
            contentName: "string.unquoted.block.yaml",
          },
        ],
      },
      named: {
        // A volume's or a file's key.
        begin: String.raw`^([ \t]+)([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*(:)(?=[ \t]|$)`,
        beginCaptures: { 2: { name: "entity.name.type.fuzzfile" }, 3: { name: COLON } },
        while: String.raw`^(?=\1[ \t]+\S|[ \t]*$|[ \t]*#)`,
        patterns: [{ include: "#body" }],
      },
      body: {
        patterns: [
          { include: "#script" },
          { include: "#command" },
          { include: "#references" },
          { include: "#block-scalar" },
          { include: "#key" },
          { include: "#yaml" },
          // Never reached for the YAML above; whatever the host's YAML grammar adds.
          { include: "source.yaml" },
        ],
      },
      "block-scalar": {
        // `key: |` and `- >-` with any key: the block is a string (script: is shell, above), or
        // shell for a file shipped as `/opt/run.sh: |` under a job's `files:`.
        patterns: [
          {
            begin: String.raw`^([ \t]*)([/\w.-]*\.(?:sh|bash))[ \t]*(:)[ \t]+${BLOCK_HEADER}${REST}`,
            beginCaptures: { 2: { name: "string.unquoted.plain.out.yaml entity.name.tag.yaml" }, 3: { name: COLON }, ...blockHeaderCaptures(4) },
            while: DEEPER,
            name: "meta.embedded.block.shell.fuzzfile",
            contentName: "source.shell",
            patterns: [{ include: "source.shell" }],
          },
          {
            begin: String.raw`^([ \t]*)(?:(-)[ \t]+)?(?:(${alternation(keys.current)})|([^\s#:'"{}\[\],&*!|>%@\x60-][^#]*?))[ \t]*(:)[ \t]+${BLOCK_HEADER}${REST}`,
            beginCaptures: {
              2: { name: ITEM },
              3: { name: KEY },
              4: { name: "entity.name.tag.yaml" },
              5: { name: COLON },
              ...blockHeaderCaptures(6),
            },
            while: DEEPER,
            contentName: "string.unquoted.block.yaml",
          },
          {
            begin: String.raw`^([ \t]*)(-)[ \t]+${BLOCK_HEADER}${REST}`,
            beginCaptures: { 2: { name: ITEM }, ...blockHeaderCaptures(3) },
            while: DEEPER,
            contentName: "string.unquoted.block.yaml",
          },
        ],
      },
      yaml: {
        // The YAML a Fuzzfile uses, read by this grammar itself so that it colours the same
        // whichever YAML grammar the host has (VS Code's and TextMate's differ).
        patterns: [
          { match: String.raw`^(---|\.\.\.)(?=[ \t]|$)`, name: "entity.other.document.yaml" },
          { begin: String.raw`(?:^|(?<=[ \t]))(?=#)`, end: "$", patterns: [{ include: "#comment" }] },
          {
            // A key the model does not know.
            match: String.raw`^([ \t]*)(?:(-)[ \t]+)?([^\s#:'"{}\[\],&*!|>%@\x60-](?:[^#:]|:(?![ \t]|$))*?|<<)[ \t]*(:)(?=[ \t]|$)`,
            captures: {
              2: { name: ITEM },
              3: { name: "string.unquoted.plain.out.yaml entity.name.tag.yaml" },
              4: { name: COLON },
            },
          },
          { match: String.raw`^[ \t]*(-)(?=[ \t]|$)`, captures: { 1: { name: ITEM } } },
          { match: String.raw`(?<=^|[ \t])(-)(?=[ \t]|$)`, name: ITEM },
          {
            match: String.raw`(&)([^\s,\[\]{}]+)`,
            captures: { 1: { name: "punctuation.definition.anchor.yaml" }, 2: { name: "entity.name.type.anchor.yaml" } },
          },
          {
            match: String.raw`(\*)([^\s,\[\]{}]+)`,
            captures: { 1: { name: "punctuation.definition.alias.yaml" }, 2: { name: "variable.other.alias.yaml" } },
          },
          { match: String.raw`!\S*`, name: "storage.type.tag.yaml" },
          {
            match: String.raw`(?:true|false|True|False|TRUE|FALSE|null|Null|NULL|~)(?=[ \t]*(?:#|$))`,
            name: "constant.language.yaml",
          },
          {
            match: String.raw`[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|0x\h+|0o[0-7]+|\.inf|\.nan)(?=[ \t]*(?:#|$))`,
            name: "constant.numeric.yaml",
          },
          {
            // A begin/end rule, not a match: `$VAR`s are injected inside.
            begin: String.raw`(?=[^\s#'"\[{])`,
            end: String.raw`(?=[ \t]+#|[ \t]*$)`,
            name: "string.unquoted.plain.out.yaml",
          },
          { include: "#flow-value" },
        ],
      },
      key: {
        patterns: [
          {
            match: String.raw`(?:^[ \t]*(?:(-)[ \t]+)?|(?<=[{,])[ \t]*)(${alternation(keys.current)})[ \t]*(:)(?=[ \t]|$)`,
            captures: { 1: { name: ITEM }, 2: { name: KEY }, 3: { name: COLON } },
          },
          {
            match: String.raw`(?:^[ \t]*(?:(-)[ \t]+)?|(?<=[{,])[ \t]*)(${alternation(keys.retired)})[ \t]*(:)(?=[ \t]|$)`,
            captures: {
              1: { name: ITEM },
              2: { name: `${KEY} invalid.deprecated.key.fuzzfile` },
              3: { name: COLON },
            },
          },
        ],
      },
      comment: {
        match: String.raw`(#).*`,
        captures: { 1: { name: "punctuation.definition.comment.yaml" } },
        name: "comment.line.number-sign.yaml",
      },
      "flow-value": {
        // A value in a flow collection this grammar reads itself.
        patterns: [
          {
            begin: '"',
            beginCaptures: { 0: { name: "punctuation.definition.string.begin.yaml" } },
            end: '"',
            endCaptures: { 0: { name: "punctuation.definition.string.end.yaml" } },
            name: "string.quoted.double.yaml",
            patterns: [
              {
                match: String.raw`\\([ "/0LN\\_abefnprtv]|x\h{2}|u\h{4}|U\h{8})`,
                name: "constant.character.escape.yaml",
              },
            ],
          },
          {
            begin: "'",
            beginCaptures: { 0: { name: "punctuation.definition.string.begin.yaml" } },
            end: "'(?!')",
            endCaptures: { 0: { name: "punctuation.definition.string.end.yaml" } },
            name: "string.quoted.single.yaml",
            patterns: [{ match: "''", name: "constant.character.escape.single-quoted.yaml" }],
          },
          {
            begin: String.raw`\[`,
            beginCaptures: { 0: { name: "punctuation.definition.sequence.begin.yaml" } },
            end: String.raw`\]`,
            endCaptures: { 0: { name: "punctuation.definition.sequence.end.yaml" } },
            name: "meta.flow-sequence.yaml",
            patterns: [{ match: ",", name: "punctuation.separator.sequence.yaml" }, { include: "#flow-value" }],
          },
          {
            begin: String.raw`\{`,
            beginCaptures: { 0: { name: "punctuation.definition.mapping.begin.yaml" } },
            end: String.raw`\}`,
            endCaptures: { 0: { name: "punctuation.definition.mapping.end.yaml" } },
            name: "meta.flow-mapping.yaml",
            patterns: [
              { match: ",", name: "punctuation.separator.mapping.yaml" },
              { include: "#flow-key" },
              { match: ":(?=[ \\t]|$|[,\\[\\]{}])", name: COLON },
              { include: "#flow-value" },
            ],
          },
          { include: "#comment" },
          {
            match: String.raw`(?:true|false|null|~)(?=[ \t]*(?:[,\]}]|$))`,
            name: "constant.language.yaml",
          },
          {
            match: String.raw`[-+]?[0-9][0-9_.eE+-]*(?=[ \t]*(?:[,\]}]|$))`,
            name: "constant.numeric.yaml",
          },
          {
            begin: String.raw`(?=[^\s,\[\]{}#"'])`,
            end: String.raw`(?=[ \t]*(?:[,\[\]{}]|:(?:[ \t]|$)|$)|[ \t]+#)`,
            name: "string.unquoted.plain.in.yaml",
          },
        ],
      },
      "flow-key": {
        patterns: [
          {
            match: String.raw`(?<![^ \t{,])(${alternation(keys.current)})(?=[ \t]*:(?:[ \t]|$|[,\[\]{}]))`,
            name: KEY,
          },
          {
            match: String.raw`(?<![^ \t{,])(${alternation(keys.retired)})(?=[ \t]*:(?:[ \t]|$|[,\[\]{}]))`,
            name: `${KEY} invalid.deprecated.key.fuzzfile`,
          },
        ],
      },
      variable: {
        patterns: [
          {
            match: String.raw`(\$\{)([A-Za-z_][A-Za-z0-9_]*)(\})`,
            captures: {
              1: { name: "punctuation.definition.variable.begin.fuzzfile" },
              2: { name: "variable.other.env.fuzzfile" },
              3: { name: "punctuation.definition.variable.end.fuzzfile" },
            },
            name: "meta.variable.fuzzfile",
          },
          {
            match: String.raw`(\$)([A-Za-z_][A-Za-z0-9_]*)`,
            captures: {
              1: { name: "punctuation.definition.variable.fuzzfile" },
              2: { name: "variable.other.env.fuzzfile" },
            },
            name: "meta.variable.fuzzfile",
          },
        ],
      },
      script: {
        // `script: |` and `script: >-`: the block is shell.
        begin: String.raw`^([ \t]*)(?:(-)[ \t]+)?(script)[ \t]*(:)[ \t]*${BLOCK_HEADER}${REST}`,
        beginCaptures: {
          2: { name: ITEM },
          3: { name: KEY },
          4: { name: COLON },
          ...blockHeaderCaptures(5),
        },
        while: DEEPER,
        name: "meta.embedded.block.shell.fuzzfile",
        contentName: "source.shell",
        patterns: [{ include: "source.shell" }],
      },
      command: {
        patterns: [
          {
            // command: [sh, -c, "..."]. A begin/while rule: its end is checked on each new
            // line before anything nested, so a shell string the script leaves open (the
            // shell grammar may take the closing YAML quote for a shell quote) ends with it.
            begin: String.raw`^([ \t]*)(?:(-)[ \t]+)?(command)[ \t]*(:)[ \t]*(?=\[)`,
            beginCaptures: { 2: { name: ITEM }, 3: { name: KEY }, 4: { name: COLON } },
            while: DEEPER,
            patterns: [{ include: "#command-flow" }, { include: "#comment" }],
          },
          {
            // command: followed by a block sequence.
            begin: String.raw`^([ \t]*)(?:(-)[ \t]+)?(command)[ \t]*(:)${REST}`,
            beginCaptures: { 2: { name: ITEM }, 3: { name: KEY }, 4: { name: COLON }, 5: COMMENT },
            while: DEEPER_OR_ITEM,
            patterns: [{ include: "#command-block" }, { include: "#body" }],
          },
        ],
      },
      "command-flow": {
        begin: String.raw`\[`,
        beginCaptures: { 0: { name: "punctuation.definition.sequence.begin.yaml" } },
        end: String.raw`\]`,
        endCaptures: { 0: { name: "punctuation.definition.sequence.end.yaml" } },
        name: "meta.flow-sequence.yaml",
        patterns: [
          {
            // The shell and -c; what follows is the script.
            begin: String.raw`\G[ \t]*((["']?)${SHELL}\2)[ \t]*(,)[ \t]*((["']?)-c\5)[ \t]*(,)[ \t]*`,
            beginCaptures: {
              1: { name: "string.unquoted.plain.in.yaml support.function.shell.fuzzfile" },
              3: { name: "punctuation.separator.sequence.yaml" },
              4: { name: "string.unquoted.plain.in.yaml" },
              6: { name: "punctuation.separator.sequence.yaml" },
            },
            end: String.raw`(?=\])`,
            patterns: [
              { include: "#shell-double-quoted" },
              { include: "#shell-single-quoted" },
              {
                begin: String.raw`(?<=,)[ \t]*(?=[^ \t,\]"'])`,
                end: String.raw`(?=[ \t]*[,\]])`,
                contentName: "meta.embedded.line.shell.fuzzfile source.shell",
                patterns: [FIRST_COMMAND, { include: "source.shell" }],
              },
              { match: ",", name: "punctuation.separator.sequence.yaml" },
              { include: "#flow-value" },
            ],
          },
          { match: ",", name: "punctuation.separator.sequence.yaml" },
          { include: "#flow-value" },
        ],
      },
      "shell-double-quoted": {
        begin: '"',
        beginCaptures: { 0: { name: "punctuation.definition.string.begin.yaml" } },
        end: '"',
        endCaptures: { 0: { name: "punctuation.definition.string.end.yaml" } },
        name: "string.quoted.double.yaml meta.embedded.line.shell.fuzzfile",
        contentName: "source.shell",
        patterns: [
          {
            match: String.raw`\\([ "/0LN\\_abefnprtv]|x\h{2}|u\h{4}|U\h{8})`,
            name: "constant.character.escape.yaml",
          },
          FIRST_COMMAND,
          { include: "source.shell" },
        ],
      },
      "shell-single-quoted": {
        begin: "'",
        beginCaptures: { 0: { name: "punctuation.definition.string.begin.yaml" } },
        end: "'(?!')",
        endCaptures: { 0: { name: "punctuation.definition.string.end.yaml" } },
        name: "string.quoted.single.yaml meta.embedded.line.shell.fuzzfile",
        contentName: "source.shell",
        patterns: [
          { match: "''", name: "constant.character.escape.single-quoted.yaml" },
          FIRST_COMMAND,
          { include: "source.shell" },
        ],
      },
      "command-block": {
        // - sh
        // - -c
        // - <script>   (a block scalar, a quoted or a plain scalar)
        // The items after `-c` are shell (the script, then its $0 $1 ..., rarely written).
        begin: String.raw`^([ \t]*)(-)[ \t]+((["']?)${SHELL}\4)${REST}`,
        beginCaptures: {
          2: { name: ITEM },
          3: { name: "string.unquoted.plain.out.yaml support.function.shell.fuzzfile" },
          5: COMMENT,
        },
        while: String.raw`^(?=\1-[ \t]|\1[ \t]+\S|[ \t]*$)`,
        patterns: [
          {
            begin: String.raw`^([ \t]*)(-)[ \t]+((["']?)-c\4)${REST}`,
            beginCaptures: { 2: { name: ITEM }, 3: { name: "string.unquoted.plain.out.yaml" }, 5: COMMENT },
            while: String.raw`^(?=\1-[ \t]|\1[ \t]+\S|[ \t]*$)`,
            patterns: [
              {
                begin: String.raw`^([ \t]*)(-)[ \t]+${BLOCK_HEADER}${REST}`,
                beginCaptures: { 2: { name: ITEM }, ...blockHeaderCaptures(3) },
                while: DEEPER,
                name: "meta.embedded.block.shell.fuzzfile",
                contentName: "source.shell",
                patterns: [{ include: "source.shell" }],
              },
              {
                begin: String.raw`^([ \t]*)(-)[ \t]+(?=["'])`,
                beginCaptures: { 2: { name: ITEM } },
                while: DEEPER,
                patterns: [{ include: "#shell-double-quoted" }, { include: "#shell-single-quoted" }, { include: "#comment" }],
              },
              {
                begin: String.raw`^([ \t]*)(-)[ \t]+(?=[^ \t#])`,
                beginCaptures: { 2: { name: ITEM } },
                while: DEEPER,
                name: "meta.embedded.block.shell.fuzzfile",
                contentName: "source.shell",
                patterns: [{ include: "source.shell" }],
              },
            ],
          },
          { include: "#body" },
        ],
      },
      references: {
        // Names of jobs and services: `requires: [a, b]`, `requires:` with a block list, and
        // `name:` under `depends-on`.
        patterns: [
          {
            begin: String.raw`^[ \t]*(requires)[ \t]*(:)[ \t]*(\[)`,
            beginCaptures: {
              1: { name: `${KEY} invalid.deprecated.key.fuzzfile` },
              2: { name: COLON },
              3: { name: "punctuation.definition.sequence.begin.yaml" },
            },
            end: String.raw`\]`,
            endCaptures: { 0: { name: "punctuation.definition.sequence.end.yaml" } },
            patterns: [
              { match: ",", name: "punctuation.separator.sequence.yaml" },
              { include: "#reference-name" },
            ],
          },
          {
            begin: String.raw`^([ \t]*)(requires)[ \t]*(:)${REST}`,
            beginCaptures: {
              2: { name: `${KEY} invalid.deprecated.key.fuzzfile` },
              3: { name: COLON },
              4: COMMENT,
            },
            while: DEEPER_OR_ITEM,
            patterns: [
              {
                match: String.raw`^[ \t]*(-)[ \t]+`,
                captures: { 1: { name: ITEM } },
              },
              { include: "#reference-name" },
            ],
          },
          {
            begin: String.raw`^([ \t]*)(depends-on)[ \t]*(:)${REST}`,
            beginCaptures: { 2: { name: KEY }, 3: { name: COLON }, 4: COMMENT },
            while: DEEPER_OR_ITEM,
            name: "meta.dependencies.fuzzfile",
            patterns: [
              { include: "#dependency-name" },
              {
                begin: String.raw`\{`,
                beginCaptures: { 0: { name: "punctuation.definition.mapping.begin.yaml" } },
                end: String.raw`\}`,
                endCaptures: { 0: { name: "punctuation.definition.mapping.end.yaml" } },
                name: "meta.flow-mapping.yaml",
                patterns: [
                  { include: "#dependency-name" },
                  { match: ",", name: "punctuation.separator.mapping.yaml" },
                  { include: "#flow-key" },
                  { match: ":(?=[ \\t]|$|[,\\[\\]{}])", name: COLON },
                  { include: "#flow-value" },
                ],
              },
              { include: "#body" },
            ],
          },
        ],
      },
      "dependency-name": {
        patterns: [
              {
                match: String.raw`(?:^[ \t]*(?:(-)[ \t]+)?|(?<=[{,])[ \t]*)(name)[ \t]*(:)[ \t]*((["']?)([A-Za-z0-9_][A-Za-z0-9_.-]*)\5)(?=[ \t]*(?:[,}]|#|$))`,
                captures: {
                  1: { name: ITEM },
                  2: { name: KEY },
                  3: { name: COLON },
                  4: { name: "string.unquoted.plain.yaml" },
                  6: { name: "entity.name.function.reference.fuzzfile" },
                },
              },
        ],
      },
      "reference-name": {
        patterns: [
          {
            match: String.raw`(["']?)([A-Za-z0-9_][A-Za-z0-9_.-]*)\1(?=[ \t]*(?:[,\]}]|#|$))`,
            captures: {
              0: { name: "string.unquoted.plain.yaml" },
              2: { name: "entity.name.function.reference.fuzzfile" },
            },
          },
        ],
      },
    },
  };
}

/// Go template actions, for Fuzzfile templates (`template.yaml`, `*.template.yaml`): the
/// Fuzzfile grammar with `{{ }}` actions injected everywhere, inside YAML strings and the
/// embedded shell too.
function templateGrammar({ builtins, sprig }) {
  return {
    $schema: "https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json",
    $comment:
      "Generated by grammar/generate.js from crates/fuzzfile_template/src/funcs.rs; do not edit. A Fuzzfile template: the Fuzzfile grammar with Go text/template actions injected.",
    name: "Fuzzfile template",
    scopeName: "source.fuzzfile.template",
    patterns: [{ include: "source.fuzzfile" }],
    injections: {
      "L:source.fuzzfile.template -comment.block.go-template -meta.action.go-template": {
        patterns: [{ include: "#action" }],
      },
      "L:source.fuzzfile.template -source.shell -comment -entity.name.tag -meta.action.go-template": {
        patterns: [{ include: "source.fuzzfile#variable" }],
      },
    },
    repository: {
      action: {
        patterns: [
          {
            begin: String.raw`(\{\{(?:-[ \t\r\n])?)[ \t]*(/\*)`,
            beginCaptures: {
              1: { name: "punctuation.section.embedded.begin.go-template" },
              2: { name: "punctuation.definition.comment.begin.go-template" },
            },
            end: String.raw`(\*/)[ \t]*((?:[ \t\r\n]-)?\}\})`,
            endCaptures: {
              1: { name: "punctuation.definition.comment.end.go-template" },
              2: { name: "punctuation.section.embedded.end.go-template" },
            },
            name: "meta.action.go-template comment.block.go-template",
          },
          {
            begin: String.raw`\{\{(?:-(?=[ \t\r\n]))?`,
            beginCaptures: { 0: { name: "punctuation.section.embedded.begin.go-template" } },
            end: String.raw`(?:(?<=[ \t])-)?\}\}`,
            endCaptures: { 0: { name: "punctuation.section.embedded.end.go-template" } },
            name: "meta.action.go-template",
            patterns: [{ include: "#pipeline" }],
          },
        ],
      },
      pipeline: {
        patterns: [
          {
            match: String.raw`\b(if|else|end|range|with|define|template|block|break|continue)\b`,
            name: "keyword.control.go-template",
          },
          { match: String.raw`\b(true|false|nil)\b`, name: "constant.language.go-template" },
          {
            match: String.raw`(?<![.$\w])(${alternation(builtins)})\b`,
            name: "support.function.builtin.go-template",
          },
          {
            match: String.raw`(?<![.$\w])(${alternation(sprig)})\b`,
            name: "support.function.go-template",
          },
          {
            match: String.raw`(\$)([A-Za-z_][A-Za-z0-9_]*)?`,
            captures: {
              0: { name: "variable.other.go-template" },
              1: { name: "punctuation.definition.variable.go-template" },
            },
          },
          {
            match: String.raw`(\.)([A-Za-z_][A-Za-z0-9_]*)`,
            captures: {
              1: { name: "punctuation.accessor.go-template" },
              2: { name: "variable.other.property.go-template" },
            },
          },
          { match: String.raw`\.`, name: "variable.language.dot.go-template" },
          {
            begin: '"',
            beginCaptures: { 0: { name: "punctuation.definition.string.begin.go-template" } },
            end: String.raw`"|$`,
            endCaptures: { 0: { name: "punctuation.definition.string.end.go-template" } },
            name: "string.quoted.double.go-template",
            patterns: [
              {
                match: String.raw`\\([abfnrtv\\'"]|x\h{2}|u\h{4}|U\h{8}|[0-7]{3})`,
                name: "constant.character.escape.go-template",
              },
            ],
          },
          {
            begin: "`",
            beginCaptures: { 0: { name: "punctuation.definition.string.begin.go-template" } },
            end: "`",
            endCaptures: { 0: { name: "punctuation.definition.string.end.go-template" } },
            name: "string.quoted.raw.go-template",
          },
          {
            match: String.raw`'(?:[^'\\]|\\.)+'`,
            name: "constant.character.go-template",
          },
          {
            match: String.raw`-?\b(?:0[xX][\h_]+|0[bB][01_]+|0[oO]?[0-7_]+|\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?)\b`,
            name: "constant.numeric.go-template",
          },
          { match: ":=|=", name: "keyword.operator.assignment.go-template" },
          { match: String.raw`\|`, name: "keyword.operator.pipe.go-template" },
          { match: String.raw`[()]`, name: "punctuation.section.parens.go-template" },
          { match: ",", name: "punctuation.separator.go-template" },
        ],
      },
    },
  };
}

/// Helix's highlights for the `fuzzfile` language (editors/helix): YAML's, with the
/// model's keys and the names of jobs and services given their own captures. Helix gives a
/// node the capture of the first pattern that matches it, so these come before YAML's.
function helixHighlights(keys) {
  const words = (list) => list.map((k) => JSON.stringify(k)).join(" ");
  const key = (capture, list) => `(block_mapping_pair
  key: (flow_node [(plain_scalar (string_scalar)) (double_quote_scalar) (single_quote_scalar)] @${capture}
    (#any-of? @${capture} ${words(list)})))

(flow_pair
  key: (flow_node [(plain_scalar (string_scalar)) (double_quote_scalar) (single_quote_scalar)] @${capture}
    (#any-of? @${capture} ${words(list)})))
`;
  return `; Generated by grammar/generate.js from crates/fuzzfile_model/src/schema.rs; do not edit.
; Fuzzfile keys (the model's key table), job and service names, and references; then YAML's.

; The names under \`jobs:\` and \`services:\`.
(block_mapping_pair
  key: (flow_node) @_section (#any-of? @_section "jobs" "services")
  value: (block_node
    (block_mapping
      (block_mapping_pair
        key: (flow_node) @function))))

; \`name:\` under \`depends-on:\` and the items of \`requires:\`.
(block_mapping_pair
  key: (flow_node) @_deps (#eq? @_deps "depends-on")
  value: (block_node
    (block_sequence
      (block_sequence_item
        [(block_node (block_mapping (block_mapping_pair
           key: (flow_node) @_name (#eq? @_name "name")
           value: (flow_node) @function)))
         (flow_node (flow_mapping (flow_pair
           key: (flow_node) @_name (#eq? @_name "name")
           value: (flow_node) @function)))]))))

(block_mapping_pair
  key: (flow_node) @_requires (#eq? @_requires "requires")
  value: [(flow_node (flow_sequence (flow_node) @function))
          (block_node (block_sequence (block_sequence_item (flow_node) @function)))])

; Keys every place has retired (deprecated or removed).
${key("warning", keys.retired)}
; Keys of the model.
${key("keyword", keys.current)}
; inherits: yaml
`;
}

/// Drops the `_`-prefixed notes some rules carry above (not part of the format).
function clean(value) {
  if (Array.isArray(value)) return value.map(clean);
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) if (!k.startsWith("_")) out[k] = clean(v);
    return out;
  }
  return value;
}

/// The files this script writes: path -> contents.
function generate() {
  const keys = modelKeys();
  const functions = templateFunctions();
  const out = {};
  out[path.join(__dirname, "fuzzfile.tmLanguage.json")] =
    JSON.stringify(clean(fuzzfileGrammar(keys)), null, 2) + "\n";
  out[path.join(__dirname, "fuzzfile-template.tmLanguage.json")] =
    JSON.stringify(clean(templateGrammar(functions)), null, 2) + "\n";
  out[path.join(ROOT, "editors", "helix", "runtime", "queries", "fuzzfile", "highlights.scm")] =
    helixHighlights(keys);
  return out;
}

module.exports = { generate, modelKeys, templateFunctions, SHELL };

if (require.main === module) {
  for (const [file, text] of Object.entries(generate())) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    console.log(`wrote ${path.relative(ROOT, file)}`);
  }
}
