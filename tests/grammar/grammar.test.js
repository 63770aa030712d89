// Snapshot tests of the TextMate grammars in grammar/, tokenized by vscode-textmate with the
// Oniguruma regular expressions VS Code uses (npm ci installs the pinned versions).
//
// Each fixtures/NAME is tokenized line by line and compared with snapshots/NAME.snap: every
// token's columns, text and scopes (the root scope left out). A change of the grammar that
// moves any token fails here; UPDATE_SNAPSHOTS=1 rewrites the snapshots (and the generated
// grammars, from grammar/generate.js) for review.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const fs = require("node:fs");
const path = require("node:path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");
const { generate } = require("../../grammar/generate.js");

const ROOT = path.join(__dirname, "..", "..");
const UPDATE = !!process.env.UPDATE_SNAPSHOTS;
const FIXTURES = path.join(__dirname, "fixtures");
const SNAPSHOTS = path.join(__dirname, "snapshots");

// The embedded grammars as VS Code has them: its shell grammar (from the tm-grammars
// package, whose NOTICE names the source) and its YAML grammar (vendor/vscode-yaml, README
// there). TEXTMATE_YAML is TextMate's YAML grammar (tm-grammars), another host's.
const VSCODE_YAML = path.join(__dirname, "vendor", "vscode-yaml");
const GRAMMARS = {
  "source.fuzzfile": path.join(ROOT, "grammar", "fuzzfile.tmLanguage.json"),
  "source.fuzzfile.template": path.join(ROOT, "grammar", "fuzzfile-template.tmLanguage.json"),
  "source.yaml": path.join(VSCODE_YAML, "yaml.tmLanguage.json"),
  "source.yaml.1.3": path.join(VSCODE_YAML, "yaml-1.3.tmLanguage.json"),
  "source.yaml.1.2": path.join(VSCODE_YAML, "yaml-1.2.tmLanguage.json"),
  "source.yaml.1.1": path.join(VSCODE_YAML, "yaml-1.1.tmLanguage.json"),
  "source.yaml.1.0": path.join(VSCODE_YAML, "yaml-1.0.tmLanguage.json"),
  "source.shell": require.resolve("tm-grammars/grammars/shellscript.json"),
};
const TEXTMATE_YAML = { ...GRAMMARS, "source.yaml": require.resolve("tm-grammars/grammars/yaml.json") };

let onigPromise;
const registries = new Map();
function registry(grammars = GRAMMARS) {
  onigPromise ??= (async () => {
    const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
    await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  })();
  if (!registries.has(grammars)) registries.set(grammars, (async () => {
    await onigPromise;
    const GRAMMARS = grammars;
    return new vsctm.Registry({
      onigLib: Promise.resolve({
        createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
        createOnigString: (s) => new oniguruma.OnigString(s),
      }),
      loadGrammar: async (scopeName) => {
        const file = GRAMMARS[scopeName];
        if (!file) return null;
        return vsctm.parseRawGrammar(fs.readFileSync(file, "utf8"), file);
      },
    });
  })());
  return registries.get(grammars);
}

async function grammarFor(name, grammars = GRAMMARS) {
  const scope = /(^|\.)template\.(yaml|yml|fz)$|^template\.yaml$/.test(name)
    ? "source.fuzzfile.template"
    : "source.fuzzfile";
  const grammar = await (await registry(grammars)).loadGrammar(scope);
  assert.ok(grammar, `grammar ${scope} did not load`);
  return { grammar, scope };
}

/// Every token of `text`: { line, start, end, text, scopes } (scopes without the root).
async function tokenize(name, text, grammars = GRAMMARS) {
  const { grammar } = await grammarFor(name, grammars);
  const out = [];
  let stack = vsctm.INITIAL;
  text.split("\n").forEach((line, i) => {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) {
      const end = Math.min(t.endIndex, line.length);
      if (end <= t.startIndex) continue;
      out.push({
        line: i + 1,
        start: t.startIndex,
        end,
        text: line.slice(t.startIndex, end),
        scopes: t.scopes.slice(1),
      });
    }
    stack = r.ruleStack;
  });
  return out;
}

function render(text, tokens) {
  const lines = text.split("\n");
  let out = "";
  lines.forEach((line, i) => {
    if (i === lines.length - 1 && line === "") return;
    out += `>${line}\n`;
    for (const t of tokens.filter((t) => t.line === i + 1)) {
      if (/^[ \t]*$/.test(t.text) && t.scopes.length === 0) continue;
      out += ` ${" ".repeat(t.start)}${"^".repeat(t.end - t.start)} ${t.scopes.join(" ")}\n`;
    }
  });
  return out;
}

