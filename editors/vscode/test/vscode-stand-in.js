// Loads a bundled extension with a stand-in for the `vscode` module, for the package tests.
"use strict";

const Module = require("node:module");

/**
 * A stand-in for `vscode`: every name of it is a class and a namespace, made on first use
 * (vscode-languageclient extends VS Code's classes, CodeLens, CompletionItem, ..., at load).
 */
function standIn(name) {
  const known = new Map();
  const target = { [name]: function () {} }[name];
  return new Proxy(target, {
    get(t, key) {
      if (key in t) return t[key];
      if (!known.has(key)) known.set(key, standIn(String(key)));
      return known.get(key);
    },
  });
}

/**
 * `load()` with `vscode` answered by the stand-in; `seen(request, parent)` is told of every
 * module asked for meanwhile. What `load` returns is returned.
 */
function withStandInVscode(load, seen = () => {}) {
  const vscode = standIn("vscode");
  const original = Module._load;
  Module._load = function (request, parent, isMain) {
    seen(request, parent);
    if (request === "vscode") return vscode;
    return original.call(this, request, parent, isMain);
  };
  try {
    return load();
  } finally {
    Module._load = original;
  }
}

module.exports = { withStandInVscode };
