// The Fuzzfile extension: starts `fuzzlint server` (the project's language server) for `.fz`
// files, application templates (`template.yaml`, `*.template.yaml`, ...) and YAML files,
// which the server analyses only when their top level looks like a Fuzzfile. Everything else (diagnostics, hover, completion, navigation, rename, quick fixes,
// inlay hints, semantic tokens) is the server's; this file only wires it to VS Code, and adds
// commands that run the command-line tools on the active file: `fuzz plan` (the launch plan,
// the job graph as Mermaid) and `fuzzlint rules` / `fuzzlint rule NAME` (a rule's documentation).
"use strict";

const vscode = require("vscode");
const childProcess = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

/** Settings of the `fuzzlint` section that the server reads (the rest are the extension's). */
const SERVER_SETTINGS = [
  "config",
  "cluster",
  "select",
  "ignore",
  "debounceMs",
  "pushDiagnostics",
  "inlayHints",
];

let client;

/** The longest a command-line tool may run for a command, in milliseconds. */
const TOOL_TIMEOUT_MS = 30000;

/** Languages whose documents `fuzz plan` takes: Fuzzfiles, templates, and YAML Fuzzfiles. */
const PLAN_LANGUAGES = ["fuzzfile", "fuzzfile-template", "yaml"];

/** The server's settings from the `fuzzlint` configuration section, unset ones left out. */
function serverSettings(section) {
  const out = {};
  for (const key of SERVER_SETTINGS) {
    const value = section.get(key);
    if (value !== undefined && value !== null) {
      out[key] = value;
    }
  }
  return out;
}

function clientOptions(section) {
  return {
    documentSelector: [
      { scheme: "file", language: "fuzzfile" },
      { scheme: "untitled", language: "fuzzfile" },
      // Application templates (`template.yaml`, `*.template.yaml`, ...): the server renders
      // and checks them; VS Code gives them this language, not `yaml`.
      { scheme: "file", language: "fuzzfile-template" },
      { scheme: "untitled", language: "fuzzfile-template" },
      { scheme: "file", language: "yaml" },
    ],
    initializationOptions: serverSettings(section),
    synchronize: {
      // `workspace/didChangeConfiguration` carries the section; the server re-reads it.
      configurationSection: "fuzzlint",
      // A fuzzlint.toml or a cluster profile edited on disk changes every analysis.
      fileEvents: [
        vscode.workspace.createFileSystemWatcher("**/fuzzlint.toml"),
        vscode.workspace.createFileSystemWatcher("**/*.toml"),
      ],
    },
    outputChannelName: "Fuzzfile",
  };
}

/** Where the platform-specific package (`vsce package --target linux-x64`) has its server. */
const BUNDLED_SERVER = path.join("server", "fuzzlint");

/** The extension's folder (set by activate): where a bundled server is looked for. */
let extensionPath;

/** The output channel shared by the extension and the language client. */
let output;

function outputChannel() {
  if (!output && vscode.window.createOutputChannel) {
    output = vscode.window.createOutputChannel("Fuzzfile");
  }
  return output;
}

/** Whether `file` is a regular file this process may execute. */
function isExecutable(file) {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The fuzzlint to run, in this order: the `fuzzlint.path` setting when it is set (not empty);
 * else the server bundled in a platform-specific package (`server/fuzzlint` in the extension's
 * folder) when it is there and executable; else `fuzzlint` on PATH. Returns the command and
 * where it came from, in words (the output channel shows it).
 */
function findFuzzlint(section, extDir = extensionPath) {
  const setting = section.get("path");
  if (typeof setting === "string" && setting.trim() !== "") {
    return { command: setting, source: "the fuzzlint.path setting" };
  }
  if (extDir) {
    const bundled = path.join(extDir, BUNDLED_SERVER);
    if (isExecutable(bundled)) return { command: bundled, source: "the server bundled with the extension" };
  }
  return { command: "fuzzlint", source: "PATH" };
}

/** Starts the language client with the fuzzlint that findFuzzlint finds; reports a failure. */
async function startClient() {
  const section = vscode.workspace.getConfiguration("fuzzlint");
  const { command, source } = findFuzzlint(section);
  const channel = outputChannel();
  if (channel) channel.appendLine(`Starting \`${command} server\` (from ${source}).`);
  const serverOptions = {
    command,
    args: ["server"],
    transport: TransportKind.stdio,
  };
  const options = clientOptions(section);
  if (channel) options.outputChannel = channel;
  client = new LanguageClient("fuzzlint", "Fuzzfile (fuzzlint)", serverOptions, options);
  try {
    await client.start();
  } catch (err) {
    vscode.window.showErrorMessage(
      `Fuzzfile: cannot start \`${command} server\` (from ${source}: ${err && err.message ? err.message : err}). ` +
        "Install fuzzlint (cargo install --path crates/fuzzlint), set fuzzlint.path, or install the " +
        "extension's package for your platform (it has the server inside).",
    );
  }
}

/** Stops the language client, if one runs; a client that never started is dropped quietly. */
async function stopClient() {
  const old = client;
  client = undefined;
  if (old) {
    try {
      await old.stop();
    } catch {
      // Not running (it failed to start): nothing to stop.
    }
  }
}

/**
 * Runs `file args` without a shell, at most TOOL_TIMEOUT_MS. Resolves to standard output;
 * rejects with an Error whose message says what failed: the tool's standard error, a tool not
 * found (with the setting that names it), or the time limit.
 */
function runTool(execFile, file, args, setting, cwd) {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { cwd, timeout: TOOL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, windowsHide: true },
      (err, stdout, stderr) => {
        if (!err) {
          resolve(String(stdout));
          return;
        }
        const line = `\`${[file].concat(args).join(" ")}\``;
        let message;
        if (err.code === "ENOENT") {
          message = `${line}: \`${file}\` not found; install it or set ${setting}`;
        } else if (err.killed || err.signal) {
          message = `${line} did not finish within ${TOOL_TIMEOUT_MS / 1000} s`;
        } else {
          const text = String(stderr || "").trim();
          message = `${line} failed${typeof err.code === "number" ? ` (exit ${err.code})` : ""}: ${text || err.message}`;
        }
        reject(new Error(message));
      },
    );
  });
}