/// The scopes of the first token whose text is `word` on the line containing `marker`.
function scopesOf(tokens, text, marker, word) {
  const lineNo = text.split("\n").findIndex((l) => l.includes(marker)) + 1;
  assert.ok(lineNo > 0, `no line with ${marker}`);
  const t =
    tokens.find((t) => t.line === lineNo && t.text === word) ??
    tokens.find((t) => t.line === lineNo && t.text.trim() !== "" && word.includes(t.text.trim()) && t.start === text.split("\n")[lineNo - 1].indexOf(word));
  assert.ok(t, `no token ${JSON.stringify(word)} on line ${lineNo}: ${JSON.stringify(tokens.filter((t) => t.line === lineNo).map((t) => t.text))}`);
  return t.scopes.join(" ");
}

test("the committed grammars are what grammar/generate.js writes from the model's key table", () => {
  for (const [file, text] of Object.entries(generate())) {
    const rel = path.relative(ROOT, file);
    if (UPDATE) fs.writeFileSync(file, text);
    const committed = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    assert.ok(
      committed === text,
      `${rel} differs from what grammar/generate.js writes (was schema.rs or funcs.rs changed?); run: node grammar/generate.js`,
    );
  }
});

for (const name of fs.readdirSync(FIXTURES).sort()) {
  test(`snapshot: ${name}`, async () => {
    const text = fs.readFileSync(path.join(FIXTURES, name), "utf8");
    const actual = render(text, await tokenize(name, text));
    const snap = path.join(SNAPSHOTS, `${name}.snap`);
    if (UPDATE) {
      fs.mkdirSync(SNAPSHOTS, { recursive: true });
      fs.writeFileSync(snap, actual);
    }
    assert.ok(fs.existsSync(snap), `no snapshot ${path.relative(ROOT, snap)}; run with UPDATE_SNAPSHOTS=1`);
    const expected = fs.readFileSync(snap, "utf8");
    if (actual !== expected) {
      // Name the first line that differs; the full diff is in the assertion below.
      const a = actual.split("\n");
      const e = expected.split("\n");
      const i = a.findIndex((l, j) => l !== e[j]);
      assert.strictEqual(
        actual,
        expected,
        `tokens of ${name} drifted from snapshots/${name}.snap at snapshot line ${i + 1}:\n  expected: ${e[i]}\n  actual:   ${a[i]}\n(UPDATE_SNAPSHOTS=1 rewrites it)`,
      );
    }
  });
}

test("the tokens are the same under TextMate's YAML grammar as under VS Code's", async () => {
  // The grammar reads the YAML of a Fuzzfile itself, so hosts with another source.yaml
  // (Shiki, TextMate bundles) colour Fuzzfiles the same.
  for (const name of fs.readdirSync(FIXTURES).sort()) {
    const text = fs.readFileSync(path.join(FIXTURES, name), "utf8");
    const vscode = render(text, await tokenize(name, text));
    const textmate = render(text, await tokenize(name, text, TEXTMATE_YAML));
    if (vscode !== textmate) {
      const a = vscode.split("\n");
      const b = textmate.split("\n");
      const i = a.findIndex((l, j) => l !== b[j]);
      assert.fail(`${name}, snapshot line ${i + 1}:\n  VS Code's YAML:   ${a[i]}\n  TextMate's YAML:  ${b[i]}`);
    }
  }
});

// What the snapshots must show, stated directly (so an accepted snapshot cannot hide a
// grammar that lost its embedding).

test("a script: block is shell: commands, keywords, variables and comments", async () => {
  const name = "script-block.fz";
  const text = fs.readFileSync(path.join(FIXTURES, name), "utf8");
  const tokens = await tokenize(name, text);
  assert.match(scopesOf(tokens, text, "set -euo", "set"), /meta\.embedded\.block\.shell\.fuzzfile source\.shell .*support\.function\.builtin\.shell/);
  assert.match(scopesOf(tokens, text, "for i in", "for"), /source\.shell .*keyword\.control/);
  assert.match(scopesOf(tokens, text, "echo \"rank", "RANK"), /source\.shell .*variable/);
  assert.match(scopesOf(tokens, text, "torchrun", "torchrun"), /source\.shell/);
  assert.match(scopesOf(tokens, text, "torchrun", " comment"), /source\.shell .*comment\.line/);
  // The block ends where the indentation does: `resource:` is a Fuzzfile key again.
  const res = scopesOf(tokens, text, "resource:", "resource");
  assert.doesNotMatch(res, /source\.shell/);
  assert.match(res, /support\.type\.property-name\.fuzzfile/);
  // Files shipped with a .sh name are shell too; other files are text.
  assert.match(scopesOf(tokens, text, "export PATH=/opt/bin", "export"), /source\.shell .*storage\.modifier/);
  assert.match(scopesOf(tokens, text, "wc -l", "wc"), /source\.shell .*entity\.name\.command\.shell/);
  assert.match(scopesOf(tokens, text, "  process.sh:", "process.sh"), /entity\.name\.type\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "plain: text", "    plain: text"), /string\.unquoted\.block\.yaml/);
  assert.match(scopesOf(tokens, text, "level = $LEVEL", "        level = "), /string\.unquoted\.block\.yaml/);
});

