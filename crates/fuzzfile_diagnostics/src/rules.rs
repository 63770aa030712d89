//! The rule registry: every diagnostic the toolchain emits belongs to exactly one rule with a
//! stable kebab-case name, a stable code and a default severity. Each rule declares these
//! beside its documentation and its check in `fuzzfile_check::rules`; the `Rule` table
//! (`rules_generated.rs`) is generated from those declarations, and docs/rules/ from the
//! documentation.

use crate::Severity;
use serde::{Serialize, Serializer};

/// Which layer finds a rule's diagnostics.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleCategory {
    /// The YAML text itself.
    Syntax,
    /// The shape of the Fuzzfile: keys, types, value grammars.
    Schema,
    /// Relations between parts of the file: references, the job graph.
    Semantic,
    /// GPU launches, NCCL settings and cluster facts.
    Gpu,
    /// The checker's own settings (suppressions).
    Meta,
    /// Application templates (Go `text/template`) and their values files.
    Template,
}

macro_rules! rules {
    ($( $variant:ident => ($code:literal, $name:literal, $sev:ident, $cat:ident, $summary:literal $(, fix: $safety:ident)? $(, aliases: [$($alias:literal),* $(,)?])? ), )*) => {
        /// Every rule, in code order.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub enum Rule { $( $variant, )* }

        impl Rule {
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant, )* ];

            /// The stable kebab-case name (`unknown-key`).
            pub const fn name(self) -> &'static str {
                match self { $( Rule::$variant => $name, )* }
            }
            /// The stable code (`FZ010`).
            pub const fn code(self) -> &'static str {
                match self { $( Rule::$variant => $code, )* }
            }
            pub const fn default_severity(self) -> Severity {
                match self { $( Rule::$variant => Severity::$sev, )* }
            }
            pub const fn category(self) -> RuleCategory {
                match self { $( Rule::$variant => RuleCategory::$cat, )* }
            }
            /// The safety of the rule's fixes (`fix_safety` of its `declare_rule!`), which a
            /// fix can override ([`crate::Fix::applicability`]); `None` for a rule without
            /// fixes.
            pub const fn fix_safety(self) -> Option<crate::Applicability> {
                match self { $( Rule::$variant => {
                    #[allow(unused_variables)]
                    let safety: Option<crate::Applicability> = None;
                    $( let safety = Some(crate::Applicability::$safety); )?
                    safety
                } )* }
            }
            /// One line saying what the rule detects.
            pub const fn summary(self) -> &'static str {
                match self { $( Rule::$variant => $summary, )* }
            }
            /// The names the rule had before it was renamed. Each is still accepted wherever a
            /// rule name is (configs, suppressions, `fuzzlint rule`, editor settings), and
            /// means this rule.
            pub const fn aliases(self) -> &'static [&'static str] {
                match self { $( Rule::$variant => &[ $($($alias,)*)? ], )* }
            }

            /// The rule a name, a former name (an alias) or a code (any case) designates,
            /// and how it was named. [`RuleName::alias`] is the former name when the rule
            /// was named by one, so a caller can say the current name.
            pub fn lookup(name: &str) -> Option<RuleName<Rule>> {
                lookup_in(Rule::ALL.iter().map(|&r| (r, r.name(), r.code(), r.aliases())), name)
            }

            /// The rule a name, a former name or a code designates ([`Rule::lookup`]).
            pub fn from_name(name: &str) -> Option<Rule> {
                Rule::lookup(name).map(|n| n.rule)
            }
        }
    };
}

/// A rule found by [`Rule::lookup`]: the rule, and the former name it was designated by.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RuleName<R> {
    pub rule: R,
    /// The alias written, when the rule was named by a former name: `Some("old-name")`
    /// where the rule is now `new-name`.
    pub alias: Option<&'static str>,
}

/// The row of `rows` (rule, name, code, aliases) that `name` designates: by its name, a
/// former name (exact), or its code (any case). A current name wins over an alias, so a
/// name given up by one rule and taken by another designates the new owner.
fn lookup_in<R: Copy>(
    rows: impl Iterator<Item = (R, &'static str, &'static str, &'static [&'static str])> + Clone,
    name: &str,
) -> Option<RuleName<R>> {
    let direct = rows
        .clone()
        .find(|&(_, n, code, _)| n == name || code.eq_ignore_ascii_case(name));
    if let Some((rule, ..)) = direct {
        return Some(RuleName { rule, alias: None });
    }
    rows.into_iter().find_map(|(rule, _, _, aliases)| {
        aliases.iter().find(|a| **a == name).map(|&a| RuleName {
            rule,
            alias: Some(a),
        })
    })
}

