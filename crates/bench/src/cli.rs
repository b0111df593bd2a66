//! Issue 23's figures as a user gets them: `gtb build --n 100000` and `gtb validate` of its
//! file, each a `gtb` process of its own (wall time and the child's peak RSS).
//!
//!     gtb-bench cli-100k     (the build with --no-witness; the full run with --large adds the
//!                             build with witnesses)

use std::time::Instant;

/// Run the gtb binary (beside this one) with `args`: its wall time and its own peak RSS
/// (MiB), from `wait4`'s resource usage of that child.
pub(crate) fn run_gtb(args: &[&str]) -> anyhow::Result<(f64, f64)> {
    let gtb = std::env::current_exe()?.with_file_name("gtb");
    anyhow::ensure!(
        gtb.exists(),
        "{} is missing: run `cargo build --release --bins` first",
        gtb.display()
    );
    let log = std::env::temp_dir().join(format!("gtb-bench-stderr-{}", std::process::id()));
    let t = Instant::now();
    let child = std::process::Command::new(&gtb)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log)?)
        .spawn()?;
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid value; wait4 writes it and the status for this child
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    let wall = t.elapsed().as_secs_f64();
    let ok = pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    std::fs::remove_file(&log).ok();
    anyhow::ensure!(ok, "gtb {args:?} failed: {stderr}");
    Ok((wall, ru.ru_maxrss as f64 / 1024.0))
}

/// Issue 23's figures, as a user gets them: `gtb build --n 100000` (offline, the shipped
/// gtb.toml) and `gtb validate` of its file, as processes of their own. Without `witness`,
/// the build runs with `--no-witness`: the witness search (several ms of CPU per task, timed
/// at 650 tasks by `solve_witnesses` and `solver_cpu`) takes the 100,000-task build from seconds
/// to minutes.
pub fn cli_100k(dir: &std::path::Path, witness: bool) -> anyhow::Result<()> {
    let out = dir.join("cli-100k");
    let out_s = out.display().to_string();
    let mut args = vec!["build", "--n", "100000", "--out", &out_s];
    if !witness {
        args.push("--no-witness");
    }
    let (build, build_rss) = run_gtb(&args)?;
    let file = out.join("test.jsonl").display().to_string();
    let (validate, validate_rss) = run_gtb(&["validate", &file])?;
    let how = if witness { "" } else { " --no-witness" };
    println!(
        "gtb build --n 100000{how}: {build:.2}s wall, peak RSS {build_rss:.0} MiB; gtb validate of it: {validate:.2}s wall, peak RSS {validate_rss:.0} MiB"
    );
    std::fs::remove_dir_all(&out).ok();
    Ok(())
}
