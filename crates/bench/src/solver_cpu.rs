//! The witness search's CPU per task (issue 27): each task solved on one thread, timed with
//! the thread's CPU clock (not wall time, so that other load on the machine counts little),
//! with the median and the 99th percentile by difficulty.
//!
//!     gtb-bench solver-cpu TASKS [--threads N]   (a task file; ./gtb.toml's resources when present)

use gtb_core::task::Task;
use rayon::prelude::*;

/// CPU seconds the calling thread has used.
fn thread_cpu() -> f64 {
    // SAFETY: a zeroed timespec is valid; clock_gettime writes it
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The `q`-quantile (nearest rank) of sorted values.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Solve every task once, timing each on its thread's CPU clock; print the median and p99 in
/// milliseconds by difficulty (easy, medium, hard, all).
pub fn report(solver: &gtb_solve::Solver, tasks: &[Task]) {
    let cpu: Vec<f64> = tasks
        .par_iter()
        .map(|t| {
            let t0 = thread_cpu();
            let _ = solver.solve(t);
            (thread_cpu() - t0) * 1e3
        })
        .collect();
    for k in ["easy", "medium", "hard", "all"] {
        let mut ms: Vec<f64> = tasks
            .iter()
            .zip(&cpu)
            .filter(|(t, _)| k == "all" || t.difficulty_type == k)
            .map(|(_, &c)| c)
            .collect();
        if ms.is_empty() {
            continue;
        }
        ms.sort_by(f64::total_cmp);
        println!(
            "  solver CPU per task, {k:<6} {:>6} tasks: median {:.2} ms, p99 {:.2} ms, mean {:.2} ms",
            ms.len(),
            quantile(&ms, 0.5),
            quantile(&ms, 0.99),
            ms.iter().sum::<f64>() / ms.len() as f64
        );
    }
}

/// `gtb-bench solver-cpu TASKS [--threads N]`.
pub fn command(args: &[String]) -> anyhow::Result<()> {
    let file = args
        .first()
        .ok_or_else(|| anyhow::anyhow!("usage: gtb-bench solver-cpu TASKS [--threads N]"))?;
    let threads: usize = crate::flag(args, "--threads", Some(1))?;
    // as `gtb` reads it: ./gtb.toml when present, else the built-in defaults
    let toml = std::path::Path::new("gtb.toml");
    let c = match toml.exists() {
        true => gtb_core::config::Config::from_file(toml)?,
        false => gtb_core::config::Config::default(),
    };
    let res = gtb_ops::load_resources(&c)?;
    let db = gtb_score::PoiDb::from_resources(&res);
    let solver = gtb_solve::Solver::new(&res, &db);
    let tasks = gtb_ops::solve::read_tasks(std::path::Path::new(file))?;
    println!("{file}: {} tasks on {threads} threads", tasks.len());
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?
        .install(|| report(&solver, &tasks));
    Ok(())
}
