; The shell inside a Fuzzfile: `script:` and the script after `sh -c` in `command:`.
; Then YAML's own injections (comments).

; script: |
;   #!/bin/sh
(block_mapping_pair
  key: (flow_node) @_key (#eq? @_key "script")
  value: (block_node (block_scalar) @injection.content)
  (#set! injection.language "bash"))

; script: echo hi
(block_mapping_pair
  key: (flow_node) @_key (#eq? @_key "script")
  value: (flow_node [(plain_scalar) (double_quote_scalar) (single_quote_scalar)] @injection.content)
  (#set! injection.language "bash"))

; command: [sh, -c, "..."]
(block_mapping_pair
  key: (flow_node) @_key (#eq? @_key "command")
  value: (flow_node
    (flow_sequence
      (flow_node) @_shell
      .
      (flow_node) @_c
      .
      (flow_node) @injection.content))
  (#match? @_shell "^[\"']?(/usr)?(/bin/)?(ba|da|z|k|mk)?sh[\"']?$")
  (#match? @_c "^[\"']?-c[\"']?$")
  (#set! injection.language "bash"))

; command:
;   - /bin/sh
;   - -c
;   - >-
;     ...
(block_mapping_pair
  key: (flow_node) @_key (#eq? @_key "command")
  value: (block_node
    (block_sequence
      (block_sequence_item (flow_node) @_shell)
      .
      (block_sequence_item (flow_node) @_c)
      .
      (block_sequence_item [(flow_node) (block_node)] @injection.content)))
  (#match? @_shell "^[\"']?(/usr)?(/bin/)?(ba|da|z|k|mk)?sh[\"']?$")
  (#match? @_c "^[\"']?-c[\"']?$")
  (#set! injection.language "bash"))

; inherits: yaml
