// The extension against stand-ins for `vscode` and `vscode-languageclient/node` (neither is
// needed to run this: `node --test test/`): what it starts, with which options and settings.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const Module = require("node:module");
const path = require("node:path");
const fs = require("node:fs");

function load(config, fuzzfileConfig = {}) {
  const started = [];
  const watchers = [];
  const handlers = [];
  const errors = [];
  const commands = new Map();
  const opened = [];
  const ui = { editor: undefined, pick: undefined, input: undefined, picks: [], inputs: 0 };
  const channel = { name: undefined, lines: [], appendLine: (l) => channel.lines.push(l), dispose() {} };
  const vscode = {
    workspace: {
      getConfiguration: (name) => {
        assert.ok(name === "fuzzlint" || name === "fuzzfile", name);
        const values = name === "fuzzlint" ? config : fuzzfileConfig;
        return { get: (k) => values[k] };
      },
      openTextDocument: async (opts) => {
        opened.push(opts);
        return opts;
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
    window: {
      showErrorMessage: (m) => errors.push(m),
      createOutputChannel: (name) => {
        assert.strictEqual(channel.name, undefined, "a second output channel");
        channel.name = name;
        return channel;
      },
      get activeTextEditor() {
        return ui.editor;
      },
      showTextDocument: async (doc) => doc,
      showQuickPick: async (items) => {
        ui.picks.push(items);
        return ui.pick && ui.pick(items);
      },
      showInputBox: async () => {
        ui.inputs++;
        return ui.input;
      },
    },
    commands: {
      registerCommand: (name, fn) => {
        assert.ok(!commands.has(name), `${name} registered twice`);
        commands.set(name, fn);
        return { dispose() {} };
      },
    },
    ViewColumn: { Beside: -2 },
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
    return { ext: require(file), started, watchers, handlers, errors, commands, opened, ui, channel };
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
  assert.match(errors[0], /cannot start `fuzzlint server` \(from PATH: spawn fuzzlint ENOENT\)/);
  assert.match(errors[0], /fuzzlint\.path/);
});

/** An extension folder whose server/fuzzlint is a file of `mode` (none when mode is null). */
function extensionDir(mode) {
  const dir = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "fuzzfile-ext-"));
  if (mode !== null) {
    fs.mkdirSync(path.join(dir, "server"));
    fs.writeFileSync(path.join(dir, "server", "fuzzlint"), "#!/bin/sh\n", { mode });
    fs.chmodSync(path.join(dir, "server", "fuzzlint"), mode);
  }
  return dir;
}

test("the server is the fuzzlint.path setting if set, else the bundled server/fuzzlint, else fuzzlint on PATH; the output channel says which", async (t) => {
  const bundled = extensionDir(0o755);
  const plain = extensionDir(null);
  t.after(() => {
    for (const d of [bundled, plain]) fs.rmSync(d, { recursive: true, force: true });
  });
  const cases = [
    // [setting, extension folder, command, where from]
    ["/opt/bin/fuzzlint", bundled, "/opt/bin/fuzzlint", "the fuzzlint.path setting"],
    ["fuzzlint", bundled, "fuzzlint", "the fuzzlint.path setting"],
    ["", bundled, path.join(bundled, "server", "fuzzlint"), "the server bundled with the extension"],
    [undefined, bundled, path.join(bundled, "server", "fuzzlint"), "the server bundled with the extension"],
    ["  ", bundled, path.join(bundled, "server", "fuzzlint"), "the server bundled with the extension"],
    ["", plain, "fuzzlint", "PATH"],
    [undefined, undefined, "fuzzlint", "PATH"],
  ];
  for (const [setting, dir, command, source] of cases) {
    const { ext, started, channel } = load({ path: setting });
    await ext.activate({ subscriptions: [], extensionPath: dir });
    const what = `setting ${JSON.stringify(setting)}, ${dir === bundled ? "bundled server" : "no bundled server"}`;
    assert.strictEqual(started[0].serverOptions.command, command, what);
    assert.strictEqual(channel.name, "Fuzzfile");
    assert.deepStrictEqual(channel.lines, [`Starting \`${command} server\` (from ${source}).`], what);
    // The language client writes to the same channel.
    assert.strictEqual(started[0].clientOptions.outputChannel, channel);
  }
});

