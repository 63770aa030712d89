#!/usr/bin/env node
// Packages the extension as target/vsix/fuzzfile-<version>.vsix (not published):
//   cd editors/vscode && npm ci && node scripts/package.js
// It stages the package in target/vsix/fuzzfile/: extension.js bundled by esbuild with
// vscode-languageclient (dist/extension.js), the grammars of grammar/, the Fuzzfile schemas of
// schemas/, the LICENSE, a generated icon, and a manifest generated from
// package.json whose paths point inside the package (the in-repo package.json keeps pointing at
// grammar/, which tests/grammar checks). Then `vsce package --no-dependencies` zips the stage.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const zlib = require("node:zlib");
const { execFileSync } = require("node:child_process");

const EXT = path.join(__dirname, "..");
const ROOT = path.join(EXT, "..", "..");

/** The paths of the package (relative to its root) for the files of the repository. */
const GRAMMAR_DIR = "grammar";
const SCHEMA_DIR = "schemas";
const BUNDLE = "dist/extension.js";
const ICON = "icon.png";

/** The names a YAML Fuzzfile has when its name says so (VS Code's yamlValidation matches
 * names, not content: other YAML Fuzzfiles get the schema through a `# yaml-language-server:
 * $schema=` comment). */
const YAML_FUZZFILE_NAMES = ["Fuzzfile.yaml", "Fuzzfile.yml", "*.fuzzfile.yaml", "*.fuzzfile.yml"];

/** The packaged manifest: package.json with paths inside the package. */
function manifest(pkg, grammars) {
  const out = JSON.parse(JSON.stringify(pkg));
  out.main = `./${BUNDLE}`;
  out.icon = ICON;
  for (const g of out.contributes.grammars) {
    const base = path.basename(g.path);
    if (!grammars.includes(base)) {
      throw new Error(`package.json: grammar ${g.path} is not a file of grammar/`);
    }
    g.path = `./${GRAMMAR_DIR}/${base}`;
  }
  out.contributes.yamlValidation = [
    { fileMatch: YAML_FUZZFILE_NAMES, url: `./${SCHEMA_DIR}/fuzzfile.schema.json` },
  ];
  // Everything the code needs is in the bundle; the package has no node_modules.
  delete out.dependencies;
  delete out.devDependencies;
  out.scripts = {};
  return out;
}

/** A 128x128 RGBA PNG (VS Code's marketplace size): a dark tile with a light "F". */
function icon() {
  const size = 128;
  const raw = Buffer.alloc((size * 4 + 1) * size);
  for (let y = 0; y < size; y++) {
    const row = y * (size * 4 + 1);
    raw[row] = 0; // filter: none
    for (let x = 0; x < size; x++) {
      const stem = x >= 36 && x < 56 && y >= 24 && y < 104;
      const top = x >= 36 && x < 96 && y >= 24 && y < 42;
      const mid = x >= 36 && x < 84 && y >= 56 && y < 72;
      const [r, g, b] = stem || top || mid ? [240, 200, 80] : [32, 48, 72];
      raw.set([r, g, b, 255], row + 1 + x * 4);
    }
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", zlib.deflateSync(raw, { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function crc32(buf) {
  let c = 0xffffffff;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

function copy(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
}

function bin(name) {
  const file = path.join(EXT, "node_modules", ".bin", name);
  if (!fs.existsSync(file)) {
    throw new Error(`${path.relative(ROOT, file)} is missing: run \`npm ci\` in editors/vscode`);
  }
  return file;
}

/** Builds the package; returns the .vsix's path. `outDir` defaults to target/vsix. */
function build(outDir = path.join(ROOT, "target", "vsix")) {
  const major = Number(process.versions.node.split(".")[0]);
  // esbuild 0.28 needs Node.js 18 (Debian 12's nodejs is 18.19); @vscode/vsce 2.32 needs 16
  // (vsce 3 needs 20, which Debian 12 does not ship).
  if (major < 18) {
    throw new Error(
      `packaging needs Node.js 18 or later, this is ${process.versions.node}: ` +
        "install a newer nodejs",
    );
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(EXT, "package.json"), "utf8"));
  const stage = path.join(outDir, pkg.name);
  fs.rmSync(stage, { recursive: true, force: true });
  fs.mkdirSync(stage, { recursive: true });

  // The code: extension.js and vscode-languageclient in one file; `vscode` is the host's.
  execFileSync(
    bin("esbuild"),
    [
      path.join(EXT, "extension.js"),
      "--bundle",
      "--platform=node",
      "--format=cjs",
      "--target=node18",
      "--external:vscode",
      "--minify",
      "--log-level=warning",
      `--outfile=${path.join(stage, BUNDLE)}`,
    ],
    { stdio: "inherit" },
  );

  const grammars = fs.readdirSync(path.join(ROOT, "grammar")).filter((f) => f.endsWith(".tmLanguage.json"));
  for (const g of grammars) copy(path.join(ROOT, "grammar", g), path.join(stage, GRAMMAR_DIR, g));
  const schemas = fs
    .readdirSync(path.join(ROOT, "schemas"))
    .filter((f) => f.startsWith("fuzzfile") && f.endsWith(".schema.json"));
  for (const s of schemas) copy(path.join(ROOT, "schemas", s), path.join(stage, SCHEMA_DIR, s));
  for (const f of ["README.md", "language-configuration.json", ".vscodeignore"]) {
    copy(path.join(EXT, f), path.join(stage, f));
  }
  // The repository's LICENSE when it has one at its root, else the extension's (Apache-2.0, as
  // the workspace's Cargo.toml and package.json declare).
  const license = [path.join(ROOT, "LICENSE"), path.join(EXT, "LICENSE")].find((f) => fs.existsSync(f));
  if (!license) throw new Error("no LICENSE at the repository's root or in editors/vscode");
  copy(license, path.join(stage, "LICENSE"));
  fs.writeFileSync(path.join(stage, ICON), icon());
  fs.writeFileSync(path.join(stage, "package.json"), JSON.stringify(manifest(pkg, grammars), null, 2) + "\n");

  const vsix = path.join(outDir, `${pkg.name}-${pkg.version}.vsix`);
  fs.rmSync(vsix, { force: true });
  execFileSync(bin("vsce"), ["package", "--no-dependencies", "--out", vsix], {
    cwd: stage,
    stdio: ["ignore", "inherit", "inherit"],
  });
  return vsix;
}

module.exports = { build, manifest, icon, YAML_FUZZFILE_NAMES };

if (require.main === module) {
  try {
    console.log(path.relative(process.cwd(), build(process.argv[2] && path.resolve(process.argv[2]))));
  } catch (err) {
    console.error(`error: ${err.message}`);
    process.exit(1);
  }
}
