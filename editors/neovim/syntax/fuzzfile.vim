" A Fuzzfile is YAML: YAML's syntax.
if exists("b:current_syntax")
  finish
endif
runtime! syntax/yaml.vim
unlet! b:current_syntax
let b:current_syntax = "fuzzfile"
