// The packaged extension: scripts/package.js builds a .vsix (esbuild + vsce, from `npm ci`)
// into a temporary folder, and this reads the zip back: its layout, the manifest VS Code reads,
// the files the manifest names, and the bundled code loaded with a stand-in `vscode`.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const Module = require("node:module");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { unzip } = require("./zip.js");
const { withStandInVscode } = require("./vscode-stand-in.js");

const EXT = path.join(__dirname, "..");
const installed = fs.existsSync(path.join(EXT, "node_modules", ".bin", "vsce"));
const skip =
  !installed && !process.env.FUZZ_REQUIRE_SYSTEM_TESTS
    ? "run `npm ci` in editors/vscode (esbuild and vsce) to package the extension"
    : false;

let cached;
function packaged() {
  if (!cached) {
    const { build } = require("../scripts/package.js");
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "fuzzfile-vsix-"));
    const vsix = build(out);
    const pkg = JSON.parse(fs.readFileSync(path.join(EXT, "package.json"), "utf8"));
    cached = { vsix, pkg, files: unzip(fs.readFileSync(vsix)), out };
  }
  return cached;
}

test.after(() => {
  if (cached) fs.rmSync(cached.out, { recursive: true, force: true });
});

test("the .vsix is named fuzzfile-<version> and has the VSIX layout", { skip }, () => {
  const { vsix, pkg, files } = packaged();
  assert.strictEqual(path.basename(vsix), `fuzzfile-${pkg.version}.vsix`);
  assert.ok(files.has("[Content_Types].xml"));
  const vsixManifest = files.get("extension.vsixmanifest").toString("utf8");
  assert.match(vsixManifest, new RegExp(`<Identity [^>]*Id="fuzzfile"[^>]*Version="${pkg.version}"`));
  assert.match(vsixManifest, new RegExp(`Publisher="${pkg.publisher}"`));
  // The plain package is for every platform: no TargetPlatform, no server inside (the
  // platform packages have one, test/platform-package.test.js).
  assert.doesNotMatch(vsixManifest, /TargetPlatform/);
  assert.ok(![...files.keys()].some((n) => n.startsWith("extension/server/")), "a server in the plain package");
  for (const name of files.keys()) {
    if (name === "[Content_Types].xml" || name === "extension.vsixmanifest") continue;
    assert.ok(name.startsWith("extension/"), `${name} is outside extension/`);
    // Nothing of the development tree: dependencies are bundled, tests and scripts stay out.
    assert.doesNotMatch(name, /(^|\/)(node_modules|test|tests|scripts)\//, name);
    assert.doesNotMatch(name, /\.(map|ts)$|\.test\.js$/, name);
  }
});

test("the packaged manifest names files present in the package", { skip }, () => {
  const { pkg, files } = packaged();
  const read = (rel) => {
    const name = path.posix.join("extension", rel);
    assert.ok(files.has(name), `${rel} is named by the manifest but not in the package`);
    return files.get(name);
  };
  const m = JSON.parse(read("package.json").toString("utf8"));
  assert.strictEqual(m.name, "fuzzfile");
  assert.strictEqual(m.version, pkg.version);
  assert.strictEqual(m.main, "./dist/extension.js");
  read(m.main);
  assert.strictEqual(m.dependencies, undefined, "dependencies are bundled, vsce runs --no-dependencies");
  assert.ok(m.repository && m.repository.url, "no repository");
  assert.strictEqual(m.license, "Apache-2.0");
  assert.match(read("LICENSE.txt").toString("utf8"), /Apache License\s+Version 2\.0/);
  // The icon is a PNG.
  assert.deepStrictEqual([...read(m.icon).subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

  // Languages: the in-repo ones, templates included.
  const ids = m.contributes.languages.map((l) => l.id);
  assert.deepStrictEqual(ids, pkg.contributes.languages.map((l) => l.id));
  assert.ok(ids.includes("fuzzfile-template"));
  for (const l of m.contributes.languages) JSON.parse(read(l.configuration).toString("utf8"));

  // Grammars: inside the package, the same bytes as grammar/, with their scope names.
  assert.deepStrictEqual(
    m.contributes.grammars.map((g) => g.scopeName).sort(),
    ["source.fuzzfile", "source.fuzzfile.template"],
  );
  for (const g of m.contributes.grammars) {
    assert.ok(!g.path.includes(".."), `${g.path} points outside the package`);
    const bytes = read(g.path);
    assert.deepStrictEqual(bytes, fs.readFileSync(path.join(EXT, "..", "..", "grammar", path.basename(g.path))));
    assert.strictEqual(JSON.parse(bytes.toString("utf8")).scopeName, g.scopeName);
    if (g.language) assert.ok(ids.includes(g.language), `${g.path}: unknown language ${g.language}`);
  }
  assert.strictEqual(
    m.contributes.grammars.find((g) => g.language === "fuzzfile-template").scopeName,
    "source.fuzzfile.template",
  );

  // Commands and their palette entries as in the source manifest.
  assert.deepStrictEqual(m.contributes.commands, pkg.contributes.commands);
  assert.deepStrictEqual(m.contributes.menus, pkg.contributes.menus);
  assert.strictEqual(m.contributes.configuration.properties["fuzzfile.fuzzPath"].default, "fuzz");

  // yamlValidation: draft-07 schemas present in the package.
  assert.ok(m.contributes.yamlValidation.length > 0);
  for (const v of m.contributes.yamlValidation) {
    assert.ok(v.fileMatch.length > 0);
    // yamlValidation applies to documents of language `yaml` only: `.fz` files and templates
    // have their own languages, so a name here that VS Code does not open as YAML is dead.
    for (const glob of v.fileMatch) assert.match(glob, /\.ya?ml$/, glob);
    const schema = JSON.parse(read(v.url).toString("utf8"));
    assert.strictEqual(schema.$schema, "http://json-schema.org/draft-07/schema#", v.url);
  }
  // Every Fuzzfile schema of schemas/ is packaged (fuzzfile.schema.json refers to the others by $id).
  const schemas = fs.readdirSync(path.join(EXT, "..", "..", "schemas")).filter((f) => /^fuzzfile.*\.schema\.json$/.test(f));
  for (const s of schemas) read(`schemas/${s}`);
});

test("the bundled code loads with only `vscode` from outside and exports the extension", { skip }, () => {
  const { files } = packaged();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fuzzfile-bundle-"));
  const file = path.join(dir, "extension.js");
  fs.writeFileSync(file, files.get("extension/dist/extension.js"));
  const outside = [];
  let ext, source;
  try {
    [ext, source] = withStandInVscode(
      () => [require(file), require("../extension.js")],
      (request, parent) => {
        if (parent && parent.filename === file && !Module.isBuiltin(request)) outside.push(request);
      },
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // vscode-languageclient is inside the bundle: the only module it asks the host for is `vscode`.
  assert.deepStrictEqual([...new Set(outside)], ["vscode"]);
  assert.strictEqual(typeof ext.activate, "function");
  assert.strictEqual(typeof ext.deactivate, "function");
  // The bundle behaves as the source does.
  assert.deepStrictEqual(ext.SERVER_SETTINGS, source.SERVER_SETTINGS);
  assert.deepStrictEqual(ext.parseRules("FZ010  unknown-key  error A key\n"), source.parseRules("FZ010  unknown-key  error A key\n"));
  const settings = { select: ["FZ2"], config: null, debounceMs: 10, path: "/x/fuzzlint" };
  assert.deepStrictEqual(ext.serverSettings({ get: (k) => settings[k] }), { select: ["FZ2"], debounceMs: 10 });
});
