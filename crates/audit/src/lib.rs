//! `gtb audit`: statistics of any GroupTravelBench-style task file, optionally side by side
//! with another file or with the paper's published figures.
//!
//! * [`load`] reads the JSONL in parallel into a mergeable [`report::Tally`]; malformed lines
//!   are `FILE:LINE: message` errors (or skipped and counted);
//! * [`report::Report`] is computed once and holds everything measured;
//! * [`compare`] reduces two sources to [`compare::Profile`]s and measures their distance
//!   (total variation, chi-square test of homogeneity); [`paper`] holds the paper's figures;
//! * [`render::Format`] turns an [`Audit`] into Markdown, JSON or a self-contained HTML page
//!   with inline SVG charts.
//!
//! Group-bys are plain `BTreeMap`s/`HashMap`s: Polars (default features off, `lazy`) added
//! about 15 minutes of clean release build time on the 2-core machine, against about 2.5
//! minutes for the whole crate without it, while a 100 000-task file audits in well under the
//! 5 s budget without it.

pub mod compare;
pub mod load;
pub mod paper;
pub mod render;
pub mod report;
pub mod stats;

pub use compare::{Comparison, Profile};
pub use load::audit_file;
pub use render::Format;
pub use report::Report;

use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What to compare with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// the built-in figures of the paper
    Paper,
    /// another task file
    File(PathBuf),
}

impl Against {
    /// `paper` (literally) or a path.
    pub fn parse(s: &str) -> Against {
        if s == "paper" {
            Against::Paper
        } else {
            Against::File(PathBuf::from(s))
        }
    }
}

/// A report and, with `--against`, its comparison with the reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Audit {
    pub report: Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
}

impl Audit {
    pub fn new(report: Report, reference: Option<&Profile>) -> Audit {
        let comparison = reference.map(|r| compare::compare(&report.profile(), r));
        Audit { report, comparison }
    }

    /// Audit `file`, compared with `against` if given. `skip_bad` applies to both files.
    pub fn run(file: &Path, against: Option<&Against>, skip_bad: bool) -> Result<Audit> {
        let report = audit_file(file, skip_bad)?;
        let reference = match against {
            None => None,
            Some(Against::Paper) => Some(paper::profile()),
            Some(Against::File(p)) => Some(audit_file(p, skip_bad)?.profile()),
        };
        Ok(Audit::new(report, reference.as_ref()))
    }
}
