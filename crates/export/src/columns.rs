//! The export schema: one row per task, one [`ColumnSpec`] per column. The same list builds the
//! Parquet frames, the schema table of the dataset card and the one in docs/EXPORT.md (a test
//! checks that the doc lists every column), so the three cannot drift apart.
//!
//! Scalars and lists of strings are kept as typed columns; the deeper objects (`user_preferences`,
//! `initial_messages`, `child_members`) are JSON strings in the release's serialisation; and
//! `task_json` holds the task's original line byte for byte, so nothing is lost whatever a
//! reader makes of the other columns.

use gtb_core::task::Task;
use polars::prelude::*;
use rayon::prelude::*;

/// A task as read from its file: the parsed value and the line it came from.
pub struct Row {
    pub task: Task,
    /// the line without its terminator
    pub line: String,
}

/// How a column's values are taken from a task.
#[derive(Clone, Copy)]
pub enum Values {
    Str(fn(&Task) -> &str),
    StrList(fn(&Task) -> Vec<&str>),
    BoolList(fn(&Task) -> Vec<bool>),
    /// a count; null when the task does not define it (e.g. an unknown day phrase)
    U32(fn(&Task) -> Option<u32>),
    F64(fn(&Task) -> f64),
    /// a nested value written as JSON (Python `json.dumps(ensure_ascii=False)` style)
    Json(fn(&Task) -> String),
    /// the original line
    Line,
}

impl Values {
    /// The column's type as the card and the docs name it (Arrow / Hugging Face terms).
    pub fn type_name(self) -> &'static str {
        match self {
            Values::Str(_) | Values::Line | Values::Json(_) => "string",
            Values::StrList(_) => "list<string>",
            Values::BoolList(_) => "list<bool>",
            Values::U32(_) => "uint32",
            Values::F64(_) => "float64",
        }
    }
}

pub struct ColumnSpec {
    pub name: &'static str,
    pub values: Values,
    pub doc: &'static str,
}

fn json<T: serde::Serialize>(v: &T) -> String {
    gtb_core::pyjson::to_string(v)
}

