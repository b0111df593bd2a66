//! `make bench`: wall time and peak memory of the pipeline's hot paths, release build.
//! Numbers go in the issue notes; no test asserts timings.
//!
//!     cargo run --release --bin gtb-bench [-- --large]   (--large adds the 100,000-task runs;
//!                                                        --help lists the sections)
//!
//! Sections: prepare+sample, full build (with its witness plans) and all-fresh rebuild (650;
//! 100,000 with --large, without the witness search), audit of the built file, `gtb export
//! --format hf` of the built split (wall, peak memory of its own process, Parquet size against
//! JSONL), witness plans of the built split (`gtb solve`: wall time, proofs and exhausted
//! searches, group utility, per-member utility and fairness by difficulty against the naive
//! baseline, the shares needing compromises or subgroups, the stand-in shares), validation against a
//! 338,000-POI inventory, the LLM generate stage against a loopback server answering in a fixed
//! 200 ms at concurrency 64, and the time to regenerate raw_data/transport.csv from the network
//! (`gtb transport`), and `gtb import osm` of a synthetic 1.2M-element extract (elements/s).
//!
//! Release-format POI files (issue 11), each in a process of its own:
//!
//!     gtb-bench fixture-release --pois 338000 --out FILE [--seed S] [--malformed K]
//!     gtb-bench import-release FILE      (wall time and peak RSS of `gtb import release`)
//!     gtb-bench build-release FILE [--n N]   (`gtb build` over its store: wall, RSS, world)
//!
//! The OpenStreetMap import alone: `gtb-bench osm-import`. The witness search's CPU per task
//! (median and p99 by difficulty) of any task file: `gtb-bench solver-cpu TASKS [--threads N]`.
//! The LLM generate stage alone (650 tasks, concurrency 64, 200 ms server): `gtb-bench llm`.
//! A split's world (issue 28: the tool sandbox of the default split and of 10,000 tasks):
//! `gtb-bench world`. `gtb tools serve` alone (latency and throughput at concurrency 1 and 16
//! over the default split's world): `gtb-bench serve`.

mod cli;
mod export;
mod llm;
mod osm;
mod release;
mod serve;
mod solve;
mod solver_cpu;
mod transport;
mod validate;
mod world;

use gtb_core::config::Config;
use std::time::Instant;

