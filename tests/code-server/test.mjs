// The Fuzzfile extension inside a real VS Code (code-server), read from the page by Chromium:
// the squiggle's diagnostic, a hover over a key, and a quick fix applied. run.sh starts
// code-server and passes its URL; what the page must show comes from the same fuzzlint binary
// the extension starts (`fuzzlint check --format json` for the finding and its fix,
// `fuzzlint schema fuzzfile-v4` for the key's documentation), so the test follows the checker.
import { chromium } from "playwright-core";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    url: { type: "string" },
    chromium: { type: "string", default: "/usr/bin/chromium" },
    fuzzlint: { type: "string" },
    file: { type: "string" },
    artifacts: { type: "string" },
    screenshot: { type: "string", default: "" },
  },
});
for (const k of ["url", "fuzzlint", "file", "artifacts"]) {
  if (!opt[k]) {
    console.error(`usage: test.mjs --url URL --fuzzlint PATH --file FUZZFILE --artifacts DIR`);
    process.exit(2);
  }
}

/** How long the page gets for each thing it must show (the server starts on first use). */
const WAIT_MS = 60000;

function log(msg) {
  console.log(`[code-server test] ${msg}`);
}

/** Markdown as the page renders it: no code or emphasis marks, single spaces. */
function plain(text) {
  return text.replace(/`/g, "").replace(/\*\*/g, "").replace(/\s+/g, " ").trim();
}

/** `fuzzlint check --format json FILE`: the checker's findings (it exits 1 on errors). */
function checkerFindings(file) {
  let out;
  try {
    out = execFileSync(opt.fuzzlint, ["check", "--format", "json", file], { encoding: "utf8" });
  } catch (err) {
    if (err.status !== 1 || !err.stdout) throw err;
    out = err.stdout;
  }
  return JSON.parse(out).diagnostics;
}

/** The text after the fix's edits (byte offsets, applied from the last). */
function applyFix(text, fix) {
  let buf = Buffer.from(text, "utf8");
  const edits = [...fix.edits].sort((a, b) => b.offsets.start - a.offsets.start);
  for (const e of edits) {
    buf = Buffer.concat([
      buf.subarray(0, e.offsets.start),
      Buffer.from(e.replacement, "utf8"),
      buf.subarray(e.offsets.end),
    ]);
  }
  return buf.toString("utf8");
}

/** Calls `read` until `ok(value)` holds, at most `ms`; throws with the last value read. */
async function until(what, read, ok, ms = WAIT_MS) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await read();
      if (ok(last)) return last;
    } catch (err) {
      last = `(${err.message})`;
    }
    if (Date.now() > end) {
      throw new Error(`${what}: not seen within ${ms / 1000} s; last read: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

// What the page must show, from the checker itself.
const original = fs.readFileSync(opt.file, "utf8");
const findings = checkerFindings(opt.file);
const finding = findings.find((d) => d.fix);
if (findings.length !== 1 || !finding) {
  throw new Error(`the workspace file must have exactly one finding, with a fix: ${JSON.stringify(findings)}`);
}
const expectedFixed = applyFix(original, finding.fix);
const schema = JSON.parse(execFileSync(opt.fuzzlint, ["schema", "fuzzfile-v4"], { encoding: "utf8" }));
const imageDoc = schema.definitions.job.properties.image.description;
// The word under the squiggle: the finding's range (1-based line and column, end exclusive).
const lines = original.split("\n");
const r = finding.range;
const flagged = lines[r.start.line - 1].slice(r.start.column - 1, r.end.column - 1);
log(`finding ${finding.code} on \`${flagged}\`: ${finding.message} (fix: ${finding.fix.message})`);

/** The active editor's lines, in order, as text (Monaco draws spaces as U+00A0). */
async function editorText(page) {
  return page.evaluate(() => {
    const root = document.querySelector(".editor-group-container.active .monaco-editor .view-lines");
    if (!root) return null;
    const rows = [...root.querySelectorAll(".view-line")].map((el) => ({
      top: parseFloat(el.style.top) || 0,
      text: el.textContent.replace(/\u00a0/g, " "),
    }));
    rows.sort((a, b) => a.top - b.top);
    return rows.map((x) => x.text).join("\n");
  });
}

/** The box of `word` on the active editor's line `lineNo` (1-based), from the drawn text. */
async function wordBox(page, lineNo, word) {
  return page.evaluate(
    ({ lineNo, word }) => {
      const root = document.querySelector(".editor-group-container.active .monaco-editor .view-lines");
      if (!root) return null;
      const rows = [...root.querySelectorAll(".view-line")].sort(
        (a, b) => (parseFloat(a.style.top) || 0) - (parseFloat(b.style.top) || 0),
      );
      const row = rows[lineNo - 1];
      if (!row) return null;
      const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const i = n.data.replace(/\u00a0/g, " ").indexOf(word);
        if (i >= 0) {
          const range = document.createRange();
          range.setStart(n, i);
          range.setEnd(n, i + word.length);
          const b = range.getBoundingClientRect();
          return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
        }
      }
      return null;
    },
    { lineNo, word },
  );
}

/** The visible hover's text, or "" when none shows. */
async function hoverText(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".monaco-hover")]
      .filter((el) => el.offsetParent !== null && el.getBoundingClientRect().height > 0)
      .map((el) => el.innerText)
      .join("\n"),
  );
}

