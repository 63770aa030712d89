// The Fuzzfile extension: starts `fuzzlint server` (the project's language server) for `.fz`
// files, application templates (`template.yaml`, `*.template.yaml`, ...) and YAML files,
// which the server analyses only when their top level looks like a Fuzzfile. Everything else (diagnostics, hover, completion, navigation, rename, quick fixes,
// inlay hints, semantic tokens) is the server's; this file only wires it to VS Code.
"use strict";

const vscode = require("vscode");
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

async function activate(context) {
  const section = vscode.workspace.getConfiguration("fuzzlint");
  const command = section.get("path") || "fuzzlint";
  const serverOptions = {
    command,
    args: ["server"],
    transport: TransportKind.stdio,
  };
  client = new LanguageClient("fuzzlint", "Fuzzfile (fuzzlint)", serverOptions, clientOptions(section));
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration("fuzzlint.path") && client) {
        // Another executable: start it instead.
        await client.stop();
        await activate(context);
      }
    }),
  );
  try {
    await client.start();
  } catch (err) {
    vscode.window.showErrorMessage(
      `Fuzzfile: cannot start \`${command} server\` (${err && err.message ? err.message : err}). ` +
        "Install fuzzlint (cargo install --path crates/fuzzlint) or set fuzzlint.path.",
    );
  }
}

async function deactivate() {
  if (client) {
    await client.stop();
    client = undefined;
  }
}

module.exports = { activate, deactivate, serverSettings, SERVER_SETTINGS };
