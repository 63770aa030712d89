//! Application templates on the command line: which files are templates (by name:
//! `template.yaml`, `*.template.yaml`; `fuzzfile_check::template::is_template_name`), the
//! values file beside each (`<name>.values.yaml` for `<name>.template.yaml`, else
//! `values.yaml`), and the check of one template with `--values` and `--set`. Each file is
//! read once, through `fuzzfile_io`.

use crate::{discover, settings::FileSettings, Body, Checked};
use fuzzfile_check::template::{self, Source, TemplateInput};
use std::path::Path;
use std::sync::Arc;

/// The overrides of every template of a run.
pub struct Args {
    pub override_files: Vec<Source>,
    pub set: Vec<String>,
    /// `--all-branches`: every choice of the values with choices.
    pub all_branches: bool,
}

/// Whether `path` is checked as an application template.
pub fn is_template(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(template::is_template_name)
}

/// Whether `path` is a values file by its name (`values.yaml`, `*.values.yaml`): named on
/// the command line, it is checked as one.
pub fn is_values(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(template::is_values_name)
}

/// A values file named on the command line: its own findings (`values-file-error`). It is
/// read from `path` (`-`: standard input) and known as `name` (crate::stdin).
pub fn check_values(
    path: &Path,
    name: &Path,
    settings: &Arc<FileSettings>,
) -> Result<Vec<Checked>, String> {
    let text = fuzzfile_io::read_to_string(path, fuzzfile_io::Kind::FUZZFILE)
        .map_err(|e| e.to_string())?;
    let display = discover::display(name);
    let f = template::check_values_file(
        Source {
            display: display.clone(),
            text,
        },
        &settings.options,
    );
    Ok(vec![Checked {
        path: path.to_path_buf(),
        display,
        body: Body::Values(f),
        settings: Arc::clone(settings),
        companion: false,
    }])
}

/// Read the template and its values file; check it. The template's entry, then its values
/// file's and the `--values` files' when they have findings. The template is read from
/// `path` (`-`: standard input) and known as `name`: its values file is looked for beside
/// `name` (crate::stdin).
pub fn check(
    path: &Path,
    name: &Path,
    settings: &Arc<FileSettings>,
    args: &Args,
) -> Result<Vec<Checked>, String> {
    let text = fuzzfile_io::read_to_string(path, fuzzfile_io::Kind::FUZZFILE)
        .map_err(|e| e.to_string())?;
    let candidates = template::values_file_paths(name);
    let mut values = None;
    let mut values_path = None;
    for p in &candidates {
        if p.is_file() {
            let text = fuzzfile_io::read_to_string(p, fuzzfile_io::Kind::FUZZFILE)
                .map_err(|e| e.to_string())?;
            values = Some(Source {
                display: discover::display(p),
                text,
            });
            values_path = Some(p.clone());
            break;
        }
    }
    let input = TemplateInput {
        template: Source {
            display: discover::display(name),
            text,
        },
        values,
        looked_for: candidates.iter().map(|p| discover::display(p)).collect(),
        override_files: args.override_files.clone(),
        set: args.set.clone(),
    };
    let mut t = if args.all_branches {
        template::check_branches(input, &settings.options)
    } else {
        template::check(input, &settings.options)
    };
    let mut out = Vec::new();
    let findings = std::mem::take(&mut t.values_findings);
    out.push(Checked {
        path: path.to_path_buf(),
        display: discover::display(name),
        body: Body::Template(Box::new(t)),
        settings: Arc::clone(settings),
        companion: false,
    });
    for f in findings {
        let p = values_path
            .as_ref()
            .filter(|p| discover::display(p) == f.display)
            .cloned()
            .unwrap_or_else(|| f.display.clone().into());
        out.push(Checked {
            path: p,
            display: f.display.clone(),
            body: Body::Values(f),
            settings: Arc::clone(settings),
            companion: true,
        });
    }
    Ok(out)
}