test("the string after sh -c in command: is shell, in flow and block sequences", async () => {
  const name = "sh-c.fz";
  const text = fs.readFileSync(path.join(FIXTURES, name), "utf8");
  const tokens = await tokenize(name, text);
  assert.match(scopesOf(tokens, text, "echo ready", "&&"), /string\.quoted\.double\.yaml meta\.embedded\.line\.shell\.fuzzfile source\.shell .*punctuation\.separator\.statement\.and\.shell/);
  assert.match(scopesOf(tokens, text, "echo ready", "NAME"), /source\.shell .*variable/);
  assert.match(scopesOf(tokens, text, "echo ready", "echo"), /source\.shell .*entity\.name\.command\.shell/);
  assert.match(scopesOf(tokens, text, "echo ready", "cat"), /source\.shell .*entity\.name\.command\.shell/);
  assert.match(scopesOf(tokens, text, "for f in", "for"), /string\.quoted\.single\.yaml .*source\.shell .*keyword\.control/);
  assert.match(scopesOf(tokens, text, "--nproc_per_node", "NPROC"), /meta\.embedded\.block\.shell\.fuzzfile source\.shell .*variable/);
  assert.match(scopesOf(tokens, text, "cd /opt", "&&"), /source\.shell/);
  // After the sequence, keys again; a command without a shell has no shell in it.
  assert.doesNotMatch(scopesOf(tokens, text, "cwd:", "cwd"), /source\.shell/);
  assert.doesNotMatch(scopesOf(tokens, text, "python3, train.py", "train.py"), /source\.shell/);
  // VS Code's shell grammar reads the closing YAML quote after `/opt/train.py` as a shell
  // quote; the string it opens ends with the line, and the next key is a key.
  const next = text.split("\n").findIndex((l) => l.includes("/opt/train.py")) + 2;
  const key = tokens.find((t) => t.line === next && t.text === "resource");
  assert.ok(key && key.scopes.includes("support.type.property-name.fuzzfile"), JSON.stringify(key));
});

test("Fuzzfile keys, names, references and $VARs have their own scopes", async () => {
  const name = "keys-vars.fz";
  const text = fs.readFileSync(path.join(FIXTURES, name), "utf8");
  const tokens = await tokenize(name, text);
  assert.match(scopesOf(tokens, text, "version:", "version"), /support\.type\.property-name\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "implementation:", "implementation"), /support\.type\.property-name\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "execute:", "execute"), /support\.type\.property-name\.fuzzfile/);
  // A key the model does not know stays a plain YAML key.
  const unknown = scopesOf(tokens, text, "unknown-thing", "unknown-thing");
  assert.doesNotMatch(unknown, /property-name/);
  assert.match(unknown, /entity\.name\.tag\.yaml/);
  assert.match(scopesOf(tokens, text, "  prepare:", "prepare"), /entity\.name\.function\.member\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "  scratch:", "scratch"), /entity\.name\.type\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "- name: prepare", "prepare"), /entity\.name\.function\.reference\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "{name: cache", "cache"), /entity\.name\.function\.reference\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "requires: [prepare", "cache"), /entity\.name\.function\.reference\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "requires: [prepare", "requires"), /invalid\.deprecated\.key\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "      - prepare", "prepare"), /entity\.name\.function\.reference\.fuzzfile/);
  // The name before `=` in an env entry is text, its value's `$PATH` a variable.
  const envLine = text.split("\n").findIndex((l) => l.includes("- PATH=")) + 1;
  const lineText = text.split("\n")[envLine - 1];
  const from = lineText.indexOf("PATH=");
  const to = lineText.indexOf("$");
  const before = tokens.filter((t) => t.line === envLine && t.start >= from && t.end <= to);
  assert.ok(before.length > 0 && before.every((t) => !t.scopes.some((x) => x.startsWith("variable"))), JSON.stringify(before));
  assert.match(scopesOf(tokens, text, "$PATH", "PATH"), /variable\.other\.env\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "${TAG}", "TAG"), /string\.quoted\.double\.yaml .*variable\.other\.env\.fuzzfile/);
  assert.match(scopesOf(tokens, text, "$MULTINODE_NUM_NODES", "MULTINODE_NUM_NODES"), /variable\.other\.env\.fuzzfile/);
});

