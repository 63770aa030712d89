//! One JSON object per finding, one per line (JSON Lines): the objects of the `json` format's
//! `diagnostics`, for `jq -c`, log shippers and streaming readers. No findings: no output.

use crate::Checked;
use std::io::{self, Write};

/// The lines of one file's findings.
pub fn entry(out: &mut Vec<u8>, c: &Checked) -> io::Result<()> {
    for d in c.diagnostics() {
        super::write_json_compact(out, &super::json::diagnostic_json(&c.display, c, d))?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
