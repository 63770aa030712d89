#!/usr/bin/env node
// Packages the extension as target/vsix/fuzzfile-<version>.vsix (not published):
//   cd editors/vscode && npm ci && node scripts/package.js
// It stages the package in target/vsix/fuzzfile/: extension.js bundled by esbuild with
// vscode-languageclient (dist/extension.js), the grammars of grammar/, the Fuzzfile schemas of
// schemas/, the LICENSE, a generated icon, and a manifest generated from
// package.json whose paths point inside the package (the in-repo package.json keeps pointing at
// grammar/, which tests/grammar checks). Then `vsce package --no-dependencies` zips the stage.
//
// A platform-specific package carries the language server too:
//   node scripts/package.js --target linux-x64 --server ../../target/dist/.../fuzzlint
// puts the (static) fuzzlint at server/fuzzlint, executable, and runs
// `vsce package --target linux-x64`: target/vsix/fuzzfile-linux-x64-<version>.vsix. The
// extension runs that server when fuzzlint.path is not set (extension.js, findFuzzlint).
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
/** Where a platform-specific package has the server (extension.js's BUNDLED_SERVER). */
const SERVER = "server/fuzzlint";

/** The platforms a package with a server is built for: VS Code's target name -> the ELF
 * machine (e_machine) of the executable it takes. */
const TARGETS = { "linux-x64": 62, "linux-arm64": 183 };

/** Refuses a server that is not an executable ELF file for `target`'s machine. */
function checkServer(file, target) {
  if (!(target in TARGETS)) {
    throw new Error(`--target ${target}: packages with a server are built for ${Object.keys(TARGETS).join(", ")}`);
  }
  let head;
  try {
    const fd = fs.openSync(file, "r");
    try {
      head = Buffer.alloc(20);
      fs.readSync(fd, head, 0, 20, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    throw new Error(`--server ${file}: cannot read it (${err.message})`);
  }
  if (head.readUInt32BE(0) !== 0x7f454c46) {
    throw new Error(`--server ${file}: not an ELF executable (build it with scripts/release)`);
  }
  const machine = head.readUInt16LE(18);
  if (machine !== TARGETS[target]) {
    throw new Error(`--server ${file}: built for ELF machine ${machine}, not ${target} (${TARGETS[target]})`);
  }
}

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

/**
 * Builds the package; returns the .vsix's path. `outDir` defaults to target/vsix. With
 * `target` and `server` (both or neither), a platform-specific package with the server inside.
 */
function build(outDir = path.join(ROOT, "target", "vsix"), { target, server } = {}) {
  if (Boolean(target) !== Boolean(server)) {
    throw new Error("--target and --server go together: a platform package is the one with the server");
  }
  if (target) checkServer(server, target);
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
  const stage = path.join(outDir, target ? `${pkg.name}-${target}` : pkg.name);
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

  if (server) {
    // The server, executable by everyone (the zip keeps the mode, VS Code restores it).
    copy(server, path.join(stage, SERVER));
    fs.chmodSync(path.join(stage, SERVER), 0o755);
  }

  const vsix = path.join(outDir, target ? `${pkg.name}-${target}-${pkg.version}.vsix` : `${pkg.name}-${pkg.version}.vsix`);
  fs.rmSync(vsix, { force: true });
  const args = ["package", "--no-dependencies", "--out", vsix].concat(target ? ["--target", target] : []);
  execFileSync(bin("vsce"), args, {
    cwd: stage,
    stdio: ["ignore", "inherit", "inherit"],
  });
  return vsix;
}

module.exports = { build, manifest, icon, YAML_FUZZFILE_NAMES, SERVER, TARGETS };

/** `[OUT_DIR] [--target TARGET --server FUZZLINT]` */
function parseArgs(argv) {
  const opts = {};
  let outDir;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const m = /^--(target|server)(?:=(.*))?$/.exec(a);
    if (m) {
      const value = m[2] !== undefined ? m[2] : argv[++i];
      if (!value) throw new Error(`--${m[1]} needs a value`);
      opts[m[1]] = m[1] === "server" ? path.resolve(value) : value;
    } else if (a.startsWith("-")) {
      throw new Error(`unknown option ${a}; usage: package.js [OUT_DIR] [--target linux-x64 --server PATH]`);
    } else if (outDir === undefined) {
      outDir = path.resolve(a);
    } else {
      throw new Error(`one output folder only, not also ${a}`);
    }
  }
  return { outDir, opts };
}

if (require.main === module) {
  try {
    const { outDir, opts } = parseArgs(process.argv.slice(2));
    console.log(path.relative(process.cwd(), build(outDir, opts)));
  } catch (err) {
    console.error(`error: ${err.message}`);
    process.exit(1);
  }
}