/// Every column, in file order.
pub const COLUMNS: &[ColumnSpec] = &[
    ColumnSpec {
        name: "task_id",
        values: Values::Str(|t| &t.task_id),
        doc: "`task_` and six digits (`task_004329`), unique in the split",
    },
    ColumnSpec {
        name: "query",
        values: Values::Str(|t| &t.query),
        doc: "the one-line request (cities, duration, group size)",
    },
    ColumnSpec {
        name: "time",
        values: Values::Str(|t| &t.time),
        doc: "departure date, `YYYY-MM-DD`",
    },
    ColumnSpec {
        name: "context",
        values: Values::Str(|t| &t.context),
        doc: "departure city, date, group type (and accompanying child)",
    },
    ColumnSpec {
        name: "departure_city",
        values: Values::Str(|t| &t.metadata.departure_city),
        doc: "`metadata.departure_city`",
    },
    ColumnSpec {
        name: "cities",
        values: Values::StrList(|t| t.metadata.cities.iter().map(String::as_str).collect()),
        doc: "`metadata.cities`: the 1–3 destinations in visiting order",
    },
    ColumnSpec {
        name: "date",
        values: Values::Str(|t| &t.metadata.date),
        doc: "`metadata.date`: the duration phrase (两天一夜 … 七天六夜)",
    },
    ColumnSpec {
        name: "days",
        values: Values::U32(|t| t.days()),
        doc: "days of the trip, derived from `date` (null for an unknown phrase)",
    },
    ColumnSpec {
        name: "group_id",
        values: Values::Str(|t| &t.metadata.group_id),
        doc: "`metadata.group_id`: archetype, `<size>-<index>`",
    },
    ColumnSpec {
        name: "group_name",
        values: Values::Str(|t| &t.metadata.group_name),
        doc: "`metadata.group_name`",
    },
    ColumnSpec {
        name: "group_tags",
        values: Values::StrList(|t| t.metadata.group_tags.iter().map(String::as_str).collect()),
        doc: "`metadata.group_tags`",
    },
    ColumnSpec {
        name: "compromise_pattern",
        values: Values::StrList(|t| {
            t.metadata
                .compromise_pattern
                .iter()
                .map(String::as_str)
                .collect()
        }),
        doc: "`metadata.compromise_pattern`: the users who may compromise, in the file's order",
    },
    ColumnSpec {
        name: "child_members",
        values: Values::Json(|t| json(&t.metadata.child_members)),
        doc: "JSON of `metadata.child_members`: `[{\"user\", \"role\"}]` of children without a table",
    },
    ColumnSpec {
        name: "group_size",
        values: Values::U32(|t| u32::try_from(t.group_size()).ok()),
        doc: "N: users with a table plus skipped children",
    },
    ColumnSpec {
        name: "users",
        values: Values::StrList(|t| t.user_preferences.keys().map(String::as_str).collect()),
        doc: "keys of `user_preferences` in the file's order (the conversation's polling order)",
    },
    ColumnSpec {
        name: "roles",
        values: Values::StrList(|t| {
            t.user_preferences
                .values()
                .map(|u| u.role.as_str())
                .collect()
        }),
        doc: "each user's persona, parallel to `users`",
    },
    ColumnSpec {
        name: "compromisable",
        values: Values::BoolList(|t| {
            t.user_preferences
                .values()
                .map(|u| u.compromisable)
                .collect()
        }),
        doc: "each user's `compromisable`, parallel to `users`",
    },
    ColumnSpec {
        name: "user_preferences",
        values: Values::Json(|t| json(&t.user_preferences)),
        doc: "JSON of the whole preference tables, keyed by user, in the release's key order",
    },
    ColumnSpec {
        name: "initial_messages",
        values: Values::Json(|t| json(&t.initial_messages)),
        doc: "JSON of the opening messages, `[{\"role\": \"UserK\", \"content\"}]`",
    },
    ColumnSpec {
        name: "difficulty_score",
        values: Values::F64(|t| t.difficulty_score),
        doc: "the release's difficulty score",
    },
    ColumnSpec {
        name: "difficulty_type",
        values: Values::Str(|t| &t.difficulty_type),
        doc: "easy, medium or hard",
    },
    ColumnSpec {
        name: "task_json",
        values: Values::Line,
        doc: "the task's original JSONL line, byte for byte: `json.loads` gives the task back",
    },
];

fn string_column(name: &str, values: impl Iterator<Item = impl AsRef<str>>) -> Column {
    StringChunked::from_iter_values(name.into(), values).into_column()
}

/// One column of a chunk of rows.
fn column(spec: &ColumnSpec, rows: &[Row]) -> Column {
    let name: PlSmallStr = spec.name.into();
    match spec.values {
        Values::Str(f) => string_column(spec.name, rows.iter().map(|r| f(&r.task))),
        Values::Line => string_column(spec.name, rows.iter().map(|r| r.line.as_str())),
        Values::Json(f) => {
            let texts: Vec<String> = rows.par_iter().map(|r| f(&r.task)).collect();
            string_column(spec.name, texts.iter())
        }
        Values::StrList(f) => {
            let mut b = ListStringChunkedBuilder::new(name, rows.len(), rows.len() * 3);
            for r in rows {
                b.append_values_iter(f(&r.task).into_iter());
            }
            b.finish().into_column()
        }
        Values::BoolList(f) => {
            let mut b = ListBooleanChunkedBuilder::new(name, rows.len(), rows.len() * 4);
            for r in rows {
                b.append_iter(f(&r.task).into_iter().map(Some));
            }
            b.finish().into_column()
        }
        Values::U32(f) => {
            UInt32Chunked::from_iter_options(name, rows.iter().map(|r| f(&r.task))).into_column()
        }
        Values::F64(f) => {
            Float64Chunked::from_iter_values(name, rows.iter().map(|r| f(&r.task))).into_column()
        }
    }
}

/// The rows as one frame in [`COLUMNS`] order; columns are built in parallel.
pub fn frame(rows: &[Row]) -> PolarsResult<DataFrame> {
    let columns: Vec<Column> = COLUMNS.par_iter().map(|c| column(c, rows)).collect();
    DataFrame::new(rows.len(), columns)
}

/// The frame's schema (for a writer that must exist before the first rows).
pub fn schema() -> PolarsResult<Schema> {
    Ok(frame(&[])?.schema().as_ref().clone())
}
