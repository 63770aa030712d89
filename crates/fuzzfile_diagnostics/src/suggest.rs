//! "Did you mean": edit distances between words and the closest of a list of candidates,
//! shared by every layer that suggests a name for a misspelt one (Fuzzfile keys, values of a
//! template's values file, rule names, template value names).

/// Damerau-Levenshtein (optimal string alignment) distance, for "did you mean". Words too long
/// to be typos of a key (over 65,536 cells of work) get the longer length, the largest
/// distance.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > 1 << 16 {
        // Too long to be a typo of a key: as far apart as two words can be.
        return n.max(m);
    }
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[n][m]
}

/// Levenshtein distance (insertions, deletions and substitutions; a swap of two neighbours
/// counts two), in one row of memory.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `word` (ASCII case ignored, [`edit_distance`]), if it is close
/// enough to be a likely typo: at most a third of the longer word's length apart (at least 1).
/// Of equally close candidates, the first.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lw = word.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let limit = (c.chars().count().max(word.chars().count()) / 3).max(1);
        // The length difference is a lower bound of the distance (and all that
        // `edit_distance` returns for words of very different lengths).
        if c.chars().count().abs_diff(word.chars().count()) > limit {
            continue;
        }
        let dist = edit_distance(&lw, &c.to_ascii_lowercase());
        if dist <= limit && best.is_none_or(|(bd, _)| dist < bd) {
            best = Some((dist, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `word` spelt in lower case with `sep` between its words, the words of a camelCase or of
/// another separator's spelling: `separated_case("taskArray", '-')` is `task-array`,
/// `separated_case("procs_per_node", '-')` is `procs-per-node`, `separated_case("displayName",
/// '_')` is `display_name`. A `-` or `_` that is not `sep` becomes `sep`.
pub fn separated_case(word: &str, sep: char) -> String {
    let mut out = String::with_capacity(word.len() + 4);
    for (i, c) in word.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with(sep) {
                out.push(sep);
            }
            out.push(c.to_ascii_lowercase());
        } else if c == '-' || c == '_' {
            out.push(sep);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("comand", "command"), 1);
        // A swap of neighbours is one edit for the alignment distance, two for Levenshtein.
        assert_eq!(edit_distance("Cores", "Cores"), 0);
        assert_eq!(edit_distance("Croes", "Cores"), 1);
        assert_eq!(levenshtein("Croes", "Cores"), 2);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        let long = "a".repeat(300);
        assert_eq!(edit_distance(&long, &"b".repeat(300)), 300);
    }

    #[test]
    fn closest_candidate() {
        let keys = ["command", "depends-on", "resource"];
        assert_eq!(did_you_mean("COMAND", keys), Some("command"));
        assert_eq!(did_you_mean("depends_on", keys), Some("depends-on"));
        assert_eq!(did_you_mean("zzzzzz", keys), None);
        // Two equally close: the first.
        assert_eq!(did_you_mean("ab", ["ax", "ay"]), Some("ax"));
    }

    #[test]
    fn separated_spellings() {
        assert_eq!(separated_case("taskArray", '-'), "task-array");
        assert_eq!(separated_case("procs_per_node", '-'), "procs-per-node");
        assert_eq!(separated_case("displayName", '_'), "display_name");
        assert_eq!(separated_case("string-value", '_'), "string_value");
        assert_eq!(separated_case("URI", '_'), "u_r_i");
        assert_eq!(separated_case("a_B", '_'), "a_b");
    }
}
