//! Executing a template (Go's `text/template/exec.go`).

use crate::{ExecError, ExecErrorKind, RenderOptions, Rendered, Template, Value};

pub fn render(
    template: &Template,
    data: &Value,
    options: &RenderOptions,
) -> Result<Rendered, ExecError> {
    let _ = (template, data, options);
    Err(ExecError {
        span: 0..0,
        kind: ExecErrorKind::Limit,
        message: "the template executor is not built yet".into(),
    })
}