/** Moves the mouse onto `word` of line `lineNo` until a hover containing every `needles` shows. */
async function hoverOn(page, lineNo, word, needles, what) {
  return until(
    what,
    async () => {
      await page.mouse.move(5, 5);
      const box = await wordBox(page, lineNo, word);
      if (!box) return `(\`${word}\` not drawn on line ${lineNo})`;
      await page.mouse.move(box.x - 2, box.y, { steps: 2 });
      await page.mouse.move(box.x, box.y, { steps: 2 });
      await page.waitForTimeout(900);
      return hoverText(page);
    },
    (t) => typeof t === "string" && needles.every((n) => plain(t).includes(plain(n))),
  );
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "fuzzfile-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: opt.chromium,
  headless: true,
  viewport: { width: 1280, height: 760 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(WAIT_MS);
const consoleLines = [];
page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
page.on("pageerror", (e) => consoleLines.push(`pageerror: ${e.message}`));

let failed = false;
try {
  await page.goto(opt.url, { waitUntil: "domcontentloaded" });
  await page.locator(".monaco-workbench").waitFor();
  log("workbench loaded");

  // Open the file through Quick Open (Ctrl+P).
  const name = path.basename(opt.file);
  await until(
    "the Fuzzfile open in an editor",
    async () => {
      const text = await editorText(page);
      if (text && text.includes(flagged)) return text;
      await page.keyboard.press("Escape");
      await page.locator(".monaco-workbench").click({ position: { x: 640, y: 300 }, force: true });
      await page.keyboard.press("Control+p");
      const input = page.locator(".quick-input-widget input.input");
      await input.waitFor({ state: "visible", timeout: 5000 });
      await input.fill(name);
      await page
        .locator(".quick-input-list .monaco-list-row", { hasText: name })
        .first()
        .waitFor({ timeout: 5000 });
      await page.keyboard.press("Enter");
      await page.waitForTimeout(1000);
      return editorText(page);
    },
    (t) => typeof t === "string" && t.includes(flagged),
  );
  log(`opened ${name}`);
  const languageStatus = await page.locator(".statusbar-item[id*='editorStatus.mode'], #status\\.editor\\.mode").first().innerText().catch(() => "?");
  log(`language mode in the status bar: ${languageStatus.trim()}`);

  // The squiggle: drawn once the language server's diagnostic arrives.
  await page.locator(".editor-group-container.active .monaco-editor .squiggly-error").first().waitFor({ timeout: WAIT_MS });
  log("squiggle drawn");

  // The Problems panel (Ctrl+Shift+M) lists the finding with the checker's message.
  await until(
    "the finding in the Problems panel",
    async () => {
      if (!(await page.locator(".markers-panel").isVisible().catch(() => false))) {
        await page.keyboard.press("Control+Shift+KeyM");
        await page.waitForTimeout(500);
      }
      return page.locator(".markers-panel").innerText();
    },
    (t) => typeof t === "string" && t.includes(finding.message),
  );
  log("Problems panel lists it");

  // Hover on the squiggle: the message, the help line, and the rule code with its source.
  const diagHover = await hoverOn(
    page,
    r.start.line,
    flagged,
    // The source and the rule code follow the message ("fuzzlint" and a link "FZ010").
    [finding.message, `help: ${finding.help}`, `fuzzlint${finding.code}`],
    "the diagnostic in the hover on the squiggle",
  );
  log(`hover on the squiggle: ${JSON.stringify(diagHover)}`);
  const shot = path.join(opt.artifacts, "diagnostic-hover.png");
  await page.screenshot({ path: shot });
  if (opt.screenshot) {
    fs.copyFileSync(shot, opt.screenshot);
    log(`screenshot: ${opt.screenshot}`);
  }

  // Hover on a key: the key's documentation (the schema's description comes from the same
  // key table as the server's hover).
  const imageLine = lines.findIndex((l) => /^\s+image:/.test(l)) + 1;
  const keyHover = await hoverOn(page, imageLine, "image", ["image", imageDoc], "the key documentation in the hover on `image`");
  log(`hover on \`image\`: ${JSON.stringify(keyHover)}`);
  await page.screenshot({ path: path.join(opt.artifacts, "key-hover.png") });

  // The quick fix: the cursor on the flagged key, Ctrl+., the fix's title, Enter.
  await page.mouse.move(5, 5);
  const box = await wordBox(page, r.start.line, flagged);
  if (!box) throw new Error(`\`${flagged}\` not drawn on line ${r.start.line}`);
  await page.mouse.click(box.x, box.y);
  await page.keyboard.press("Escape");
  const title = plain(finding.fix.message);
  const action = await until(
    `the quick fix "${finding.fix.message}" in the Ctrl+. menu`,
    async () => {
      if (!(await page.locator(".action-widget").isVisible().catch(() => false))) {
        await page.keyboard.press("Control+Period");
        await page.waitForTimeout(700);
      }
      const rows = page.locator(".action-widget .monaco-list-row");
      const texts = await rows.allInnerTexts();
      const i = texts.findIndex((t) => plain(t).includes(title));
      return i >= 0 ? { i, texts } : texts;
    },
    (v) => v && typeof v === "object" && "i" in v,
  );
  log(`Ctrl+. offers: ${JSON.stringify(action.texts)}`);
  await page.screenshot({ path: path.join(opt.artifacts, "quick-fix-menu.png") });
  // The menu covers the page with a pointer block: choose with the keyboard, as a user may.
  await until(
    `"${finding.fix.message}" focused in the menu`,
    async () => {
      const focused = await page.locator(".action-widget .monaco-list-row.focused").innerText();
      if (!plain(focused).includes(title)) await page.keyboard.press("ArrowDown");
      return focused;
    },
    (t) => typeof t === "string" && plain(t).includes(title),
    10000,
  );
  await page.keyboard.press("Enter");
  const fixed = await until(
    "the editor's text after the quick fix",
    () => editorText(page),
    (t) => t === expectedFixed,
    20000,
  );
  log(`after the fix, line ${r.start.line}: ${JSON.stringify(fixed.split("\n")[r.start.line - 1])}`);
  // The server re-checks the edited text: no squiggle is left.
  await until(
    "no squiggle after the fix",
    () => page.locator(".editor-group-container.active .monaco-editor .squiggly-error").count(),
    (n) => n === 0,
  );
  await page.screenshot({ path: path.join(opt.artifacts, "after-fix.png") });
  log("passed: diagnostic, hover and quick fix read from the page");
} catch (err) {
  failed = true;
  console.error(`[code-server test] FAILED: ${err.stack || err}`);
  await page.screenshot({ path: path.join(opt.artifacts, "failure.png") }).catch(() => {});
  const text = await page.evaluate(() => document.body.innerText).catch(() => "");
  fs.writeFileSync(path.join(opt.artifacts, "page.txt"), text);
} finally {
  fs.writeFileSync(path.join(opt.artifacts, "console.txt"), consoleLines.join("\n"));
  await context.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
