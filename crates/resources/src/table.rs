//! Reading raw CSV tables with errors that name the file, line and field.

use std::fmt;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A precise complaint about raw input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub file: PathBuf,
    pub line: u64,
    pub field: String,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // line 0: the problem is the file as a whole (unreadable, no header)
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        if !self.field.is_empty() {
            write!(f, ": field '{}'", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

/// One CSV row with its origin.
pub struct Row<'a> {
    file: &'a Path,
    line: u64,
    headers: &'a csv::StringRecord,
    record: csv::StringRecord,
}

impl<'a> Row<'a> {
    pub fn line(&self) -> u64 {
        self.line
    }

    pub fn err(&self, field: &str, message: impl Into<String>) -> InputError {
        InputError {
            file: self.file.to_path_buf(),
            line: self.line,
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// Whether the header has this column (for optional columns).
    pub fn has(&self, field: &str) -> bool {
        self.headers.iter().any(|h| h == field)
    }

    /// The raw text of a column (trimmed).
    pub fn str(&self, field: &str) -> Result<&str, InputError> {
        let idx = self
            .headers
            .iter()
            .position(|h| h == field)
            .ok_or_else(|| self.err(field, "column missing from the header"))?;
        Ok(self.record.get(idx).map(str::trim).unwrap_or(""))
    }

    /// The raw text of a column the table may lack (None when the header has no such column).
    pub fn optional(&self, field: &str) -> Option<&str> {
        let idx = self.headers.iter().position(|h| h == field)?;
        Some(self.record.get(idx).map(str::trim).unwrap_or(""))
    }

    /// A non-empty text column.
    pub fn text(&self, field: &str) -> Result<String, InputError> {
        let s = self.str(field)?;
        if s.is_empty() {
            return Err(self.err(field, "empty"));
        }
        Ok(s.to_string())
    }

    /// A parsed column.
    pub fn parse<T: FromStr>(&self, field: &str) -> Result<T, InputError>
    where
        T::Err: fmt::Display,
    {
        let s = self.str(field)?;
        s.parse::<T>()
            .map_err(|e| self.err(field, parse_problem::<T>(s, &e.to_string())))
    }

    /// A parsed column within a range (NaN and infinities are never within one).
    pub fn number_in<T>(&self, field: &str, range: RangeInclusive<T>) -> Result<T, InputError>
    where
        T: FromStr + PartialOrd + fmt::Display,
        T::Err: fmt::Display,
    {
        let v: T = self.parse(field)?;
        if !range.contains(&v) {
            return Err(self.err(
                field,
                format!(
                    "must be within {}..={}, got {v}",
                    range.start(),
                    range.end()
                ),
            ));
        }
        Ok(v)
    }

    /// A `|`-separated list column (empty text = empty list).
    pub fn list(&self, field: &str) -> Result<Vec<String>, InputError> {
        let s = self.str(field)?;
        Ok(if s.is_empty() {
            Vec::new()
        } else {
            s.split('|').map(|x| x.trim().to_string()).collect()
        })
    }
}

/// Why `s` is not a `T`, in words (not the parser's "invalid digit found in string").
fn parse_problem<T>(s: &str, err: &str) -> String {
    let ty = std::any::type_name::<T>();
    let unsigned = ["u8", "u16", "u32", "u64", "usize"].contains(&ty);
    let integer = unsigned || ["i8", "i16", "i32", "i64", "isize"].contains(&ty);
    if s.is_empty() {
        "empty".into()
    } else if unsigned && s.starts_with('-') && s[1..].bytes().all(|b| b.is_ascii_digit()) {
        format!("{s} is negative: a whole number of 0 or more is expected")
    } else if integer && s.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        format!("{s} is too large")
    } else if integer {
        format!("{s:?} is not a whole number")
    } else if ty == "f64" || ty == "f32" {
        format!("{s:?} is not a number")
    } else {
        format!("cannot parse {s:?}: {err}")
    }
}

/// A file without a single data row (empty, or a header alone).
pub fn no_rows(file: &Path, what: &str) -> InputError {
    InputError {
        file: file.to_path_buf(),
        line: 0,
        field: String::new(),
        message: format!("no data rows (an empty file or a header alone): {what}"),
    }
}

/// Read every row of a CSV file, handing each to `f`. Rows with the wrong number of fields,
/// invalid UTF-8 or a missing header are reported with their line.
pub fn read_csv<T>(
    file: &Path,
    mut f: impl FnMut(&Row) -> Result<T, InputError>,
) -> Result<Vec<T>, InputError> {
    let io_err = |m: String| InputError {
        file: file.to_path_buf(),
        line: 0,
        field: String::new(),
        message: m,
    };
    let bytes = super::input::read(file).map_err(|e| io_err(format!("cannot read: {e}")))?;
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(&bytes[..]);
    let headers = rdr
        .headers()
        .map_err(|e| io_err(format!("bad header: {e}")))?
        .clone();
    let mut out = Vec::new();
    for rec in rdr.records() {
        let record = rec.map_err(|e| {
            let line = e.position().map(|p| p.line()).unwrap_or(0);
            let message = match e.kind() {
                csv::ErrorKind::UnequalLengths {
                    expected_len, len, ..
                } => {
                    format!("expected {expected_len} fields, found {len}")
                }
                csv::ErrorKind::Utf8 { .. } => "invalid UTF-8".to_string(),
                _ => e.to_string(),
            };
            InputError {
                file: file.to_path_buf(),
                line,
                field: String::new(),
                message,
            }
        })?;
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        let row = Row {
            file,
            line,
            headers: &headers,
            record,
        };
        out.push(f(&row)?);
    }
    Ok(out)
}

/// The `*.csv` files of a directory, sorted by name (a stable order for every platform).
pub fn csv_files(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    super::input::csv_files(dir).map_err(|e| InputError {
        file: dir.to_path_buf(),
        line: 0,
        field: String::new(),
        message: format!("cannot list directory: {e}"),
    })
}
