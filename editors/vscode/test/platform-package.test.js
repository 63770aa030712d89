// The platform-specific package: `scripts/package.js --target linux-x64 --server FUZZLINT`
// read back. It carries the static fuzzlint at server/fuzzlint, executable, and VS Code's
// manifest names the platform; unpacked, the server runs and the bundled extension finds it.
// tests/release/run.sh runs this with the release binary (FUZZFILE_SERVER) and the package it
// built (FUZZFILE_PLATFORM_VSIX); without FUZZFILE_PLATFORM_VSIX it packages into a temporary
// folder. The argument checks run everywhere.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { unzipEntries } = require("./zip.js");
const { withStandInVscode } = require("./vscode-stand-in.js");
const { build, SERVER } = require("../scripts/package.js");

const EXT = path.join(__dirname, "..");
const PKG = JSON.parse(fs.readFileSync(path.join(EXT, "package.json"), "utf8"));
const server = process.env.FUZZFILE_SERVER && path.resolve(process.env.FUZZFILE_SERVER);
const skip = server
  ? !fs.existsSync(path.join(EXT, "node_modules", ".bin", "vsce")) && "run `npm ci` in editors/vscode"
  : "set FUZZFILE_SERVER to a static fuzzlint (tests/release/run.sh runs this with the release binary)";

const temps = [];
function tempDir(prefix) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(d);
  return d;
}
test.after(() => {
  for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
});

let cached;
function packaged() {
  if (!cached) {
    const vsix = process.env.FUZZFILE_PLATFORM_VSIX
      ? path.resolve(process.env.FUZZFILE_PLATFORM_VSIX)
      : build(tempDir("fuzzfile-platform-vsix-"), { target: "linux-x64", server });
    cached = { vsix, files: unzipEntries(fs.readFileSync(vsix)) };
  }
  return cached;
}

test("a platform package is named for its platform and says so in its manifest", { skip }, () => {
  const { vsix, files } = packaged();
  assert.strictEqual(path.basename(vsix), `fuzzfile-linux-x64-${PKG.version}.vsix`);
  const manifest = files.get("extension.vsixmanifest").data.toString("utf8");
  assert.match(manifest, new RegExp(`<Identity [^>]*Id="fuzzfile"[^>]*Version="${PKG.version}"[^>]*TargetPlatform="linux-x64"`));
  // The rest of the package is the plain one's.
  const m = JSON.parse(files.get("extension/package.json").data.toString("utf8"));
  assert.strictEqual(m.main, "./dist/extension.js");
  assert.ok(files.has("extension/dist/extension.js"));
});

test("the server is in the package at server/fuzzlint, executable, the same bytes, and runs", { skip }, () => {
  const { files } = packaged();
  const entry = files.get(`extension/${SERVER}`);
  assert.ok(entry, `no extension/${SERVER} in the package: ${[...files.keys()].join(", ")}`);
  assert.ok(entry.data.equals(fs.readFileSync(server)), "the packaged server is not the given one");
  assert.strictEqual(entry.mode & 0o170000, 0o100000, "not a regular file");
  assert.strictEqual(entry.mode & 0o777, 0o755, `mode ${(entry.mode & 0o777).toString(8)}`);
  // Unpacked as VS Code does (the mode from the zip), it runs.
  const dir = tempDir("fuzzfile-platform-server-");
  const file = path.join(dir, "fuzzlint");
  fs.writeFileSync(file, entry.data, { mode: entry.mode & 0o777 });
  const out = execFileSync(file, ["--version"], { encoding: "utf8", timeout: 10000 });
  assert.strictEqual(out.trim(), `fuzzlint ${PKG.version}`);
});

test("the bundled extension of the unpacked package runs its own server when fuzzlint.path is empty", { skip }, () => {
  const { files } = packaged();
  const dir = tempDir("fuzzfile-platform-ext-");
  for (const [name, e] of files) {
    if (!name.startsWith("extension/")) continue;
    const to = path.join(dir, name.slice("extension/".length));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.writeFileSync(to, e.data, { mode: e.mode ? e.mode & 0o777 : 0o644 });
  }
  // The bundle with a stand-in `vscode` (only its module load matters here).
  const ext = withStandInVscode(() => require(path.join(dir, "dist", "extension.js")));
  const section = (p) => ({ get: (k) => (k === "path" ? p : undefined) });
  assert.deepStrictEqual(ext.findFuzzlint(section(""), dir), {
    command: path.join(dir, "server", "fuzzlint"),
    source: "the server bundled with the extension",
  });
  assert.strictEqual(ext.findFuzzlint(section("/opt/fuzzlint"), dir).command, "/opt/fuzzlint");
});

test("package.js refuses a platform package without a server, and a server that is not one for the platform", async () => {
  const out = tempDir("fuzzfile-platform-bad-");
  assert.throws(() => build(out, { target: "linux-x64" }), /--target and --server go together/);
  assert.throws(() => build(out, { server: "/bin/true" }), /--target and --server go together/);
  const text = path.join(out, "fuzzlint");
  fs.writeFileSync(text, "#!/bin/sh\necho fuzzlint\n", { mode: 0o755 });
  assert.throws(() => build(out, { target: "linux-x64", server: text }), /not an ELF executable/);
  // This machine's node is an ELF executable of its own machine: the other platform refuses it.
  const other = process.arch === "x64" ? "linux-arm64" : "linux-x64";
  assert.throws(() => build(out, { target: other, server: process.execPath }), new RegExp(`not ${other}`));
  assert.throws(() => build(out, { target: "win32-x64", server: process.execPath }), /built for linux-x64, linux-arm64/);
  assert.throws(() => build(out, { target: "linux-x64", server: path.join(out, "missing") }), /cannot read it/);
  // Nothing was packaged.
  assert.deepStrictEqual(fs.readdirSync(out), ["fuzzlint"]);
});
