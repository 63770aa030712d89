//! The examples and the cluster profiles they are planned with (examples/clusters/README.md).
#![allow(dead_code)]

use fuzzfile_check::profile::parse_profile;
use fuzzfile_check::{analyze_bytes_with, Options};
use fuzzfile_plan::{lower, Plan, PlanOptions, Refusal};
use std::path::{Path, PathBuf};

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// An example, with its profile when examples/clusters/README.md lists one.
pub struct Case {
    /// `pipeline`, or `nccl-torchrun-1n@h100-ib` for a plan under a profile.
    pub name: String,
    pub file: PathBuf,
    pub profile: Option<PathBuf>,
}

/// `(example, profile)` rows of examples/clusters/README.md.
pub fn profile_table() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(examples().join("clusters/README.md"))
        .expect("read examples/clusters/README.md");
    readme
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(|c| c.trim().trim_matches('`')).collect();
            match cells.as_slice() {
                ["", example, profile, ""]
                    if example.ends_with(".fz") && profile.ends_with(".toml") =>
                {
                    Some((
                        example.trim_start_matches("../").to_owned(),
                        (*profile).to_owned(),
                    ))
                }
                _ => None,
            }
        })
        .collect()
}

/// Every example without a profile, and each listed example under its profile; sorted.
pub fn cases() -> Vec<Case> {
    let table = profile_table();
    assert!(
        table.len() >= 4,
        "examples/clusters/README.md lists {table:?}"
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(examples())
        .expect("read examples/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fz"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let file_name = f
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let stem = file_name.trim_end_matches(".fz").to_owned();
        out.push(Case {
            name: stem.clone(),
            file: f.clone(),
            profile: None,
        });
        for (example, profile) in &table {
            if *example == file_name {
                out.push(Case {
                    name: format!("{stem}@{}", profile.trim_end_matches(".toml")),
                    file: f.clone(),
                    profile: Some(examples().join("clusters").join(profile)),
                });
            }
        }
    }
    out
}

pub fn plan_with(case: &Case, hosts: Option<Vec<String>>) -> Result<Plan, Refusal> {
    let profile = case.profile.as_ref().map(|p| {
        parse_profile(&std::fs::read_to_string(p).expect("read the profile")).expect("a profile")
    });
    let options = Options {
        profile: profile.clone(),
        ..Default::default()
    };
    let a = analyze_bytes_with(&std::fs::read(&case.file).expect("read"), &options);
    lower(
        &a,
        &PlanOptions {
            source: case
                .file
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned(),
            hosts,
            profile,
        },
    )
}

pub fn plan(case: &Case) -> Result<Plan, Refusal> {
    plan_with(case, None)
}

/// A writer that takes `room` bytes and then fails (a full disk).
pub struct Full {
    pub room: usize,
}

impl std::io::Write for Full {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "full"));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
