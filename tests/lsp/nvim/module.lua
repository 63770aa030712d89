-- The editors/neovim module without a server: filetype detection and the configurations it
-- gives. Run from the repository root:
--   nvim --headless --clean --cmd 'set rtp^=editors/neovim' -c 'luafile tests/lsp/nvim/module.lua'
-- Prints `ok NAME` per check, `N passed, N failed`, and exits 1 when one failed.
local fuzzfile = require("fuzzfile")
local ft = fuzzfile.filetype
local passed, failed = 0, 0

local function check(name, fn)
  local ok, err = pcall(fn)
  if ok then
    passed = passed + 1
    io.stdout:write("ok " .. name .. "\n")
  else
    failed = failed + 1
    io.stdout:write("FAIL " .. name .. ": " .. tostring(err) .. "\n")
  end
end

local function eq(a, b, what)
  if not vim.deep_equal(a, b) then
    error(string.format("%s: expected %s, got %s", what or "value", vim.inspect(b), vim.inspect(a)), 2)
  end
end

check("file names that make a Fuzzfile", function()
  eq(ft.by_name("/w/train.fz"), true, "train.fz")
  eq(ft.by_name("template.yaml"), true, "template.yaml")
  eq(ft.by_name("/w/gpu.template.yml"), true, "gpu.template.yml")
  eq(ft.by_name("/w/gpu.template.yaml"), true, "gpu.template.yaml")
  eq(ft.by_name("/w/values.yaml"), false, "values.yaml")
  eq(ft.by_name("/w/fz"), false, "fz")
  eq(ft.by_name("/w/train.fz.bak"), false, "train.fz.bak")
end)

check("YAML content that makes a Fuzzfile", function()
  eq(ft.by_content({ "version: v4", "jobs:", "  a:" }), true, "v4 with jobs")
  eq(ft.by_content({ "# comment", "jobs: # the jobs", "  a: {}", "version: 'v1'" }), true, "v1 after jobs")
  eq(ft.by_content({ "version: v4", "services:" }), false, "no jobs")
  eq(ft.by_content({ "version: 3.8", "jobs:" }), false, "compose-like version")
  eq(ft.by_content({ "  version: v4", "  jobs:" }), false, "not at the top level")
end)

check("a buffer is detected by name and by content", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  vim.fn.writefile({ "version: v4", "jobs:", "  a:", "    command: [true]" }, dir .. "/pipeline.yaml")
  vim.fn.writefile({ "version: v4", "kind: Deployment" }, dir .. "/deploy.yaml")
  vim.fn.writefile({ "jobs:" }, dir .. "/x.fz")
  vim.cmd("edit " .. dir .. "/pipeline.yaml")
  eq(vim.bo.filetype, "fuzzfile", "pipeline.yaml")
  vim.cmd("edit " .. dir .. "/deploy.yaml")
  eq(vim.bo.filetype, "yaml", "deploy.yaml")
  vim.cmd("edit " .. dir .. "/x.fz")
  eq(vim.bo.filetype, "fuzzfile", "x.fz")
  eq(vim.bo.commentstring, "# %s", "commentstring")
end)

check("config() is what vim.lsp.start takes, with the settings twice", function()
  local buf = vim.api.nvim_get_current_buf()
  local c = fuzzfile.config({ cmd = { "/opt/fuzzlint", "server" }, settings = { cluster = "h100.toml" } }, buf)
  eq(c.name, "fuzzlint", "name")
  eq(c.cmd, { "/opt/fuzzlint", "server" }, "cmd")
  eq(c.init_options, { cluster = "h100.toml" }, "init_options")
  eq(c.settings, { fuzzlint = { cluster = "h100.toml" } }, "settings")
  eq(type(c.root_dir), "string", "root_dir")
end)

