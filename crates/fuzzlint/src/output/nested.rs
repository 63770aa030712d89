//! serde_json's pretty printer starting `depth` levels deep, for a document written a part at
//! a time (an element of an array inside it): the same bytes as the printer writes for the
//! element inside the whole document.

use std::io::{self, Write};

/// Writes the indent of `depth` levels (two spaces each, as `PrettyFormatter::new`).
pub fn indent<W: ?Sized + Write>(out: &mut W, depth: usize) -> io::Result<()> {
    for _ in 0..depth {
        out.write_all(b"  ")?;
    }
    Ok(())
}

/// `serde_json::ser::PrettyFormatter` (two-space indent) whose outermost value is at `depth`.
pub struct NestedPretty {
    depth: usize,
    has_value: bool,
}

impl NestedPretty {
    pub fn at(depth: usize) -> Self {
        NestedPretty {
            depth,
            has_value: false,
        }
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if self.has_value {
            w.write_all(b"\n")?;
            indent(w, self.depth)?;
        }
        w.write_all(bracket)
    }

    fn next<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.depth)
    }
}

impl serde_json::ser::Formatter for NestedPretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.next(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.next(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// An element written on its own is the element as written inside the whole document.
    #[test]
    fn an_element_is_written_as_inside_the_document() {
        let element =
            serde_json::json!({"a": [1, {"b": []}, {}], "c": {"d": "e\u{202e}"}, "f": []});
        let doc = serde_json::json!({"x": [[element.clone(), element.clone()]]});
        let mut whole = Vec::new();
        super::super::write_json_pretty(&mut whole, &doc).expect("write");
        let mut parts = b"{\n  \"x\": [\n    [".to_vec();
        for _ in 0..2 {
            super::super::write_element(&mut parts, &element, 3).expect("write");
        }
        parts.remove(b"{\n  \"x\": [\n    [".len());
        parts.extend_from_slice(b"\n    ]\n  ]\n}");
        assert_eq!(String::from_utf8(parts), String::from_utf8(whole));
    }
}
