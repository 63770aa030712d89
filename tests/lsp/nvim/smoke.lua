-- Smoke test: headless Neovim with editors/neovim on its runtimepath detects the file's
-- filetype, starts `fuzzlint server` through the module and waits for its diagnostics,
-- then asks for a hover. Run from the repository root:
--   FUZZLINT=target/debug/fuzzlint nvim --headless --clean --cmd 'set rtp^=editors/neovim' \
--     -c 'luafile tests/lsp/nvim/smoke.lua' tests/specs/launcher-nproc-mismatch/bad.fz
-- HOVER=LINE:COL (1-based) says where to hover (default: at the first diagnostic).
-- Prints `filetype: ...`, each diagnostic, and `hover: ...` (the hover's lines joined);
-- exits 0 when the filetype is fuzzfile, a diagnostic arrived and the hover has text,
-- 1 otherwise.
local fuzzlint = os.getenv("FUZZLINT") or "target/debug/fuzzlint"
local buf = vim.api.nvim_get_current_buf()

local function fail(message)
  io.stderr:write("smoke: " .. message .. "\n")
  vim.cmd("cquit 1")
end

io.stdout:write("filetype: " .. vim.bo[buf].filetype .. "\n")
if vim.bo[buf].filetype ~= "fuzzfile" then
  fail("editors/neovim did not set filetype `fuzzfile` (is it on the runtimepath?)")
end

local fuzzfile = require("fuzzfile")
fuzzfile.setup({ cmd = { fuzzlint, "server" } })

local function client()
  -- vim.lsp.get_clients (0.10+) replaced vim.lsp.buf_get_clients (0.7).
  local list = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf }) or vim.lsp.buf_get_clients(buf)
  for _, c in pairs(list) do
    if c.name == fuzzfile.name then
      return c
    end
  end
end
if not vim.wait(10000, function()
  return client() ~= nil
end, 20) then
  fail("the module attached no `fuzzlint` client to the buffer")
end
local client_id = client().id

local got = vim.wait(20000, function()
  return #vim.diagnostic.get(buf) > 0
end, 50)

local diagnostics = vim.diagnostic.get(buf)
for _, d in ipairs(diagnostics) do
  io.stdout:write(string.format("%s:%d:%d: [%s] %s\n", vim.api.nvim_buf_get_name(buf), d.lnum + 1, d.col + 1,
    d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or "?", d.message))
end

local hover_text = ""
if got then
  local line, col = diagnostics[1].lnum, diagnostics[1].col
  local at = os.getenv("HOVER")
  if at and at ~= "" then
    local l, c = at:match("^(%d+):(%d+)$")
    line, col = tonumber(l) - 1, tonumber(c) - 1
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = line, character = col },
  }
  local responses = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, 10000) or {}
  for _, r in pairs(responses) do
    if r.result and r.result.contents then
      local lines = vim.lsp.util.convert_input_to_markdown_lines(r.result.contents)
      hover_text = table.concat(lines, " ")
    end
  end
  io.stdout:write(string.format("hover at %d:%d: %s\n", line + 1, col + 1, hover_text))
end

-- Shut the server down (shutdown, then exit) before leaving.
vim.lsp.stop_client(client_id)
vim.wait(5000, function()
  return vim.lsp.get_client_by_id(client_id) == nil
end, 50)

if not got then
  fail("no diagnostics from fuzzlint server within 20 s")
elseif hover_text:match("^%s*$") then
  fail("the hover was empty")
else
  vim.cmd("qall!")
end