test("fuzzlint.path is empty by default: the lookup goes on to the bundled server and PATH", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));
  assert.strictEqual(pkg.contributes.configuration.properties["fuzzlint.path"].default, "");
});

test("a bundled server that is not an executable file is passed over for PATH", async (t) => {
  const notExecutable = extensionDir(0o644);
  const directory = extensionDir(null);
  fs.mkdirSync(path.join(directory, "server", "fuzzlint"), { recursive: true });
  t.after(() => {
    for (const d of [notExecutable, directory]) fs.rmSync(d, { recursive: true, force: true });
  });
  for (const dir of [notExecutable, directory]) {
    const { ext, started, channel } = load({ path: "" });
    await ext.activate({ subscriptions: [], extensionPath: dir });
    assert.strictEqual(started[0].serverOptions.command, "fuzzlint");
    assert.match(channel.lines[0], /\(from PATH\)/);
  }
});

test("Explain a Rule runs the same fuzzlint as the server (the bundled one)", async (t) => {
  const dir = extensionDir(0o755);
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { execFile, calls } = fakeExecFile(() => ({ stdout: "FZ010  unknown-key  error A key\n" }));
  const { ext, commands, started, ui } = load({ path: "" });
  await ext.activate({ subscriptions: [], extensionPath: dir }, { execFile });
  ui.pick = () => undefined;
  await commands.get("fuzzfile.explainRule")();
  assert.strictEqual(calls[0].file, path.join(dir, "server", "fuzzlint"));
  assert.strictEqual(calls[0].file, started[0].serverOptions.command);
});

test("package.json declares a setting for each server setting, and the extension's own", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));
  const declared = Object.keys(pkg.contributes.configuration.properties).sort();
  const { ext } = load({});
  const expected = ext.SERVER_SETTINGS.map((k) => `fuzzlint.${k}`)
    .concat(["fuzzlint.path", "fuzzlint.trace.server", "fuzzfile.fuzzPath"])
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

/** A stand-in for child_process.execFile: records each call and answers with `reply(file, args)`. */
function fakeExecFile(reply) {
  const calls = [];
  const execFile = (file, args, opts, cb) => {
    calls.push({ file, args, opts });
    const r = reply(file, args) || {};
    setImmediate(() => cb(r.err || null, r.stdout || "", r.stderr || ""));
  };
  return { execFile, calls };
}

function editor(fsPath, languageId, extra = {}) {
  return { document: { languageId, isUntitled: false, isDirty: false, uri: { scheme: "file", fsPath }, ...extra } };
}

function exitError(code, extra = {}) {
  return Object.assign(new Error(`Command failed with exit ${code}`), { code }, extra);
}

const PKG = () => JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));

test("every command the extension registers is contributed under the Fuzzfile category, and no other", async () => {
  const { ext, commands } = load({});
  await ext.activate({ subscriptions: [] });
  const pkg = PKG();
  const declared = pkg.contributes.commands.map((c) => c.command).sort();
  assert.deepStrictEqual([...commands.keys()].sort(), declared);
  assert.deepStrictEqual(declared, [
    "fuzzfile.explainRule",
    "fuzzfile.restartServer",
    "fuzzfile.showJobGraph",
    "fuzzfile.showLaunchPlan",
  ]);
  for (const c of pkg.contributes.commands) assert.strictEqual(c.category, "Fuzzfile", c.command);
  for (const m of pkg.contributes.menus.commandPalette) assert.ok(declared.includes(m.command), m.command);
});

