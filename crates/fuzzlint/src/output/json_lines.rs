//! One JSON object per finding, one per line (JSON Lines): the objects of the `json` format's
//! `diagnostics`, for `jq -c`, log shippers and streaming readers. No findings: no output.

use crate::Checked;
use std::io::{self, Write};

pub fn write(out: &mut dyn Write, checked: &[Checked]) -> io::Result<()> {
    let mut w = io::BufWriter::new(out);
    for c in checked {
        for d in c.diagnostics() {
            super::write_json_compact(&mut w, &super::json::diagnostic_json(&c.display, c, d))?;
            w.write_all(b"\n")?;
        }
    }
    w.flush()
}
