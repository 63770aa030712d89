-- Smoke test: headless Neovim starts `fuzzlint server` for the current buffer and waits for
-- its diagnostics. Run from the repository root:
--   FUZZLINT=target/debug/fuzzlint nvim --headless --clean \
--     -c 'luafile tests/lsp/nvim/smoke.lua' tests/specs/launcher-nproc-mismatch/bad.fz
-- Prints each diagnostic and exits 0 when at least one arrived, 1 otherwise.
local fuzzlint = os.getenv("FUZZLINT") or "target/debug/fuzzlint"
local buf = vim.api.nvim_get_current_buf()
local config = {
  name = "fuzzlint",
  cmd = { fuzzlint, "server" },
  root_dir = vim.fn.getcwd(),
}
local client_id
if vim.lsp.start then
  -- Neovim 0.8 and later.
  client_id = vim.lsp.start(config, { bufnr = buf })
else
  client_id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(buf, client_id)
end
if not client_id then
  io.stderr:write("smoke: could not start " .. fuzzlint .. "\n")
  vim.cmd("cquit 1")
end

local got = vim.wait(20000, function()
  return #vim.diagnostic.get(buf) > 0
end, 50)

for _, d in ipairs(vim.diagnostic.get(buf)) do
  io.stdout:write(string.format("%s:%d:%d: [%s] %s\n", vim.api.nvim_buf_get_name(buf), d.lnum + 1, d.col + 1,
    d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or "?", d.message))
end

-- Shut the server down (shutdown, then exit) before leaving.
vim.lsp.stop_client(client_id)
vim.wait(5000, function()
  return vim.lsp.get_client_by_id(client_id) == nil
end, 50)

if got then
  vim.cmd("qall!")
else
  io.stderr:write("smoke: no diagnostics from fuzzlint server within 20 s\n")
  vim.cmd("cquit 1")
end
