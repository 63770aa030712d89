-- Filetype `fuzzfile` for *.fz, Fuzzfile templates and Fuzzfile YAML (lua/fuzzfile/filetype.lua).
require("fuzzfile.filetype").setup()
