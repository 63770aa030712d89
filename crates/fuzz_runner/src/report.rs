//! Drawing a run from its events file.
