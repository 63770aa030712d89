//! Fuzzball's expansion of `$MULTINODE_*` in `command:` words, finished at run time: the plan
//! expands what is known when planning and lists in `unexpanded` the names whose values only
//! the run knows (`MULTINODE_NODE_IP`, the head's address); the runner fills those from the
//! head's resolved environment, through the same model
//! ([`fuzzfile_check::semantics::expand_command_word`]).

use std::collections::BTreeSet;

/// `argv` of instance `i` with its `unexpanded` names filled from `env` (the head's whole
/// environment, every value known). The words Fuzzball adds in front (an MPI wrapper) are
/// not the user's and stay as they are.
pub(crate) fn command_words(
    argv: Vec<String>,
    i: &fuzzfile_plan::Instance,
    env: &[(String, String)],
) -> Vec<String> {
    if i.unexpanded.is_empty() {
        return argv;
    }
    let value_of = |name: &str| -> Option<Option<String>> {
        if !i.unexpanded.iter().any(|u| u == name) {
            return None;
        }
        env.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| Some(v.clone()))
    };
    let skip = i.wrapper_words as usize;
    argv.into_iter()
        .enumerate()
        .map(|(k, w)| {
            if k < skip {
                w
            } else {
                let mut left = BTreeSet::new();
                fuzzfile_check::semantics::expand_command_word(&w, &value_of, &mut left)
            }
        })
        .collect()
}