/** Opens `content` as a new untitled document of `language` beside the active editor. */
async function openDocument(language, content) {
  const doc = await vscode.workspace.openTextDocument({ language, content });
  const column = vscode.ViewColumn ? vscode.ViewColumn.Beside : undefined;
  return vscode.window.showTextDocument(doc, { preview: false, viewColumn: column });
}

/**
 * The path of the active Fuzzfile or template on disk (saved first when it has unsaved
 * changes, since the tools read the file); undefined, with a message, when there is none.
 */
async function activeFile() {
  const editor = vscode.window.activeTextEditor;
  const doc = editor && editor.document;
  if (!doc || !PLAN_LANGUAGES.includes(doc.languageId)) {
    vscode.window.showErrorMessage("Fuzzfile: open a Fuzzfile or an application template first.");
    return undefined;
  }
  if (doc.isUntitled || (doc.uri && doc.uri.scheme !== "file")) {
    vscode.window.showErrorMessage("Fuzzfile: save the file first: `fuzz plan` reads it from disk.");
    return undefined;
  }
  if (doc.isDirty && !(await doc.save())) {
    vscode.window.showErrorMessage("Fuzzfile: the file could not be saved; `fuzz plan` reads it from disk.");
    return undefined;
  }
  return doc.uri.fsPath;
}

function fuzzPath() {
  return vscode.workspace.getConfiguration("fuzzfile").get("fuzzPath") || "fuzz";
}

function fuzzlintPath() {
  return findFuzzlint(vscode.workspace.getConfiguration("fuzzlint")).command;
}

/** `fuzzlint rules` output (`CODE  name  severity summary` lines) as quick pick items. */
function parseRules(text) {
  const items = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^(FZ\d+)\s+(\S+)\s+(\S+)\s+(.*)$/.exec(line.trim());
    if (m) items.push({ label: m[1], description: `${m[2]} (${m[3]})`, detail: m[4], rule: m[2] });
  }
  return items;
}

function reportError(err) {
  vscode.window.showErrorMessage(`Fuzzfile: ${err && err.message ? err.message : err}`);
}

/** The extension's commands: name -> handler. `execFile` is child_process.execFile's shape. */
function commandHandlers(execFile) {
  return {
    "fuzzfile.restartServer": async () => {
      await stopClient();
      await startClient();
    },
    "fuzzfile.showLaunchPlan": async () => {
      const file = await activeFile();
      if (!file) return;
      try {
        const json = await runTool(execFile, fuzzPath(), ["plan", "--", file], "fuzzfile.fuzzPath", path.dirname(file));
        await openDocument("json", json);
      } catch (err) {
        reportError(err);
      }
    },
    "fuzzfile.showJobGraph": async () => {
      const file = await activeFile();
      if (!file) return;
      try {
        const graph = await runTool(
          execFile,
          fuzzPath(),
          ["plan", "--format", "mermaid", "--", file],
          "fuzzfile.fuzzPath",
          path.dirname(file),
        );
        const body = graph.endsWith("\n") ? graph : graph + "\n";
        await openDocument("markdown", `# Job graph of ${path.basename(file)}\n\n\`\`\`mermaid\n${body}\`\`\`\n`);
      } catch (err) {
        reportError(err);
      }
    },
    "fuzzfile.explainRule": async () => {
      const fuzzlint = fuzzlintPath();
      let name;
      let items = [];
      try {
        items = parseRules(await runTool(execFile, fuzzlint, ["rules"], "fuzzlint.path"));
      } catch (err) {
        if (/not found/.test(err.message)) {
          reportError(err);
          return;
        }
      }
      if (items.length > 0) {
        const picked = await vscode.window.showQuickPick(items, {
          placeHolder: "A rule to explain (code or name)",
          matchOnDescription: true,
          matchOnDetail: true,
        });
        name = picked && picked.label;
      } else {
        name = await vscode.window.showInputBox({ prompt: "A rule name or code (FZ010, unknown-key)" });
      }
      name = name && name.trim();
      if (!name) return;
      try {
        await openDocument("markdown", await runTool(execFile, fuzzlint, ["rule", "--", name], "fuzzlint.path"));
      } catch (err) {
        reportError(err);
      }
    },
  };
}

/** `deps.execFile` replaces child_process.execFile (the tests' stand-in); VS Code passes none. */
async function activate(context, deps = {}) {
  const execFile = deps.execFile || childProcess.execFile;
  extensionPath = context.extensionPath;
  const channel = outputChannel();
  if (channel) context.subscriptions.push(channel);
  for (const [name, handler] of Object.entries(commandHandlers(execFile))) {
    context.subscriptions.push(vscode.commands.registerCommand(name, handler));
  }
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration("fuzzlint.path")) {
        // Another executable: start it instead.
        await stopClient();
        await startClient();
      }
    }),
  );
  await startClient();
}

async function deactivate() {
  await stopClient();
  // VS Code disposes the channel with the context's subscriptions.
  output = undefined;
}

module.exports = {
  activate,
  deactivate,
  serverSettings,
  parseRules,
  findFuzzlint,
  SERVER_SETTINGS,
  TOOL_TIMEOUT_MS,
  BUNDLED_SERVER,
};
