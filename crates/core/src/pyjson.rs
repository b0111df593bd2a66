//! Serialisation byte-compatible with Python's `json.dumps(obj, ensure_ascii=False)`:
//! separators ", " and ": ", no indentation, non-ASCII written raw.

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io;

/// A serde_json formatter with Python's default separators.
pub struct PyFormatter;

impl Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// Append one value as a Python-style JSON line (without the newline).
pub fn write_value<W: io::Write, T: Serialize + ?Sized>(
    out: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, PyFormatter);
    value.serialize(&mut ser)
}

/// One value as a Python-style JSON string.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    String::from_utf8(to_vec(value)).expect("serde_json writes UTF-8")
}

/// One value as Python-style JSON bytes (for writing: no second UTF-8 check of the text).
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    to_vec_sized(value, 256)
}

/// [`to_vec`] into a buffer of `capacity` bytes to begin with: a task line is about 5 KB, which
/// grown from 256 bytes is copied five times.
pub fn to_vec_sized<T: Serialize + ?Sized>(value: &T, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    write_value(&mut out, value).expect("serialising in-memory values cannot fail");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_python_separators_and_floats() {
        let v = json!({"a": [1, 2.5, "长沙市"], "b": {"c": true, "d": 1.0}, "e": "say \"hi\"\n"});
        assert_eq!(
            to_string(&v),
            r#"{"a": [1, 2.5, "长沙市"], "b": {"c": true, "d": 1.0}, "e": "say \"hi\"\n"}"#
        );
    }
}
