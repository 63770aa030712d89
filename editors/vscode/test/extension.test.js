// The extension against stand-ins for `vscode` and `vscode-languageclient/node` (neither is
// needed to run this: `node --test test/`): what it starts, with which options and settings.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const Module = require("node:module");
const path = require("node:path");
const fs = require("node:fs");

function load(config) {
  const started = [];
  const watchers = [];
  const handlers = [];
  const errors = [];
  const vscode = {
    workspace: {
      getConfiguration: (name) => {
        assert.strictEqual(name, "fuzzlint");
        return { get: (k) => config[k] };
      },
      createFileSystemWatcher: (glob) => {
        watchers.push(glob);
        return { glob };
      },
      onDidChangeConfiguration: (h) => {
        handlers.push(h);
        return { dispose() {} };
      },
    },
    window: { showErrorMessage: (m) => errors.push(m) },
  };
  class LanguageClient {
    constructor(id, name, serverOptions, clientOptions) {
      Object.assign(this, { id, name, serverOptions, clientOptions, stopped: false });
      started.push(this);
    }
    async start() {
      if (config.__fail) throw new Error("spawn fuzzlint ENOENT");
    }
    async stop() {
      this.stopped = true;
    }
  }
  const stubs = {
    vscode,
    "vscode-languageclient/node": { LanguageClient, TransportKind: { stdio: 0 } },
  };
  const original = Module._load;
  Module._load = function (request, parent, isMain) {
    if (request in stubs) return stubs[request];
    return original.call(this, request, parent, isMain);
  };
  const file = require.resolve("../extension.js");
  delete require.cache[file];
  try {
    return { ext: require(file), started, watchers, handlers, errors };
  } finally {
    Module._load = original;
  }
}

test("starts `fuzzlint server` for .fz and YAML files with the editor's settings", async () => {
  const { ext, started, watchers } = load({
    path: "/opt/bin/fuzzlint",
    cluster: "clusters/h100.toml",
    select: ["FZ2", "unknown-key"],
    config: null,
    debounceMs: 50,
  });
  await ext.activate({ subscriptions: [] });
  assert.strictEqual(started.length, 1);
  const c = started[0];
  assert.deepStrictEqual(c.serverOptions.args, ["server"]);
  assert.strictEqual(c.serverOptions.command, "/opt/bin/fuzzlint");
  const languages = c.clientOptions.documentSelector.map((d) => d.language);
  assert.ok(languages.includes("fuzzfile") && languages.includes("yaml"));
  // Templates have their own language in VS Code: without it they never reach the server.
  assert.ok(languages.includes("fuzzfile-template"));
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));
  for (const l of pkg.contributes.languages) {
    assert.ok(languages.includes(l.id), `language ${l.id} is declared but not sent to the server`);
  }
  // Unset and null settings are left out; the extension's own `path` is not the server's.
  assert.deepStrictEqual(c.clientOptions.initializationOptions, {
    cluster: "clusters/h100.toml",
    select: ["FZ2", "unknown-key"],
    debounceMs: 50,
  });
  assert.strictEqual(c.clientOptions.synchronize.configurationSection, "fuzzlint");
  assert.ok(watchers.includes("**/fuzzlint.toml"));
});

test("a new fuzzlint.path restarts the server with it", async () => {
  const config = { path: "fuzzlint" };
  const { ext, started, handlers } = load(config);
  await ext.activate({ subscriptions: [] });
  config.path = "/usr/local/bin/fuzzlint";
  await handlers[0]({ affectsConfiguration: (k) => k === "fuzzlint.path" });
  assert.strictEqual(started.length, 2);
  assert.ok(started[0].stopped);
  assert.strictEqual(started[1].serverOptions.command, "/usr/local/bin/fuzzlint");
});

test("a server that cannot start is reported with what to do", async () => {
  const { ext, errors } = load({ __fail: true });
  await ext.activate({ subscriptions: [] });
  assert.strictEqual(errors.length, 1);
  assert.match(errors[0], /cannot start `fuzzlint server`/);
  assert.match(errors[0], /fuzzlint\.path/);
});

test("package.json declares a setting for each server setting, and the extension's own", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));
  const declared = Object.keys(pkg.contributes.configuration.properties).sort();
  const { ext } = load({});
  const expected = ext.SERVER_SETTINGS.map((k) => `fuzzlint.${k}`)
    .concat(["fuzzlint.path", "fuzzlint.trace.server"])
    .sort();
  assert.deepStrictEqual(declared, expected);
  assert.deepStrictEqual(pkg.contributes.languages[0].extensions, [".fz"]);
});

test("templates are their own language, named as the server and docs/editors.md name them, with the template grammar", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));
  const lang = pkg.contributes.languages.find((l) => l.id === "fuzzfile-template");
  assert.ok(lang, "no fuzzfile-template language");
  assert.deepStrictEqual(lang.filenames, ["template.yaml"]);
  assert.deepStrictEqual(lang.filenamePatterns, ["*.template.yaml", "*.template.yml", "*.template.fz"]);
  const grammar = pkg.contributes.grammars.find((g) => g.language === "fuzzfile-template");
  assert.strictEqual(grammar && grammar.scopeName, "source.fuzzfile.template");
  assert.ok(pkg.activationEvents.includes("onLanguage:fuzzfile-template"));
  // The same names as docs/editors.md gives for templates.
  const doc = fs.readFileSync(path.join(__dirname, "..", "..", "..", "docs", "editors.md"), "utf8");
  for (const name of lang.filenames.concat(lang.filenamePatterns)) {
    assert.ok(doc.includes("`" + name + "`"), `${name} is not in docs/editors.md`);
  }
});
