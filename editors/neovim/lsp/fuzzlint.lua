-- `vim.lsp.config` / `vim.lsp.enable("fuzzlint")` (Neovim 0.11+) read this file from the
-- runtimepath: the same configuration as require("fuzzfile").lsp_config().
return require("fuzzfile").lsp_config()
