-- Which buffers are Fuzzfiles (filetype `fuzzfile`):
--   - `*.fz`;
--   - templates, by name as fuzzlint decides them: `template.yaml`, `*.template.yaml`,
--     `*.template.yml`, `*.template.fz`;
--   - other YAML files whose top level has `version: v1` or `version: v4` and a `jobs:`
--     key (within the first 200 lines).
-- Loaded by ftdetect/fuzzfile.lua; works on Neovim 0.7 (autocommands) and later.
local M = {}

M.max_lines = 200

--- Whether a file name alone makes a Fuzzfile.
function M.by_name(path)
  local name = vim.fn.fnamemodify(path or "", ":t")
  return name:match("%.fz$") ~= nil
    or name == "template.yaml"
    or name:match("%.template%.ya?ml$") ~= nil
end

--- Whether YAML lines are a Fuzzfile's: a top-level `version: v1|v4` and `jobs:`.
function M.by_content(lines)
  local version, jobs = false, false
  for _, line in ipairs(lines) do
    if line:match("^version:%s*[\"']?v[14][\"']?%s*$") or line:match("^version:%s*[\"']?v[14][\"']?%s+#") then
      version = true
    elseif line:match("^jobs:%s*$") or line:match("^jobs:%s*#") or line:match("^jobs:%s*{") then
      jobs = true
    end
    if version and jobs then
      return true
    end
  end
  return false
end

--- Sets filetype `fuzzfile` on `bufnr` when it is one; returns whether it did.
function M.detect(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local path = vim.api.nvim_buf_get_name(bufnr)
  local yes = M.by_name(path)
  if not yes and path:match("%.ya?ml$") then
    yes = M.by_content(vim.api.nvim_buf_get_lines(bufnr, 0, M.max_lines, false))
  end
  if yes and vim.bo[bufnr].filetype ~= "fuzzfile" then
    vim.bo[bufnr].filetype = "fuzzfile"
  end
  return yes
end

--- Detection on reading and creating files (idempotent).
function M.setup()
  local group = vim.api.nvim_create_augroup("fuzzfile_filetype", { clear = true })
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
    group = group,
    pattern = { "*.fz", "*.yaml", "*.yml" },
    callback = function(args)
      M.detect(args.buf)
    end,
  })
  -- A Fuzzfile is YAML: YAML's syntax and, where Neovim has it, the YAML tree-sitter parser.
  if vim.treesitter and vim.treesitter.language and vim.treesitter.language.register then
    pcall(vim.treesitter.language.register, "yaml", "fuzzfile")
  end
end

return M