// The table of every rule (variant => code, name, default severity, category, summary) is
// generated from each rule's `declare_rule!` block in `fuzzfile_check::rules`; the model
// builder emits these values too, which is why the enum lives here.
include!("rules_generated.rs");

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_codes_are_unique_and_well_formed() {
        let mut names = HashSet::new();
        let mut codes = HashSet::new();
        for r in Rule::ALL {
            assert!(names.insert(r.name()), "duplicate name {}", r.name());
            assert!(codes.insert(r.code()), "duplicate code {}", r.code());
            assert!(
                r.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{} not kebab-case",
                r.name()
            );
            assert!(
                r.code().starts_with("FZ") && r.code().len() == 5,
                "{}",
                r.code()
            );
            assert_eq!(Rule::from_name(r.name()), Some(*r));
            assert_eq!(Rule::from_name(r.code()), Some(*r));
            assert_eq!(
                Rule::lookup(r.name()),
                Some(RuleName {
                    rule: *r,
                    alias: None
                })
            );
        }
        // A former name is no current name nor another rule's former name, and is kebab-case.
        for r in Rule::ALL {
            for a in r.aliases() {
                assert!(names.insert(a), "alias `{a}` of {} is taken", r.name());
                assert!(
                    a.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                    "{a} not kebab-case"
                );
                assert_eq!(
                    Rule::lookup(a),
                    Some(RuleName {
                        rule: *r,
                        alias: Some(*a)
                    })
                );
            }
        }
        assert_eq!(Rule::from_name("no-such-rule"), None);
        assert_eq!(Rule::from_name("fz201"), Some(Rule::LauncherNprocMismatch));
    }

    /// A table in the generated form, with a renamed rule: what `rules_generated.rs` holds
    /// once a rule declares `aliases: [..]`.
    #[allow(dead_code)]
    mod fixture {
        use super::super::{lookup_in, RuleCategory, RuleName, Severity};
        rules! {
            Plain => ("FZ001", "plain-rule", Error, Syntax, "A rule never renamed", fix: Safe),
            Renamed => ("FZ201", "launcher-nproc-mismatch", Error, Gpu, "A renamed rule", fix: Unsafe, aliases: ["torchrun-nproc-mismatch", "nproc-mismatch"]),
            Taker => ("FZ202", "taken-name", Warning, Gpu, "Owns a name another rule gave up", aliases: []),
            Giver => ("FZ203", "new-giver", Warning, Gpu, "Gave up its name", aliases: ["taken-name"]),
        }
    }

    #[test]
    fn a_former_name_designates_the_renamed_rule_and_says_so() {
        use fixture::Rule as F;
        assert_eq!(
            F::Renamed.aliases(),
            &["torchrun-nproc-mismatch", "nproc-mismatch"]
        );
        assert!(F::Plain.aliases().is_empty());
        // A declared fix safety reaches the table; a rule without fixes has none.
        assert_eq!(F::Plain.fix_safety(), Some(crate::Applicability::Safe));
        assert_eq!(F::Renamed.fix_safety(), Some(crate::Applicability::Unsafe));
        assert_eq!(F::Taker.fix_safety(), None);
        for old in ["torchrun-nproc-mismatch", "nproc-mismatch"] {
            let found = F::lookup(old).unwrap();
            assert_eq!(found.rule, F::Renamed);
            assert_eq!(found.alias, Some(old));
            // The caller can say the current name.
            assert_eq!(found.rule.name(), "launcher-nproc-mismatch");
            assert_eq!(F::from_name(old), Some(F::Renamed));
        }
        // The current name and the code are no alias.
        for now in ["launcher-nproc-mismatch", "FZ201", "fz201"] {
            assert_eq!(
                F::lookup(now),
                Some(RuleName {
                    rule: F::Renamed,
                    alias: None
                })
            );
        }
        // Aliases match exactly: no case folding, no prefix.
        assert_eq!(F::lookup("Torchrun-Nproc-Mismatch"), None);
        assert_eq!(F::lookup("torchrun-nproc"), None);
        // A name given up by one rule and taken by another designates its current owner.
        assert_eq!(
            F::lookup("taken-name"),
            Some(RuleName {
                rule: F::Taker,
                alias: None
            })
        );
    }
}
