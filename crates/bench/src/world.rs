//! Issue 28: writing a split's world (`sandbox_cache/` for the ten tools and
//! `poi2category/`), timed in a process of its own so that its peak memory is the world's
//! alone: `gtb-bench world` builds the default split (650 tasks) and a 10,000-task split, then
//! rewrites each one's world in a child process and reports its wall time, peak RSS, entries
//! and bytes per file.

use std::path::Path;
use std::time::Instant;

/// The hidden argument of the child that writes one world.
pub const WORLD_CHILD: &str = "--world-child";

/// In the child: load the split's resources, write its world, print the figures.
pub fn world_child(split: &Path) -> anyhow::Result<()> {
    let tasks = gtb_world::task_file(split)?;
    let cfg = crate::cfg(0, split)?;
    let res = gtb_ops::load_resources(&cfg)?;
    let t = Instant::now();
    let section = gtb_ops::world::publish_world(&tasks, &res)?;
    let wall = t.elapsed().as_secs_f64();
    let files = section["files"].as_object().cloned().unwrap_or_default();
    let total: u64 = files.values().filter_map(|f| f["bytes"].as_u64()).sum();
    println!(
        "  world write: {wall:.2}s wall, peak RSS {:.0} MiB, {:.1} MB on disk, longest answer {} chars",
        crate::peak_rss_mib(),
        total as f64 / 1e6,
        section["longest_answer_chars"]
    );
    for (f, fig) in &files {
        println!(
            "    {f}: {} entries, {:.2} MB",
            fig["entries"],
            fig["bytes"].as_u64().unwrap_or(0) as f64 / 1e6
        );
    }
    Ok(())
}

/// Build each size (witnesses on), then time its world in a child process.
pub fn world_bench(dir: &Path) -> anyhow::Result<()> {
    for n in [650, 10_000] {
        let c = crate::cfg(n, &dir.join(format!("world-{n}")))?;
        let t = Instant::now();
        let s = gtb_build::build(&gtb_build::BuildRequest::new(c.clone()))?;
        println!(
            "world n={n}: the build (with its world) took {:.2}s",
            t.elapsed().as_secs_f64()
        );
        let split = s.splits[0]
            .path
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let me = std::env::current_exe()?;
        let out = std::process::Command::new(me)
            .arg(WORLD_CHILD)
            .arg(&split)
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "world child: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        print!("{}", String::from_utf8_lossy(&out.stdout));
    }
    Ok(())
}