/// Runs one bench section in a scratch folder of its own (`gtb-bench-<name>-<pid>` in the temp
/// folder), removed afterwards whatever the outcome.
fn in_scratch(
    name: &str,
    section: impl FnOnce(&std::path::Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("gtb-bench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let r = section(&dir);
    std::fs::remove_dir_all(&dir).ok();
    r
}

fn peak_rss_mib() -> f64 {
    // VmHWM: the process's peak resident set (Linux)
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// The project's `gtb.toml` for a run of `n` tasks in `dir` (gtb-bench runs from the project
/// root, as `make bench` does).
fn cfg(n: usize, dir: &std::path::Path) -> anyhow::Result<Config> {
    let mut c = Config::from_file(std::path::Path::new("gtb.toml")).map_err(|e| {
        e.context("gtb-bench runs from the project root (as `make bench` does): see --help")
    })?;
    c.run.n = n;
    c.run.out = dir.join("out");
    c.run.work_dir = dir.join("out/.work");
    c.run.reports = dir.join("reports");
    // the 100,000-task runs time the pipeline without the witness search (the solver is
    // timed on its own at 650 tasks: `solve_witnesses`)
    if n > 10_000 {
        c.solve.enabled = false;
    }
    Ok(c)
}

/// What `gtb-bench --help` prints.
const USAGE: &str = "\
usage: gtb-bench [--large]        every section (--large adds the 100,000-task runs)
       gtb-bench SECTION [ARGS]   one section:
         solver-cpu TASKS [--threads N]   the witness search's CPU per task
         cli-100k                         100,000-task build --no-witness, and validate of it
         world | serve | llm | osm-import
         fixture-release --pois N --out FILE [--seed S] [--malformed K]
         import-release FILE
         build-release FILE [--n N]
Run it from the project root (it reads gtb.toml), as `make bench` does.";

fn main() -> std::process::ExitCode {
    // the gtb binary's allocator and its set-up, so that in-process runs measure as `gtb` does
    gtb_alloc::init();
    match run(std::env::args().collect()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gtb-bench: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> anyhow::Result<()> {
    if let [_, flag, split_dir, out] = args.as_slice()
        && flag == export::EXPORT_CHILD
    {
        return export::export_child(split_dir.as_ref(), out.as_ref());
    }
    if let [_, flag, split] = args.as_slice()
        && flag == world::WORLD_CHILD
    {
        return world::world_child(split.as_ref());
    }
    match args.get(1).map(String::as_str) {
        Some("-h" | "--help") => {
            println!("{USAGE}");
            return Ok(());
        }
        Some("fixture-release") => return release::fixture_release(&args[2..]),
        Some("import-release") => return release::import_release(&args[2..]),
        Some("build-release") => return release::build_release(&args[2..]),
        Some("solver-cpu") => return solver_cpu::command(&args[2..]),
        Some("serve") => {
            return in_scratch("serve", |dir| {
                let c = cfg(650, dir)?;
                gtb_build::build(&gtb_build::BuildRequest::new(c.clone()))?;
                serve::bench(&c.run.out)
            });
        }
        Some("world") => return in_scratch("world", world::world_bench),
        Some("llm") => return in_scratch("llm", llm::llm_generate_stage),
        // the 100,000-task `gtb build --no-witness` and `gtb validate` of it (issue 27's two
        // fast figures; --large adds the build with witnesses)
        Some("cli-100k") => return in_scratch("cli", |d| cli::cli_100k(d, false)),
        Some("osm-import") => return in_scratch("osm", osm::osm_import),
        _ => {}
    }
    if let Some(other) = args[1..].iter().find(|a| *a != "--large") {
        anyhow::bail!("unknown argument `{other}`\n{USAGE}");
    }
    all_sections(args.len() > 1)
}

/// `gtb-bench [--large]`: every section, in a scratch folder removed afterwards.
fn all_sections(large: bool) -> anyhow::Result<()> {
    // the configuration is read before any section runs (a wrong folder fails at once)
    cfg(0, &std::env::temp_dir())?;
    let dir = std::env::temp_dir().join(format!("gtb-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    cli::cli_100k(&dir, false)?;
    if large {
        cli::cli_100k(&dir, true)?;
    }
    let sizes: Vec<usize> = if large { vec![650, 100_000] } else { vec![650] };
    for &n in &sizes {
        let c = cfg(n, &dir)?;
        let t = Instant::now();
        let res = gtb_ops::load_resources(&c)?;
        let t_prepare = t.elapsed();
        let t = Instant::now();
        let sampler = gtb_sample::Sampler::new(&c, &res, n)?;
        let sk = sampler.sample();
        let t_sample = t.elapsed();
        println!(
            "prepare+sample n={n}: prepare {:.3}s, sample {:.3}s ({} skeletons), peak RSS {:.0} MiB",
            t_prepare.as_secs_f64(),
            t_sample.as_secs_f64(),
            sk.len(),
            peak_rss_mib()
        );
        drop(sk);
        let t = Instant::now();
        let req = gtb_build::BuildRequest::new(c.clone());
        let s = gtb_build::build(&req)?;
        println!(
            "full build n={n}: {:.3}s wall, {} tasks, peak RSS {:.0} MiB",
            t.elapsed().as_secs_f64(),
            s.splits[0].tasks,
            peak_rss_mib()
        );
        let t = Instant::now();
        let s2 = gtb_build::build(&req)?;
        println!(
            "rebuild (all stages fresh) n={n}: {:.3}s",
            t.elapsed().as_secs_f64()
        );
        anyhow::ensure!(
            s.splits[0].sha256 == s2.splits[0].sha256,
            "the all-fresh rebuild changed the task file's sha256"
        );
        let t = Instant::now();
        let audit =
            gtb_audit::Audit::run(&s.splits[0].path, Some(&gtb_audit::Against::Paper), false)?;
        let t_audit = t.elapsed();
        let t = Instant::now();
        gtb_ops::sinks::ReportDir(dir.join("audit")).write_audit(&audit)?;
        println!(
            "audit n={n}: {:.3}s (+ {:.3}s to render md/json/html), peak RSS {:.0} MiB",
            t_audit.as_secs_f64(),
            t.elapsed().as_secs_f64(),
            peak_rss_mib()
        );
        export::export_split(&c.run.out, &dir.join("export"), n)?;
        if c.solve.enabled {
            solve::solve_witnesses(&c, &s.splits[0].path)?;
        }
        if n == 650 {
            serve::bench(&c.run.out)?;
        }
    }
    validate::validate_at_scale(&dir)?;
    transport::transport_model(&dir)?;
    llm::llm_generate_stage(&dir)?;
    llm::sharded_llm_build(&dir)?;
    osm::osm_import(&dir)?;
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

/// The value after `--flag` in `args`, parsed; `default` when absent.
fn flag<T: std::str::FromStr>(
    args: &[String],
    name: &str,
    default: Option<T>,
) -> anyhow::Result<T> {
    match args.iter().position(|a| a == name) {
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("{name} needs a value")),
        None => default.ok_or_else(|| anyhow::anyhow!("{name} is required")),
    }
}

#[cfg(test)]
mod tests {
    use super::run;

    fn args(a: &[&str]) -> Vec<String> {
        std::iter::once("gtb-bench")
            .chain(a.iter().copied())
            .map(String::from)
            .collect()
    }

    /// `gtb-bench --help` ran the 100,000-task benchmarks, then panicked outside the project
    /// root; an unknown flag ran them too. Neither reads anything now.
    #[test]
    fn unknown_arguments_are_refused_before_any_section_runs() {
        assert!(run(args(&["--help"])).is_ok());
        for bad in [&["--bogus"][..], &["--large", "--larg"], &["solve-cpu"]] {
            let e = run(args(bad)).unwrap_err().to_string();
            let last = bad.last().unwrap();
            assert!(e.contains(&format!("unknown argument `{last}`")), "{e}");
            assert!(e.contains("usage: gtb-bench"), "{e}");
        }
    }
}