test("template actions: keywords, functions, fields, variables and strings, in YAML and in shell", async () => {
  const name = "actions.template.yaml";
  const text = fs.readFileSync(path.join(FIXTURES, name), "utf8");
  const tokens = await tokenize(name, text);
  assert.match(scopesOf(tokens, text, "{{ .Name }}", "Name"), /meta\.action\.go-template variable\.other\.property\.go-template/);
  assert.match(scopesOf(tokens, text, "{{ .Image", "default"), /string\.quoted\.double\.yaml meta\.action\.go-template support\.function\.go-template/);
  assert.match(scopesOf(tokens, text, "{{ .Image", "\"alpine:3.20\""), /string\.quoted\.double\.go-template/);
  assert.match(scopesOf(tokens, text, "if gt", "if"), /keyword\.control\.go-template/);
  assert.match(scopesOf(tokens, text, "if gt", "gt"), /support\.function\.builtin\.go-template/);
  assert.match(scopesOf(tokens, text, "{{- end", "end"), /keyword\.control\.go-template/);
  assert.match(scopesOf(tokens, text, "the script", "/*"), /comment\.block\.go-template/);
  assert.match(scopesOf(tokens, text, "range $i", "range"), /source\.shell .*meta\.action\.go-template keyword\.control\.go-template/);
  assert.match(scopesOf(tokens, text, "range $i", "$f"), /variable\.other\.go-template/);
  assert.match(scopesOf(tokens, text, "range $i", ":="), /keyword\.operator\.assignment\.go-template/);
  assert.match(scopesOf(tokens, text, "echo $HOME", "HOME"), /source\.shell .*variable/);
  assert.match(scopesOf(tokens, text, "echo $HOME", "printf"), /support\.function\.builtin\.go-template/);
  // Keys are Fuzzfile keys in a template too.
  assert.match(scopesOf(tokens, text, "nodes:", "nodes"), /support\.type\.property-name\.fuzzfile/);
});

test("a plain Fuzzfile does not highlight {{ }} (shell `--format {{.Id}}` is common there)", async () => {
  const text = "jobs:\n  a:\n    command: [docker, ps, --format, \"{{.Id}}\"]\n";
  const tokens = await tokenize("plain.fz", text);
  assert.ok(!tokens.some((t) => t.scopes.some((s) => s.includes("go-template"))));
});

test("the VS Code extension's grammars are the files in grammar/, with their scope names", () => {
  const dir = path.join(ROOT, "editors", "vscode");
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const grammars = pkg.contributes.grammars;
  const scopes = grammars.map((g) => g.scopeName).sort();
  assert.deepStrictEqual(scopes, ["source.fuzzfile", "source.fuzzfile.template"]);
  for (const g of grammars) {
    const file = path.resolve(dir, g.path);
    assert.strictEqual(path.dirname(file), path.join(ROOT, "grammar"), `${g.path} is not in grammar/`);
    const grammar = JSON.parse(fs.readFileSync(file, "utf8"));
    assert.strictEqual(grammar.scopeName, g.scopeName, g.path);
    // Every embedded-language scope it names is one the grammar gives.
    for (const scope of Object.keys(g.embeddedLanguages || {})) {
      assert.ok(fs.readFileSync(GRAMMARS["source.fuzzfile"], "utf8").includes(scope), scope);
    }
  }
});

test("every example and spec file: each line `key:` with a model key outside a block is scoped as a Fuzzfile key", async () => {
  const { modelKeys } = require("../../grammar/generate.js");
  const keys = new Set(modelKeys().current);
  const files = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.fz$/.test(e.name)) files.push(p);
    }
  };
  walk(path.join(ROOT, "examples"));
  walk(path.join(ROOT, "tests", "specs"));
  assert.ok(files.length > 50, `only ${files.length} files`);
  const misses = [];
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    if (text.includes("\r") || text.includes("\t")) continue;
    const tokens = await tokenize(path.basename(file), text);
    text.split("\n").forEach((line, i) => {
      const m = /^( *)(?:- +)?([a-z][a-z-]*):(?: |$)/.exec(line);
      if (!m || !keys.has(m[2])) return;
      const t = tokens.find((t) => t.line === i + 1 && t.text === m[2]);
      const scopes = t ? t.scopes.join(" ") : "";
      // Inside a block scalar (a script, a file's content) a `key:` line is text.
      if (/string\.unquoted\.block|source\.shell|string\.quoted/.test(scopes)) return;
      if (!/support\.type\.property-name\.fuzzfile|entity\.name\.(function|type)/.test(scopes)) {
        misses.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()} -> ${scopes || "(no token)"}`);
      }
    });
  }
  assert.deepStrictEqual(misses, []);
});
