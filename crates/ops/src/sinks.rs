//! Where results go: one writer for task files, one for validation reports. Producing results
//! never writes files itself; it hands them to a sink.

use anyhow::Result;
use gtb_core::digest::write_atomic;
use gtb_core::task::Task;
use gtb_validate::report::Report;
use std::path::{Path, PathBuf};

/// Receives the final tasks of a split.
pub trait TaskSink {
    /// Write the tasks in the given order; returns the bytes written (for the manifest digest).
    fn write_tasks(&mut self, tasks: &[Task]) -> Result<Vec<u8>>;
}

/// Receives a validation report.
pub trait ReportSink {
    fn write_report(&mut self, report: &Report) -> Result<()>;
}

/// `test.jsonl` in the release's byte format.
pub struct JsonlFile(pub PathBuf);

/// The release's serialisation of a task list: one Python-style JSON object per line.
pub fn release_bytes(tasks: &[Task]) -> Vec<u8> {
    let mut out = Vec::with_capacity(tasks.len() * 4600);
    for t in tasks {
        gtb_core::pyjson::write_value(&mut out, t).expect("tasks serialise");
        out.push(b'\n');
    }
    out
}

impl TaskSink for JsonlFile {
    fn write_tasks(&mut self, tasks: &[Task]) -> Result<Vec<u8>> {
        let bytes = release_bytes(tasks);
        write_atomic(&self.0, &bytes)?;
        Ok(bytes)
    }
}

/// `report.json` + `report.md` in a folder.
pub struct ReportDir(pub PathBuf);

impl ReportSink for ReportDir {
    fn write_report(&mut self, report: &Report) -> Result<()> {
        write_atomic(
            &self.0.join("report.json"),
            &serde_json::to_vec_pretty(report)?,
        )?;
        write_atomic(&self.0.join("report.md"), report.to_markdown().as_bytes())
    }
}

impl ReportDir {
    pub fn path(&self) -> &Path {
        &self.0
    }
    /// `audit.md`, `audit.json` and `audit.html` of a split.
    pub fn write_audit(&self, audit: &gtb_audit::Audit) -> Result<()> {
        use gtb_audit::Format;
        for f in [Format::Md, Format::Json, Format::Html] {
            write_atomic(&self.0.join(f.file_name()), f.render(audit).as_bytes())?;
        }
        Ok(())
    }
}
