//! NGC PyTorch container tags (`nvcr.io/nvidia/pytorch:YY.MM-…`) and the CUDA and NCCL inside
//! them, from `data/ngc-pytorch-cuda.tsv`.
//!
//! NGC tags are dated, and a later tag never moves to an older CUDA or NCCL. The table therefore
//! needs no row per tag: a tag between two rows has each version bounded by theirs (the row
//! before it gives the lower bound, the row after it the upper bound, a row of the tag itself
//! gives both); a tag before the first row has only an upper bound, a tag after the last row
//! only a lower bound. Rules use a bound soundly: "too old" only when even the upper bound is too
//! old, "too new" only when even the lower bound is.
//!
//! Each row says how it was confirmed ([`Evidence`]): errors rest on [`Evidence::Confirmed`]
//! rows only; rows read on a sibling container of the same month may back informational
//! findings. A test checks that the confirmed and sibling rows never go down and that each names
//! its page.

use super::parse_cuda;
use fuzzfile_model::values::{ImageScheme, ImageUri};
use std::fmt;
use std::sync::OnceLock;

/// How a row of the table was confirmed. `Confirmed < Sibling`: admitting `Sibling` admits both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Evidence {
    /// Read on an NVIDIA page about the PyTorch container of that tag.
    Confirmed,
    /// Read on NVIDIA's release notes of another container of the same monthly release.
    Sibling,
}

/// A CUDA version (major, minor).
pub type Cuda = (u32, u32);
/// An NCCL version (major, minor, patch).
pub type Nccl = (u32, u32, u32);

/// A release tag `YY.MM`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TagDate {
    pub year: u32,
    pub month: u32,
}

impl TagDate {
    /// `24.03` → 2024-03; exactly two digits, a dot, two digits, and a month from 01 to 12.
    pub fn parse(s: &str) -> Option<TagDate> {
        let b = s.as_bytes();
        if b.len() != 5 || b[2] != b'.' || ![0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit()) {
            return None;
        }
        let year = s.get(..2)?.parse().ok()?;
        let month = s.get(3..)?.parse().ok()?;
        (1..=12).contains(&month).then_some(TagDate { year, month })
    }
}

impl fmt::Display for TagDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}.{:02}", self.year, self.month)
    }
}

/// A loaded row of the table (`confirmed` and `sibling` rows; `unverified` ones are skipped).
#[derive(Clone, Debug, PartialEq)]
pub struct NgcRow {
    pub tag: TagDate,
    pub cuda: Option<Cuda>,
    pub nccl: Option<Nccl>,
    pub evidence: Evidence,
    /// The page the versions were read on.
    pub source: &'static str,
}

const NGC_PYTORCH_TSV: &str = include_str!("../../data/ngc-pytorch-cuda.tsv");

/// `2.21.5` → (2, 21, 5).
pub fn parse_nccl(s: &str) -> Option<Nccl> {
    let mut parts = s.trim().split('.');
    let v = (
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
    );
    parts.next().is_none().then_some(v)
}

/// The data lines of a table (comments, blank lines and the header skipped), split in columns.
fn data_lines(tsv: &'static str) -> impl Iterator<Item = Vec<&'static str>> {
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .skip(1)
        .map(|l| l.split('\t').map(str::trim).collect())
}

/// The rows of `tsv` (columns: tag, cuda, nccl, status, source) that are `confirmed` or
/// `sibling`, in tag order. A version written `unknown` (or unreadable) is `None`.
fn parse_rows(tsv: &'static str) -> Vec<NgcRow> {
    let mut rows: Vec<NgcRow> = data_lines(tsv)
        .filter_map(|c| {
            let evidence = match *c.get(3)? {
                "confirmed" => Evidence::Confirmed,
                "sibling" => Evidence::Sibling,
                _ => return None,
            };
            Some(NgcRow {
                tag: TagDate::parse(c.first()?)?,
                cuda: c.get(1).and_then(|v| parse_cuda(v)),
                nccl: c.get(2).and_then(|v| parse_nccl(v)),
                evidence,
                source: c.get(4).copied().unwrap_or(""),
            })
        })
        .collect();
    rows.sort_by_key(|r| r.tag);
    rows
}

/// The loaded rows of `data/ngc-pytorch-cuda.tsv`, read once per process.
pub fn rows() -> &'static [NgcRow] {
    static ROWS: OnceLock<Vec<NgcRow>> = OnceLock::new();
    ROWS.get_or_init(|| parse_rows(NGC_PYTORCH_TSV))
}