test("the file commands are in the palette for Fuzzfiles, templates and the YAML Fuzzfile names only", () => {
  const pkg = PKG();
  for (const name of ["fuzzfile.showLaunchPlan", "fuzzfile.showJobGraph"]) {
    const entry = pkg.contributes.menus.commandPalette.find((m) => m.command === name);
    assert.ok(entry && entry.when, `${name} has no when clause`);
    assert.match(entry.when, /editorLangId == fuzzfile\b/);
    assert.match(entry.when, /editorLangId == fuzzfile-template\b/);
    const regex = /resourceFilename =~ \/(.*)\/$/.exec(entry.when);
    assert.ok(regex, entry.when);
    const re = new RegExp(regex[1]);
    // The YAML names that the package's yamlValidation gives the Fuzzfile schema.
    for (const f of ["Fuzzfile.yaml", "Fuzzfile.yml", "train.fuzzfile.yaml", "a.fuzzfile.yml"]) assert.match(f, re);
    for (const f of ["values.yaml", "docker-compose.yml", "Fuzzfile.yaml.bak", "fuzzfile.yaml.txt"]) assert.doesNotMatch(f, re);
  }
});

test("Show Launch Plan runs `fuzz plan` on the active file, without a shell and with a time limit, and opens the JSON", async () => {
  const plan = '{\n  "version": 1,\n  "jobs": []\n}\n';
  const { execFile, calls } = fakeExecFile(() => ({ stdout: plan }));
  const { ext, commands, opened, errors, ui } = load({}, { fuzzPath: "/opt/bin/fuzz" });
  await ext.activate({ subscriptions: [] }, { execFile });
  ui.editor = editor("/w/jobs/train.fz", "fuzzfile");
  await commands.get("fuzzfile.showLaunchPlan")();
  assert.deepStrictEqual(errors, []);
  assert.strictEqual(calls.length, 1);
  assert.strictEqual(calls[0].file, "/opt/bin/fuzz");
  assert.deepStrictEqual(calls[0].args, ["plan", "--", "/w/jobs/train.fz"]);
  assert.strictEqual(calls[0].opts.timeout, ext.TOOL_TIMEOUT_MS);
  assert.ok(calls[0].opts.timeout > 0);
  assert.strictEqual(calls[0].opts.shell, undefined);
  assert.strictEqual(calls[0].opts.cwd, "/w/jobs");
  assert.deepStrictEqual(opened, [{ language: "json", content: plan }]);
});

test("Show Launch Plan saves an edited template first and runs `fuzz` from PATH by default", async () => {
  const { execFile, calls } = fakeExecFile(() => ({ stdout: "{}" }));
  const { ext, commands, opened, ui } = load({});
  await ext.activate({ subscriptions: [] }, { execFile });
  let saved = 0;
  ui.editor = editor("/w/app/template.yaml", "fuzzfile-template", {
    isDirty: true,
    save: async () => {
      saved++;
      assert.strictEqual(calls.length, 0, "ran before the file was saved");
      return true;
    },
  });
  await commands.get("fuzzfile.showLaunchPlan")();
  assert.strictEqual(saved, 1);
  assert.strictEqual(calls[0].file, "fuzz");
  assert.deepStrictEqual(calls[0].args, ["plan", "--", "/w/app/template.yaml"]);
  assert.strictEqual(opened.length, 1);
});

test("Show Launch Plan reports fuzz's standard error and opens nothing when the plan is refused", async () => {
  const stderr = "error[FZ010]: /w/bad.fz:3:5: unknown key `imagee` under job `train`\n";
  const { execFile } = fakeExecFile(() => ({ err: exitError(1), stderr }));
  const { ext, commands, opened, errors, ui } = load({});
  await ext.activate({ subscriptions: [] }, { execFile });
  ui.editor = editor("/w/bad.fz", "fuzzfile");
  await commands.get("fuzzfile.showLaunchPlan")();
  assert.deepStrictEqual(opened, []);
  assert.strictEqual(errors.length, 1);
  assert.ok(errors[0].includes("/w/bad.fz:3:5: unknown key `imagee`"), errors[0]);
  assert.match(errors[0], /exit 1/);
});

