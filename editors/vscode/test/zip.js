// Reads a zip file (a .vsix) back for the package tests: each entry's contents and its Unix
// mode (the high half of the external attributes when the entry was made on Unix).
"use strict";

const assert = require("node:assert");
const zlib = require("node:zlib");

/** The entries of a zip file: name -> { data, mode } (mode undefined when not from Unix). */
function unzipEntries(buf) {
  let eocd = -1;
  for (let i = buf.length - 22; i >= 0; i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  assert.ok(eocd >= 0, "no end of central directory: not a zip file");
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const files = new Map();
  for (let n = 0; n < count; n++) {
    assert.strictEqual(buf.readUInt32LE(at), 0x02014b50, "bad central directory entry");
    const madeOnUnix = buf.readUInt8(at + 5) === 3;
    const method = buf.readUInt16LE(at + 10);
    const size = buf.readUInt32LE(at + 20);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const external = buf.readUInt32LE(at + 38);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString("utf8", at + 46, at + 46 + nameLen);
    assert.strictEqual(buf.readUInt32LE(local), 0x04034b50, `bad local header of ${name}`);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + size);
    assert.ok(method === 0 || method === 8, `${name}: compression method ${method}`);
    const data = method === 8 ? zlib.inflateRawSync(raw) : Buffer.from(raw);
    files.set(name, { data, mode: madeOnUnix ? external >>> 16 : undefined });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return files;
}

/** The entries of a zip file: name -> contents. */
function unzip(buf) {
  return new Map([...unzipEntries(buf)].map(([name, e]) => [name, e.data]));
}

module.exports = { unzip, unzipEntries };
