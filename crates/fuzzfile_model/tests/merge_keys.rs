//! YAML merge keys (`<<: *defaults`, `<<: [*a, *b]`) in the model, as Fuzzball's decoder
//! (Go `yaml.v3`) applies them: no `unknown-key` for `<<`, merged keys count, keys written in
//! the mapping win, merged values point at the anchor's text.
//!
//! The shapes follow the Compose specification's fragments and extensions
//! (compose-spec `10-fragments.md` Example 3 and `11-extension.md` Example 2, vendored in
//! docker/docs `_vendor/github.com/compose-spec/compose-spec/`): an anchored block reused with
//! `<<: *anchor` and a partial override beside it.

#![allow(clippy::unwrap_used)]

use fuzzfile_diagnostics::Rule;
use fuzzfile_model::{build, Fuzzfile};

fn model(text: &str) -> (Fuzzfile, Vec<fuzzfile_diagnostics::Diagnostic>) {
    let tree = fuzzfile_syntax::parse(text);
    assert!(tree.errors.is_empty(), "{:?}", tree.errors);
    build(text, &tree)
}

const SHARED: &str = "\
version: v4
jobs:
  train:
    image: &image
      uri: docker://nvcr.io/nvidia/pytorch:24.05-py3
    command: [torchrun, --nproc-per-node=8, train.py]
    resource: &gpu-node
      cpu:
        cores: 32
      memory:
        size: 256GiB
      devices:
        nvidia.com/gpu: 8
  eval:
    image: *image
    command: [torchrun, --nproc-per-node=8, eval.py]
    resource:
      <<: *gpu-node
      cpu:
        cores: 16
";

#[test]
fn merged_keys_count_and_written_keys_win() {
    let (m, diags) = model(SHARED);
    assert!(diags.is_empty(), "{diags:?}");
    let eval = m.task("eval").unwrap();
    let res = eval.resource.as_ref().unwrap();
    // From the anchor.
    let gpus = res.device("nvidia.com/gpu").unwrap();
    assert_eq!(gpus.value, 8);
    assert_eq!(res.memory.as_ref().map(|m| m.value.bytes), Some(256 << 30));
    // Written beside the merge key: wins over the anchor's 32.
    assert_eq!(res.cores.as_ref().map(|c| c.value), Some(16));
    // The merged value points at the anchor's text (under `train`), not at `<<`.
    let at = SHARED.find("nvidia.com/gpu: 8").unwrap() + "nvidia.com/gpu: ".len();
    assert_eq!(gpus.range.start as usize, at);
    assert_eq!(gpus.range.slice(SHARED), "8");
    let cores = res.cores.as_ref().unwrap();
    assert_eq!(cores.range.slice(SHARED), "16");
    assert!(res.devices_key.is_some());
}

#[test]
fn a_list_of_merges_takes_the_first_mapping_that_has_a_key() {
    let text = "\
version: v4
jobs:
  small: &small
    image: {uri: docker://alpine:3.20}
    command: [sh, -c, 'true']
    resource: {cpu: {cores: 2}}
  gpus: &gpus
    image: {uri: docker://nvcr.io/nvidia/pytorch:24.05-py3}
    command: [nvidia-smi]
    resource: {devices: {nvidia.com/gpu: 4}}
  both:
    <<: [*gpus, *small]
    env: [A=1]
  other-order:
    <<: [*small, *gpus]
";
    let (m, diags) = model(text);
    assert!(diags.is_empty(), "{diags:?}");
    // The merge is shallow: `resource` comes whole from the first mapping that has it.
    let both = m.task("both").unwrap();
    let res = both.resource.as_ref().unwrap();
    assert_eq!(res.device("nvidia.com/gpu").map(|d| d.value), Some(4));
    assert!(res.cores.is_none());
    assert_eq!(both.command.as_ref().unwrap().value[0].value, "nvidia-smi");
    assert_eq!(both.env.len(), 1);
    let other = m.task("other-order").unwrap();
    let res = other.resource.as_ref().unwrap();
    assert!(res.device("nvidia.com/gpu").is_none());
    assert_eq!(res.cores.as_ref().map(|c| c.value), Some(2));
}

#[test]
fn problems_inside_the_anchor_are_reported_at_the_anchor_and_bad_merge_values_at_the_value() {
    let text = "\
version: v4
jobs:
  a:
    image: {uri: docker://alpine:3.20}
    command: [sh]
    resource: &r
      cpu: {cores: 2}
      gpus: 4
  b:
    image: {uri: docker://alpine:3.20}
    command: [sh]
    resource:
      <<: *r
  c:
    image: {uri: docker://alpine:3.20}
    command: [sh]
    env: &e [A=1]
    resource:
      <<: *e
";
    let (_, diags) = model(text);
    let found: Vec<(Rule, &str, &str)> = diags
        .iter()
        .map(|d| (d.rule, d.range.slice(text), d.message.as_str()))
        .collect();
    // `gpus` is unknown where it is written (once per mapping it is read into: the check
    // layer removes the repeats), never `<<`.
    assert!(found.iter().all(|f| f.1 != "<<"), "{found:?}");
    assert!(found
        .iter()
        .all(|f| f.0 != Rule::UnknownKey || f.1 == "gpus"));
    assert!(found
        .iter()
        .any(|f| f.0 == Rule::UnknownKey && f.1 == "gpus"));
    assert!(
        found.contains(&(
            Rule::InvalidValue,
            "*e",
            "map merge requires map or sequence of maps as the value (found a list)"
        )),
        "{found:?}"
    );
}

/// Merge keys cannot make the walk run away: 5,000 jobs each merging an anchor of 2,000
/// annotations ask for ten million entries; the walk stops at its budget with the
/// "aliases expand this document" error, in time proportional to the text.
#[test]
fn many_merges_of_a_large_anchor_stop_at_the_walk_budget() {
    let mut text = String::from("version: v4\njobs:\n  base:\n    image: {uri: docker://alpine:3.20}\n    command: [true]\n    resource:\n      annotations: &big\n");
    for i in 0..2_000 {
        text.push_str(&format!("        k{i}: v\n"));
    }
    for j in 0..5_000 {
        text.push_str(&format!(
            "  j{j}:\n    image: {{uri: docker://alpine:3.20}}\n    command: [true]\n    resource:\n      annotations: {{<<: *big}}\n"
        ));
    }
    let start = std::time::Instant::now();
    let (m, diags) = model(&text);
    let took = start.elapsed();
    assert!(
        diags
            .iter()
            .any(|d| d.rule == Rule::YamlSyntax && d.message.contains("aliases expand")),
        "{:?}",
        diags.iter().take(3).collect::<Vec<_>>()
    );
    // The jobs read before the budget ran out have every merged annotation.
    let first = m.task("j0").unwrap();
    assert_eq!(first.resource.as_ref().unwrap().annotations.len(), 2_000);
    assert!(took.as_secs() < 20, "{took:?}");
}
