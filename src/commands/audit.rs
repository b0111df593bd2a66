//! `gtb audit`: conflict statistics, distribution fidelity and diversity of a task file.

use anyhow::Result;
use gtb_audit::Format;
use gtb_ops::audit::AuditOptions;

pub fn run(opts: &AuditOptions) -> Result<()> {
    let o = gtb_ops::audit::audit(opts)?;
    match &o.written {
        // Markdown is always shown; the other formats are shown only when not written
        Some(p) if opts.format != Format::Md => println!("audit -> {}", p.display()),
        Some(p) => {
            print!("{}", o.text);
            eprintln!("audit -> {}", p.display());
        }
        None => print!("{}", o.text),
    }
    Ok(())
}