test("a missing fuzz names the setting, a tool past the time limit says so", async () => {
  const replies = [
    { err: Object.assign(new Error("spawn fuzz ENOENT"), { code: "ENOENT" }) },
    { err: Object.assign(new Error("killed"), { killed: true, signal: "SIGTERM", code: null }) },
  ];
  const { execFile } = fakeExecFile(() => replies.shift());
  const { ext, commands, opened, errors, ui } = load({});
  await ext.activate({ subscriptions: [] }, { execFile });
  ui.editor = editor("/w/a.fz", "fuzzfile");
  await commands.get("fuzzfile.showLaunchPlan")();
  await commands.get("fuzzfile.showJobGraph")();
  assert.deepStrictEqual(opened, []);
  assert.strictEqual(errors.length, 2);
  assert.match(errors[0], /`fuzz` not found.*fuzzfile\.fuzzPath/);
  assert.match(errors[1], /did not finish within 30 s/);
});

test("the file commands need a Fuzzfile on disk", async () => {
  const { execFile, calls } = fakeExecFile(() => ({ stdout: "{}" }));
  const { ext, commands, errors, ui } = load({});
  await ext.activate({ subscriptions: [] }, { execFile });
  ui.editor = editor("/w/main.py", "python");
  await commands.get("fuzzfile.showLaunchPlan")();
  ui.editor = editor("/w/x.fz", "fuzzfile", { isUntitled: true, uri: { scheme: "untitled", fsPath: "Untitled-1" } });
  await commands.get("fuzzfile.showJobGraph")();
  ui.editor = undefined;
  await commands.get("fuzzfile.showJobGraph")();
  assert.strictEqual(calls.length, 0);
  assert.strictEqual(errors.length, 3);
  assert.match(errors[0], /open a Fuzzfile/);
  assert.match(errors[1], /save the file first/);
});

test("Show Job Graph runs `fuzz plan --format mermaid` and opens a Markdown document with a mermaid block", async () => {
  const graph = 'flowchart LR\n  t0["hello<br/>job<br/>alpine:3.20"]\n';
  const { execFile, calls } = fakeExecFile(() => ({ stdout: graph }));
  const { ext, commands, opened, ui } = load({});
  await ext.activate({ subscriptions: [] }, { execFile });
  ui.editor = editor("/w/Fuzzfile.yaml", "yaml");
  await commands.get("fuzzfile.showJobGraph")();
  assert.deepStrictEqual(calls[0].args, ["plan", "--format", "mermaid", "--", "/w/Fuzzfile.yaml"]);
  assert.strictEqual(opened.length, 1);
  assert.strictEqual(opened[0].language, "markdown");
  assert.ok(opened[0].content.includes("```mermaid\n" + graph + "```\n"), opened[0].content);
});

// `fuzzlint rules` as the real tool prints it.
const RULES =
  "FZ001  yaml-syntax              error The text is not valid YAML, or exceeds the size and nesting limits\n" +
  "FZ002  unsupported-version      error `version` is missing or is not one of the Fuzzfile versions `v1` and `v4`\n" +
  "FZ014  deprecated-key           warning A key that Fuzzball still accepts but has replaced or stopped honouring\n";

test("Explain a Rule offers `fuzzlint rules` in a quick pick and opens `fuzzlint rule CODE` as Markdown", async () => {
  const doc = "# unsupported-version (FZ002)\n\nDefault severity: error.\n";
  const { execFile, calls } = fakeExecFile((file, args) => ({ stdout: args[0] === "rules" ? RULES : doc }));
  const { ext, commands, opened, ui } = load({ path: "/opt/bin/fuzzlint" });
  await ext.activate({ subscriptions: [] }, { execFile });
  ui.pick = (items) => items.find((i) => i.description.startsWith("unsupported-version"));
  await commands.get("fuzzfile.explainRule")();
  assert.deepStrictEqual(
    ui.picks[0].map((i) => i.label),
    ["FZ001", "FZ002", "FZ014"],
  );
  assert.strictEqual(ui.picks[0][2].description, "deprecated-key (warning)");
  assert.deepStrictEqual(
    calls.map((c) => [c.file, c.args]),
    [
      ["/opt/bin/fuzzlint", ["rules"]],
      ["/opt/bin/fuzzlint", ["rule", "--", "FZ002"]],
    ],
  );
  assert.deepStrictEqual(opened, [{ language: "markdown", content: doc }]);
});

