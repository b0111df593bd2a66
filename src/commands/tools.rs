//! `gtb tools serve` and `gtb tools fill`: the long tail of a split's world (gtb-tools).

use anyhow::Result;
use gtb_tools::{FillOptions, ServeOptions};

pub fn serve(opts: &ServeOptions, threads: usize) -> Result<()> {
    gtb_tools::serve(opts, threads, |addr| {
        // the first line on stdout: a script reads the port from it
        println!("listening on http://{addr}/v1");
        println!("point the release's harness at it: export TOOL_API_BASE=http://{addr}/v1");
    })
}

pub fn fill(opts: &FillOptions) -> Result<()> {
    let report = gtb_tools::fill(opts)?;
    print!("{report}");
    Ok(())
}