check("the root is the nearest fuzzlint.toml, else .git, else the file's directory", function()
  local dir = vim.fn.resolve(vim.fn.tempname())
  vim.fn.mkdir(dir .. "/repo/.git", "p")
  vim.fn.mkdir(dir .. "/repo/proj/sub", "p")
  vim.fn.writefile({}, dir .. "/repo/proj/fuzzlint.toml")
  eq(fuzzfile.root_dir(dir .. "/repo/proj/sub/a.fz"), dir .. "/repo/proj", "fuzzlint.toml")
  eq(fuzzfile.root_dir(dir .. "/repo/b.fz"), dir .. "/repo", ".git")
  vim.fn.mkdir(dir .. "/alone", "p")
  local alone = fuzzfile.root_dir(dir .. "/alone/c.fz")
  eq(alone == dir .. "/alone" or vim.fn.isdirectory(alone .. "/.git") == 1, true, "no marker: " .. alone)
end)

check("options replace lists whole and add to the settings of setup()", function()
  -- setup() starts the server for the open `fuzzfile` buffers: none of these commands exists.
  local notify = vim.notify
  local messages = {}
  vim.notify = function(m)
    table.insert(messages, m)
  end
  fuzzfile.setup({ cmd = { "/opt/fuzzlint-wrapper" }, settings = { select = { "FZ0", "FZ1" }, cluster = "a.toml" } })
  local c = fuzzfile.config({ settings = { select = { "FZ2" } } })
  eq(c.cmd, { "/opt/fuzzlint-wrapper" }, "cmd")
  eq(c.init_options, { select = { "FZ2" }, cluster = "a.toml" }, "settings")
  fuzzfile.setup({ cmd = { "/nonexistent/fuzzlint", "server" } })
  vim.notify = notify
  eq(fuzzfile.config().cmd, { "/nonexistent/fuzzlint", "server" }, "setup() again replaces")
  eq(fuzzfile.config().init_options, {}, "setup() again resets the settings")
  eq(#messages > 0 and messages[1]:match("^fuzzfile: cannot start `/opt/fuzzlint%-wrapper`") ~= nil, true, vim.inspect(messages))
  -- Back to the defaults, with no Fuzzfile buffer open to start a server for.
  vim.cmd("silent! %bwipeout!")
  fuzzfile.setup()
end)

check("lsp_config() is what vim.lsp.config takes", function()
  local c = fuzzfile.lsp_config({ settings = { select = { "FZ2" } } })
  eq(c.cmd, { "fuzzlint", "server" }, "cmd")
  eq(c.filetypes, { "fuzzfile" }, "filetypes")
  eq(c.root_markers, { "fuzzlint.toml", ".git" }, "root_markers")
  eq(c.init_options, { select = { "FZ2" } }, "init_options")
  eq(c.root_dir, nil, "root_dir")
  -- lsp/fuzzlint.lua, which vim.lsp.config reads from the runtimepath, returns the same.
  local file = vim.api.nvim_get_runtime_file("lsp/fuzzlint.lua", false)[1]
  eq(type(file), "string", "lsp/fuzzlint.lua on the runtimepath")
  eq(dofile(file).filetypes, { "fuzzfile" }, "lsp/fuzzlint.lua")
end)

check("an unknown server setting is an error naming it", function()
  local ok, err = pcall(fuzzfile.config, { settings = { clusterr = "x" } })
  eq(ok, false, "accepted")
  eq(tostring(err):match("unknown server setting `clusterr`") ~= nil, true, tostring(err))
end)

check("a missing fuzzlint is reported, not started", function()
  local messages = {}
  local notify = vim.notify
  vim.notify = function(m)
    table.insert(messages, m)
  end
  local id = fuzzfile.start(0, { cmd = { "/nonexistent/fuzzlint", "server" } })
  vim.notify = notify
  eq(id, nil, "client id")
  eq(#messages, 1, "messages")
  eq(messages[1]:match("cannot start `/nonexistent/fuzzlint server`: `/nonexistent/fuzzlint` is not found") ~= nil, true, messages[1])
end)

if vim.lsp.config and vim.lsp.enable then
  check("vim.lsp.config('fuzzlint') finds lsp/fuzzlint.lua (Neovim 0.11+)", function()
    eq(vim.lsp.config.fuzzlint.filetypes, { "fuzzfile" }, "filetypes")
  end)
end

io.stdout:write(string.format("%d passed, %d failed\n", passed, failed))
vim.cmd(failed == 0 and "qall!" or "cquit 1")