/// One end of a bound: the version, and the tag of the row it was read for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchor<V> {
    pub value: V,
    pub tag: TagDate,
}

/// What the table says of one version of one tag: at least `lower`, at most `upper`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound<V> {
    /// The last row at or before the tag.
    pub lower: Option<Anchor<V>>,
    /// The first row at or after the tag.
    pub upper: Option<Anchor<V>>,
}

impl<V: Copy> Bound<V> {
    /// The version itself, when a row has the tag.
    pub fn exact(&self, tag: TagDate) -> Option<V> {
        self.lower.filter(|a| a.tag == tag).map(|a| a.value)
    }
}

/// The bound that `rows` (in tag order) put on the version `field` of `tag`, from the rows whose
/// evidence is at most `admit` and that know that version.
pub fn bound<V: Copy>(
    rows: &[NgcRow],
    tag: TagDate,
    field: impl Fn(&NgcRow) -> Option<V>,
    admit: Evidence,
) -> Bound<V> {
    let mut b = Bound {
        lower: None,
        upper: None,
    };
    for r in rows.iter().filter(|r| r.evidence <= admit) {
        let Some(value) = field(r) else { continue };
        let a = Anchor { value, tag: r.tag };
        if r.tag <= tag {
            b.lower = Some(a);
        }
        if r.tag >= tag && b.upper.is_none() {
            b.upper = Some(a);
        }
    }
    b
}

/// The CUDA bound of an NGC PyTorch tag.
pub fn cuda_bound(tag: TagDate, admit: Evidence) -> Bound<Cuda> {
    bound(rows(), tag, |r| r.cuda, admit)
}

/// The NCCL bound of an NGC PyTorch tag.
pub fn nccl_bound(tag: TagDate, admit: Evidence) -> Bound<Nccl> {
    bound(rows(), tag, |r| r.nccl, admit)
}

/// The release of an NGC PyTorch image (`docker://nvcr.io/nvidia/pytorch:24.03-py3`), and the
/// `YY.MM` text of its tag. Other images, and tags that do not start with a release, are `None`.
pub fn pytorch_tag(uri: &ImageUri) -> Option<(TagDate, &str)> {
    if uri.scheme != ImageScheme::Docker
        || !uri.reference.starts_with("nvcr.io/")
        || uri.repository() != "nvidia/pytorch"
    {
        return None;
    }
    let tag = uri.tag()?;
    let text = tag.get(..5)?;
    if tag.len() > 5 && !tag[5..].starts_with('-') {
        return None;
    }
    Some((TagDate::parse(text)?, text))
}

/// The first NCCL with Multi-Node NVLink support: `ncclTopoCheckMNNVL` first appears in
/// NVIDIA/nccl tag `v2.20.3-1` (release notes: "Add support for inter-node NVLink
/// communication"); `v2.19.4-1`, the tag before it, has no MNNVL code. An NVIDIA maintainer
/// said the same (NVIDIA/nccl#1159: "MNNVL support in NCCL will first be available in NCCL
/// 2.20.x").
pub const NCCL_FIRST_MNNVL: Nccl = (2, 20, 3);

/// The first NCCL that stops at initialisation on an MNNVL system without an IMEX channel:
/// in NVIDIA/nccl `v2.27.3-1`, `src/mnnvl.cc` returns `ncclSystemError` with "MNNVL
/// (cliqueSize N) is available but not working on this system. Check the IMEX channel
/// configuration (/dev/nvidia-caps-imex-channels)" when FABRIC memory cannot be allocated;
/// in `v2.26.6-1`, the tag before it, the same path returns success and NCCL goes on without
/// MNNVL.
pub const NCCL_MNNVL_NEEDS_IMEX: Nccl = (2, 27, 3);

/// `12.6`.
pub fn cuda_str(v: Cuda) -> String {
    format!("{}.{}", v.0, v.1)
}

