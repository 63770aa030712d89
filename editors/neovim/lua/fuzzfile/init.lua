-- Fuzzfile support for Neovim: starts `fuzzlint server` (diagnostics, hover, completion,
-- navigation, rename, quick fixes) for Fuzzfile buffers.
--
-- Works on Neovim 0.7 (vim.lsp.start_client) and on current releases (vim.lsp.start,
-- vim.lsp.config / vim.lsp.enable, nvim-lspconfig). See editors/neovim/README.md.
--
--   require("fuzzfile").setup()                                   -- every Fuzzfile buffer
--   require("fuzzfile").setup({ cmd = { "/opt/bin/fuzzlint", "server" },
--                               settings = { cluster = "clusters/h100.toml" } })
--   vim.lsp.start(require("fuzzfile").config())                   -- one buffer, by hand
local M = {}

M.name = "fuzzlint"

-- The server's settings (initializationOptions and workspace/configuration, section
-- `fuzzlint`): the same names as the VS Code extension's `fuzzlint.*` settings.
M.settings_keys = { "config", "cluster", "select", "ignore", "debounceMs", "pushDiagnostics", "inlayHints" }

-- Files that mark a project's root, nearest first.
M.root_markers = { "fuzzlint.toml", ".git" }

M.filetypes = { "fuzzfile" }

local defaults = {
  cmd = { "fuzzlint", "server" },
  settings = {},
}
local options = vim.deepcopy(defaults)

-- Options given replace the defaults key by key, and `settings` entry by entry; a list (`cmd`,
-- `select`) is replaced whole (vim.tbl_deep_extend would merge lists index by index).
local function merge(base, extra)
  local out = vim.deepcopy(base)
  for k, v in pairs(extra or {}) do
    if k == "settings" then
      out.settings = vim.tbl_extend("force", out.settings or {}, v)
    else
      out[k] = v
    end
  end
  return out
end

--- The server's settings with unknown names refused (a typo would otherwise be ignored).
local function checked_settings(settings)
  local out = {}
  for k, v in pairs(settings or {}) do
    if not vim.tbl_contains(M.settings_keys, k) then
      error(string.format("fuzzfile: unknown server setting `%s` (known: %s)", k, table.concat(M.settings_keys, ", ")))
    end
    out[k] = v
  end
  return out
end

--- The directory of the nearest root marker above `path`, else the file's own directory.
function M.root_dir(path)
  if path == nil or path == "" then
    return vim.fn.getcwd()
  end
  local dir = vim.fn.fnamemodify(path, ":p:h")
  for _, marker in ipairs(M.root_markers) do
    local found = vim.fn.findfile(marker, dir .. ";")
    if found == "" then
      found = vim.fn.finddir(marker, dir .. ";")
    end
    if found ~= "" then
      return (vim.fn.fnamemodify(found, ":p:h"):gsub("/%.git$", ""))
    end
  end
  return dir
end

--- The client configuration for a buffer: what `vim.lsp.start` (0.8+) and
--- `vim.lsp.start_client` (0.7) take.
function M.config(opts, bufnr)
  opts = merge(options, opts)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local settings = checked_settings(opts.settings)
  return {
    name = M.name,
    cmd = opts.cmd,
    root_dir = opts.root_dir or M.root_dir(vim.api.nvim_buf_get_name(bufnr)),
    init_options = settings,
    settings = { fuzzlint = settings },
    on_attach = opts.on_attach,
    capabilities = opts.capabilities,
  }
end

-- Neovim 0.7 has no vim.lsp.start: one client per root directory, kept here.
local clients_by_root = {}

--- Starts (or reuses) the server for `bufnr` and attaches it; returns the client id or nil.
function M.start(bufnr, opts)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local config = M.config(opts, bufnr)
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    vim.notify(
      string.format(
        "fuzzfile: cannot start `%s`: `%s` is not found or not executable; install fuzzlint or pass cmd = { '/path/to/fuzzlint', 'server' } to setup()",
        table.concat(config.cmd, " "),
        config.cmd[1]
      ),
      vim.log.levels.ERROR
    )
    return nil
  end
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = clients_by_root[config.root_dir]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(config)
    clients_by_root[config.root_dir] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- Sets the options of later starts and starts the server for every Fuzzfile buffer, open
--- now or opened later.
function M.setup(opts)
  options = merge(defaults, opts)
  checked_settings(options.settings)
  local group = vim.api.nvim_create_augroup("fuzzfile_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.filetypes,
    callback = function(args)
      M.start(args.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(M.filetypes, vim.bo[buf].filetype) then
      M.start(buf)
    end
  end
end

--- The configuration in the form of `vim.lsp.config(name, cfg)` (Neovim 0.11+) and of
--- nvim-lspconfig's `lsp/` files: root markers instead of a root directory.
function M.lsp_config(opts)
  opts = merge(options, opts)
  local settings = checked_settings(opts.settings)
  return {
    cmd = opts.cmd,
    filetypes = M.filetypes,
    root_markers = M.root_markers,
    init_options = settings,
    settings = { fuzzlint = settings },
    on_attach = opts.on_attach,
    capabilities = opts.capabilities,
  }
end

--- Registers `fuzzlint` with nvim-lspconfig releases that take `configs.<name>` (before
--- the `lsp/` files), so `require("lspconfig").fuzzlint.setup({})` works.
function M.register_lspconfig(opts)
  local ok, configs = pcall(require, "lspconfig.configs")
  if not ok then
    error("fuzzfile: nvim-lspconfig is not installed")
  end
  if configs[M.name] == nil then
    local util = require("lspconfig.util")
    local cfg = M.lsp_config(opts)
    cfg.root_markers = nil
    cfg.root_dir = function(fname)
      return util.root_pattern(unpack(M.root_markers))(fname) or vim.fn.fnamemodify(fname, ":p:h")
    end
    configs[M.name] = { default_config = cfg }
  end
  return configs[M.name]
end

M.filetype = require("fuzzfile.filetype")

return M