test("Explain a Rule asks for a name when no list comes, and reports an unknown rule", async () => {
  const stderr = "error: no rule is named `nope`; `fuzzlint rules` lists them\n";
  const { execFile, calls } = fakeExecFile((file, args) =>
    args[0] === "rules" ? { err: exitError(2), stderr: "error: unrecognized subcommand" } : { err: exitError(2), stderr },
  );
  const { ext, commands, opened, errors, ui } = load({});
  await ext.activate({ subscriptions: [] }, { execFile });
  ui.input = " nope ";
  await commands.get("fuzzfile.explainRule")();
  assert.strictEqual(ui.inputs, 1);
  assert.deepStrictEqual(calls[1].args, ["rule", "--", "nope"]);
  assert.deepStrictEqual(opened, []);
  assert.strictEqual(errors.length, 1);
  assert.ok(errors[0].includes("no rule is named `nope`"), errors[0]);
  // Cancelled: nothing runs.
  ui.input = undefined;
  await commands.get("fuzzfile.explainRule")();
  assert.strictEqual(calls.length, 3);
});

test("Restart Language Server stops the client and starts a new one", async () => {
  const { ext, commands, started } = load({ path: "/opt/bin/fuzzlint" });
  await ext.activate({ subscriptions: [] });
  await commands.get("fuzzfile.restartServer")();
  assert.strictEqual(started.length, 2);
  assert.ok(started[0].stopped);
  assert.ok(!started[1].stopped);
  assert.strictEqual(started[1].serverOptions.command, "/opt/bin/fuzzlint");
  await ext.deactivate();
  assert.ok(started[1].stopped);
});

// The same commands with the real execFile and the workspace's debug builds (scripts/test builds
// them first): the argv that the stand-in tests assert is one the tools accept.
const ROOT = path.join(__dirname, "..", "..", "..");
const BIN = path.join(process.env.CARGO_TARGET_DIR ? path.resolve(ROOT, process.env.CARGO_TARGET_DIR) : path.join(ROOT, "target"), "debug");
const built = fs.existsSync(path.join(BIN, "fuzz")) && fs.existsSync(path.join(BIN, "fuzzlint"));
const needBins =
  !built && !process.env.FUZZ_REQUIRE_SYSTEM_TESTS ? "build fuzz and fuzzlint (cargo build) to run the real tools" : false;

test("the commands work with the real fuzz and fuzzlint", { skip: needBins }, async () => {
  const { ext, commands, opened, errors, ui } = load(
    { path: path.join(BIN, "fuzzlint") },
    { fuzzPath: path.join(BIN, "fuzz") },
  );
  await ext.activate({ subscriptions: [] }, { execFile: require("node:child_process").execFile });
  ui.editor = editor(path.join(ROOT, "examples", "hello-world.fz"), "fuzzfile");
  await commands.get("fuzzfile.showLaunchPlan")();
  await commands.get("fuzzfile.showJobGraph")();
  ui.pick = (items) => items.find((i) => i.label === "FZ010");
  await commands.get("fuzzfile.explainRule")();
  assert.deepStrictEqual(errors, []);
  assert.deepStrictEqual(opened.map((d) => d.language), ["json", "markdown", "markdown"]);
  const plan = JSON.parse(opened[0].content);
  assert.strictEqual(plan.plan_version, 1);
  assert.strictEqual(plan.workflow.source, "hello-world.fz");
  assert.match(opened[1].content, /```mermaid\nflowchart /);
  assert.ok(ui.picks[0].length > 10, "fuzzlint rules gave too few rules");
  assert.match(opened[2].content, /^# unknown-key \(FZ010\)/);
  // A Fuzzfile with errors: the plan is refused and the message carries the position.
  const dir = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "fuzzfile-cmd-"));
  try {
    const bad = path.join(dir, "bad.fz");
    fs.writeFileSync(bad, "version: v4\njobs:\n  a:\n    imagee: x\n");
    ui.editor = editor(bad, "fuzzfile");
    await commands.get("fuzzfile.showLaunchPlan")();
    assert.strictEqual(opened.length, 3);
    assert.strictEqual(errors.length, 1);
    assert.match(errors[0], /4:5-4:11 unknown key `imagee`/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