/// `2.27.3`.
pub fn nccl_str(v: Nccl) -> String {
    format!("{}.{}.{}", v.0, v.1, v.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> TagDate {
        TagDate::parse(s).unwrap()
    }

    fn row(tag: &str, cuda: Option<Cuda>, nccl: Option<Nccl>, evidence: Evidence) -> NgcRow {
        NgcRow {
            tag: t(tag),
            cuda,
            nccl,
            evidence,
            source: "test",
        }
    }

    /// 20.06 = 11.0, 21.11 = 11.5 (confirmed); 22.05 = 11.7 (sibling); 25.12 = 13.1 (confirmed).
    fn table() -> Vec<NgcRow> {
        vec![
            row("20.06", Some((11, 0)), None, Evidence::Confirmed),
            row(
                "21.11",
                Some((11, 5)),
                Some((2, 11, 4)),
                Evidence::Confirmed,
            ),
            row("22.05", Some((11, 7)), Some((2, 12, 10)), Evidence::Sibling),
            row("25.12", Some((13, 1)), None, Evidence::Confirmed),
        ]
    }

    /// A bound end as (version, tag).
    type End = Option<(Cuda, String)>;

    fn cuda(tag: &str, admit: Evidence) -> (End, End) {
        let b = bound(&table(), t(tag), |r| r.cuda, admit);
        let show = |a: Option<Anchor<Cuda>>| a.map(|a| (a.value, a.tag.to_string()));
        (show(b.lower), show(b.upper))
    }

    #[test]
    fn a_tag_between_two_rows_is_bounded_by_both() {
        assert_eq!(
            cuda("21.03", Evidence::Confirmed),
            (
                Some(((11, 0), "20.06".into())),
                Some(((11, 5), "21.11".into()))
            )
        );
        // Sibling rows are skipped unless admitted.
        assert_eq!(
            cuda("23.04", Evidence::Confirmed),
            (
                Some(((11, 5), "21.11".into())),
                Some(((13, 1), "25.12".into()))
            )
        );
        assert_eq!(
            cuda("23.04", Evidence::Sibling),
            (
                Some(((11, 7), "22.05".into())),
                Some(((13, 1), "25.12".into()))
            )
        );
    }

    #[test]
    fn a_tag_before_the_first_row_has_only_an_upper_bound() {
        assert_eq!(
            cuda("19.12", Evidence::Confirmed),
            (None, Some(((11, 0), "20.06".into())))
        );
    }

    #[test]
    fn a_tag_after_the_last_row_has_only_a_lower_bound() {
        assert_eq!(
            cuda("26.07", Evidence::Sibling),
            (Some(((13, 1), "25.12".into())), None)
        );
    }

    #[test]
    fn a_tag_of_a_row_is_exact() {
        let b = bound(&table(), t("21.11"), |r| r.cuda, Evidence::Confirmed);
        assert_eq!(b.exact(t("21.11")), Some((11, 5)));
        assert_eq!(b.lower, b.upper);
        let between = bound(&table(), t("21.12"), |r| r.cuda, Evidence::Confirmed);
        assert_eq!(between.exact(t("21.12")), None);
    }

    #[test]
    fn rows_that_do_not_know_a_version_do_not_bound_it() {
        // 25.12 knows no NCCL: a tag after 21.11 has no NCCL upper bound from confirmed rows.
        let b = bound(&table(), t("23.01"), |r| r.nccl, Evidence::Confirmed);
        assert_eq!(b.lower.map(|a| a.value), Some((2, 11, 4)));
        assert_eq!(b.upper, None);
    }

    #[test]
    fn tags_are_release_dates() {
        assert_eq!(t("24.03"), TagDate { year: 24, month: 3 });
        assert_eq!(t("24.03").to_string(), "24.03");
        for bad in [
            "24.13", "24.00", "2403", "24.3", "24.031", "ab.cd", "24-03", "4.03x",
        ] {
            assert_eq!(TagDate::parse(bad), None, "{bad}");
        }
        assert!(t("19.12") < t("20.01"));
    }

    #[test]
    fn pytorch_images_are_recognised_by_registry_repository_and_tag() {
        let uri = |s: &str| fuzzfile_model::values::parse_image_uri(s).unwrap();
        let tag = |s: &str| pytorch_tag(&uri(s)).map(|(d, text)| (d.to_string(), text.to_owned()));
        assert_eq!(
            tag("docker://nvcr.io/nvidia/pytorch:24.03-py3"),
            Some(("24.03".into(), "24.03".into()))
        );
        assert_eq!(
            tag("docker://nvcr.io/nvidia/pytorch:24.03"),
            Some(("24.03".into(), "24.03".into()))
        );
        assert_eq!(tag("docker://nvcr.io/nvidia/pytorch:24.031-py3"), None);
        assert_eq!(tag("docker://nvcr.io/nvidia/pytorch:latest"), None);
        assert_eq!(tag("docker://docker.io/nvidia/pytorch:24.03-py3"), None);
        assert_eq!(
            tag("docker://nvcr.io/nvidia/tensorflow:24.03-tf2-py3"),
            None
        );
        assert_eq!(tag("oras://nvcr.io/nvidia/pytorch:24.03-py3"), None);
    }

    #[test]
    fn nccl_versions_have_three_parts() {
        assert_eq!(parse_nccl("2.21.5"), Some((2, 21, 5)));
        assert_eq!(parse_nccl("2.21"), None);
        assert_eq!(parse_nccl("unknown"), None);
        assert_eq!(parse_nccl("2.21.5.1"), None);
    }

    #[test]
    fn every_data_row_has_a_source() {
        for c in data_lines(NGC_PYTORCH_TSV) {
            let line = c.join("\t");
            assert_eq!(c.len(), 5, "{line}: tag, cuda, nccl, status, source");
            assert!(TagDate::parse(c[0]).is_some(), "{line}: tag is not YY.MM");
            assert!(
                matches!(c[3], "confirmed" | "sibling" | "unverified"),
                "{line}: unknown status"
            );
            assert!(!c[4].is_empty(), "{line}: no source");
            if c[3] != "unverified" {
                assert!(
                    c[4].starts_with("https://docs.nvidia.com/"),
                    "{line}: a confirmed or sibling row names NVIDIA's page"
                );
                assert!(
                    parse_cuda(c[1]).is_some() || parse_nccl(c[2]).is_some(),
                    "{line}: gives no version"
                );
            }
            assert!(
                c[1] == "unknown" || parse_cuda(c[1]).is_some(),
                "{line}: cuda"
            );
            assert!(
                c[2] == "unknown" || parse_nccl(c[2]).is_some(),
                "{line}: nccl"
            );
        }
        for c in data_lines(super::super::GPU_PRODUCTS_TSV) {
            assert_eq!(c.len(), 6, "{c:?}");
            assert!(!c[5].is_empty(), "{c:?}: no source");
        }
    }

    #[test]
    fn the_loaded_rows_never_go_down() {
        // The bound rests on this: a later tag has at least the versions of an earlier one.
        let rows = rows();
        assert!(rows.len() >= 20, "{} rows", rows.len());
        assert!(
            rows.windows(2).all(|w| w[0].tag < w[1].tag),
            "tags unique and sorted"
        );
        for admit in [Evidence::Confirmed, Evidence::Sibling] {
            let admitted: Vec<&NgcRow> = rows.iter().filter(|r| r.evidence <= admit).collect();
            let cudas: Vec<Cuda> = admitted.iter().filter_map(|r| r.cuda).collect();
            let ncc: Vec<Nccl> = admitted.iter().filter_map(|r| r.nccl).collect();
            assert!(cudas.windows(2).all(|w| w[0] <= w[1]), "{cudas:?}");
            assert!(ncc.windows(2).all(|w| w[0] <= w[1]), "{ncc:?}");
        }
        // Unverified rows are in the file but not loaded.
        assert!(NGC_PYTORCH_TSV.contains("\tunverified\t"));
        assert!(!rows.iter().any(|r| r.tag == t("22.09")));
        let r2512 = rows.iter().find(|r| r.tag == t("25.12")).unwrap();
        assert_eq!(
            (r2512.cuda, r2512.evidence),
            (Some((13, 1)), Evidence::Confirmed)
        );
    }
}
