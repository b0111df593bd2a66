//! `make bench`: wall time and peak memory of the pipeline's hot paths, release build.
//! Numbers go in the issue notes; no test asserts timings.
//!
//!     cargo run --release --bin gtb-bench [-- --large]   (--large adds the 100,000-task runs)
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
//!
//! The OpenStreetMap import alone: `gtb-bench osm-import`. The witness search's CPU per task
//! (median and p99 by difficulty) of any task file: `gtb-bench solver-cpu TASKS [--threads N]`.
//! The LLM generate stage alone (650 tasks, concurrency 64, 200 ms server): `gtb-bench llm`.
//! A split's world (issue 28: the tool sandbox of the default split and of 10,000 tasks):
//! `gtb-bench world`. `gtb tools serve` alone (latency and throughput at concurrency 1 and 16
//! over the default split's world): `gtb-bench serve`.

mod serve;
mod solver_cpu;
mod world;

// the gtb binary's allocator, so that in-process runs measure as `gtb` does
use gtb_alloc as _;

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

/// Run the gtb binary (beside this one) with `args`: its wall time and its own peak RSS
/// (MiB), from `wait4`'s resource usage of that child.
fn run_gtb(args: &[&str]) -> anyhow::Result<(f64, f64)> {
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
fn cli_100k(dir: &std::path::Path, witness: bool) -> anyhow::Result<()> {
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

fn cfg(n: usize, dir: &std::path::Path) -> Config {
    let mut c =
        Config::from_file(std::path::Path::new("gtb.toml")).expect("run from the project root");
    c.run.n = n;
    c.run.out = dir.join("out");
    c.run.work_dir = dir.join("out/.work");
    c.run.reports = dir.join("reports");
    // the 100,000-task runs time the pipeline without the witness search (the solver is
    // timed on its own at 650 tasks: `solve_witnesses`)
    if n > 10_000 {
        c.solve.enabled = false;
    }
    c
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, split_dir, out] = args.as_slice()
        && flag == EXPORT_CHILD
    {
        return export_child(split_dir.as_ref(), out.as_ref());
    }
    if let [_, flag, split] = args.as_slice()
        && flag == world::WORLD_CHILD
    {
        return world::world_child(split.as_ref());
    }
    match args.get(1).map(String::as_str) {
        Some("fixture-release") => return fixture_release(&args[2..]),
        Some("import-release") => return import_release(&args[2..]),
        Some("solver-cpu") => return solver_cpu::command(&args[2..]),
        Some("serve") => {
            return in_scratch("serve", |dir| {
                let c = cfg(650, dir);
                gtb_build::build(&gtb_build::BuildRequest::new(c.clone()))?;
                serve::bench(&c.run.out)
            });
        }
        Some("world") => return in_scratch("world", world::world_bench),
        Some("llm") => return in_scratch("llm", llm_generate_stage),
        // the 100,000-task `gtb build --no-witness` and `gtb validate` of it (issue 27's two
        // fast figures; --large adds the build with witnesses)
        Some("cli-100k") => return in_scratch("cli", |d| cli_100k(d, false)),
        Some("osm-import") => return in_scratch("osm", osm_import),
        _ => {}
    }
    let large = std::env::args().any(|a| a == "--large");
    let dir = std::env::temp_dir().join(format!("gtb-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    cli_100k(&dir, false)?;
    if large {
        cli_100k(&dir, true)?;
    }
    let sizes: Vec<usize> = if large { vec![650, 100_000] } else { vec![650] };
    for &n in &sizes {
        let c = cfg(n, &dir);
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
        assert_eq!(s.splits[0].sha256, s2.splits[0].sha256);
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
        export_split(&c.run.out, &dir.join("export"), n)?;
        if c.solve.enabled {
            solve_witnesses(&c, &s.splits[0].path)?;
        }
        if n == 650 {
            serve::bench(&c.run.out)?;
        }
    }
    validate_at_scale(&dir)?;
    transport_model(&dir)?;
    llm_generate_stage(&dir)?;
    sharded_llm_build(&dir)?;
    osm_import(&dir)?;
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

/// The hidden argument that makes this binary run one export and report on it.
const EXPORT_CHILD: &str = "--export-child";

/// Run in a process of its own, so that its peak memory is the export's alone.
fn export_child(split_dir: &std::path::Path, out: &std::path::Path) -> anyhow::Result<()> {
    use gtb_ops::export::{ExportFormat, ExportOptions, export};
    let t = Instant::now();
    let s = export(&ExportOptions::new(split_dir, ExportFormat::Hf, out))?;
    let parquet: u64 = s.files.iter().map(|f| f.bytes).sum();
    let jsonl: u64 = s.splits.iter().map(|x| x.source_bytes).sum();
    println!(
        "{:.3} {} {parquet} {jsonl} {:.0}",
        t.elapsed().as_secs_f64(),
        s.files.len(),
        peak_rss_mib()
    );
    Ok(())
}

/// `gtb export --format hf` of a built split: wall time, peak RSS, Parquet against JSONL.
fn export_split(
    split_dir: &std::path::Path,
    out: &std::path::Path,
    n: usize,
) -> anyhow::Result<()> {
    let o = std::process::Command::new(std::env::current_exe()?)
        .arg(EXPORT_CHILD)
        .arg(split_dir)
        .arg(out)
        .output()?;
    anyhow::ensure!(
        o.status.success(),
        "export failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let f: Vec<f64> = text
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(f64::NAN))
        .collect();
    anyhow::ensure!(f.len() == 5, "unexpected child output: {text}");
    let mb = |b: f64| b / 1e6;
    println!(
        "export hf n={n}: {:.3}s wall, {} file(s), Parquet {:.1} MB vs JSONL {:.1} MB ({:.1} %), peak RSS {:.0} MiB",
        f[0],
        f[1],
        mb(f[2]),
        mb(f[3]),
        100.0 * f[2] / f[3],
        f[4]
    );
    std::fs::remove_dir_all(out).ok();
    Ok(())
}

/// Validation of 650 tasks against a 338,000-POI inventory: the shipped attractions plus a
/// generated fixture of branch-style variants (in memory only, never written to raw_data).
fn validate_at_scale(dir: &std::path::Path) -> anyhow::Result<()> {
    use gtb_validate::{Mode, Validator, names::NameIndex};
    let c = cfg(650, dir);
    let mut res = gtb_ops::load_resources(&c)?;
    let req = gtb_build::BuildRequest::new(c.clone());
    let s = gtb_build::build(&req)?;
    let tasks: Vec<gtb_core::task::Task> = std::fs::read_to_string(&s.splits[0].path)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let target = 338_000usize;
    let real: usize = res.attractions.iter().map(Vec::len).sum();
    let dests: Vec<usize> = res.destinations().map(|d| d as usize).collect();
    let per_city = (target - real).div_ceil(dests.len());
    for &d in &dests {
        let base: Vec<gtb_resources::Attraction> = res.attractions[d].clone();
        for k in 0..per_city {
            let mut a = base[k % base.len()].clone();
            a.name = format!("{}{}号馆", a.name, k);
            res.attractions[d].push(a);
        }
    }
    let total: usize = res.attractions.iter().map(Vec::len).sum();
    let t = Instant::now();
    let v = Validator::new(&res, &c);
    let t_index = t.elapsed();
    let t = Instant::now();
    let mut problems = 0;
    for task in &tasks {
        let mut task = task.clone();
        problems += v.check_task(&mut task, Mode::Audit).problems.len();
    }
    let t_validate = t.elapsed();
    println!(
        "validate 650 tasks vs {total} POIs: index {:.3}s, checks {:.3}s ({problems} problems)",
        t_index.as_secs_f64(),
        t_validate.as_secs_f64()
    );
    // fuzzy throughput: misspelled names (one character dropped) force the fuzzy path
    let idx = NameIndex::new(&res, c.validate.fuzzy_threshold, c.validate.fuzzy_margin);
    let queries: Vec<(usize, String)> = dests
        .iter()
        .flat_map(|&d| {
            res.attractions[d].iter().take(20).map(move |a| {
                let mut ch: Vec<char> = a.name.chars().collect();
                if ch.len() > 3 {
                    ch.remove(ch.len() / 2);
                }
                (d, ch.into_iter().collect::<String>())
            })
        })
        .collect();
    let t = Instant::now();
    let snapped = queries
        .iter()
        .filter(|(d, q)| matches!(idx.lookup(*d, q), gtb_validate::names::Match::Snapped(..)))
        .count();
    let el = t.elapsed().as_secs_f64();
    println!(
        "fuzzy lookups: {} in {el:.3}s = {:.0}/s against ~{} names per city ({snapped} snapped)",
        queries.len(),
        queries.len() as f64 / el,
        total / dests.len()
    );
    Ok(())
}

/// `gtb transport`: load the network, model every pair and mode, write the CSV (best of 3).
fn transport_model(dir: &std::path::Path) -> anyhow::Result<()> {
    let c = cfg(650, dir);
    let out = dir.join("transport.csv");
    let mut best = f64::INFINITY;
    let mut rows = 0;
    for _ in 0..3 {
        let t = Instant::now();
        rows = gtb_ops::transport(&c, &out)?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    anyhow::ensure!(
        std::fs::read(&out)? == std::fs::read(&c.paths.transport)?,
        "the regenerated transport.csv differs from the shipped one"
    );
    println!("regenerate transport.csv: {best:.3}s ({rows} rows, same bytes as shipped)");
    Ok(())
}

/// The LLM generate stage against a loopback server answering every request in a fixed 200 ms:
/// 650 tasks at concurrency 64; ideal wall = calls x 0.2 s / 64. The server is the
/// `gtb-fake-llm` binary in its own process (as a real server would be), so that its CPU work
/// is not counted as the client's.
fn llm_generate_stage(dir: &std::path::Path) -> anyhow::Result<()> {
    let (mut server, base_url) = fake_llm_server(200)?;
    let mut c = cfg(650, &dir.join("llm"));
    c.run.generator = "openai".into();
    c.llm.base_url = base_url;
    c.llm.model = "fake-model".into();
    c.llm.api_key_env = "GTB_BENCH_NO_KEY".into();
    c.llm.cache_dir = dir.join("llm/cache");
    c.llm.concurrency = 64;
    // the generate stage's throughput: a task without a witness plan would take another
    // round of requests (the witness search is timed on its own: `solve_witnesses`)
    c.solve.enabled = false;
    let t = Instant::now();
    let built = gtb_build::build(&gtb_build::BuildRequest::new(c.clone()));
    let total = t.elapsed().as_secs_f64();
    server.kill().ok();
    server.wait().ok();
    built?;
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(c.run.reports.join("llm_report.json"))?)?;
    let wall = report["generate_wall_seconds"].as_f64().unwrap_or(f64::NAN);
    let calls = report["requests"]["sent"].as_u64().unwrap_or(0);
    let ideal = calls as f64 * 0.2 / 64.0;
    // each of the 64 slots answers ceil(calls / 64) requests in turn at best
    let floor = (calls as f64 / 64.0).ceil() * 0.2;
    println!(
        "llm generate 650 tasks at concurrency 64, 200 ms server: {calls} calls, {wall:.3}s wall, ideal {ideal:.3}s, ratio {:.3} (target <= 1.2; whole rounds alone give {:.3}); whole build {total:.2}s",
        wall / ideal,
        floor / ideal
    );
    Ok(())
}

/// A `gtb-fake-llm` server in its own process answering every request in `latency_ms`; its
/// base URL. The caller kills the child.
fn fake_llm_server(latency_ms: u64) -> anyhow::Result<(std::process::Child, String)> {
    use std::io::BufRead;
    let exe = std::env::current_exe()?.with_file_name("gtb-fake-llm");
    anyhow::ensure!(
        exe.exists(),
        "{} is missing: run `cargo build --release --bins` first",
        exe.display()
    );
    let mut server = std::process::Command::new(&exe)
        .args(["--port", "0", "--latency-ms", &latency_ms.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let mut base_url = String::new();
    std::io::BufReader::new(server.stdout.take().expect("piped")).read_line(&mut base_url)?;
    Ok((server, base_url.trim().to_string()))
}

/// Issue 14 item 2's closing figure: an LLM build of 2,000 tasks in 4 shards (4 `gtb build
/// --shard I/4` processes at once, one shared cache, concurrency 64 each) against a 200 ms
/// server, then `gtb merge`. Ideal: every shard's requests in whole rounds of 64 at 200 ms,
/// the shards side by side. The rest of a shard's wall is CPU work every process does (data,
/// validator index, sampling, checks), shared here by 4 processes on the machine's cores. The
/// unsharded build (concurrency 4 x 64, own cache) is timed too.
/// Start every command at once and wait for all of them; the first failure names its stderr.
fn run_at_once(
    gtb: &std::path::Path,
    commands: impl Iterator<Item = Vec<String>>,
) -> anyhow::Result<()> {
    let children = commands
        .map(|a| {
            std::process::Command::new(gtb)
                .args(&a)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    for c in children {
        let o = c.wait_with_output()?;
        anyhow::ensure!(
            o.status.success(),
            "shard: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    Ok(())
}

/// From the shards' LLM reports: every request sent, the ideal wall time (the busiest shard's
/// requests in whole rounds of `concurrency` at 200 ms), and the slowest shard's generate
/// stage (the part the server's latency bounds).
fn shard_requests(
    dir: &std::path::Path,
    shards: usize,
    concurrency: usize,
) -> anyhow::Result<(u64, f64, f64)> {
    let (mut calls, mut ideal, mut generate_wall) = (0u64, 0f64, 0f64);
    for i in 0..shards {
        let report = dir.join(format!("shard-{i}/validation_reports/llm_report.json"));
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report)?)?;
        let sent = r["requests"]["sent"].as_u64().unwrap_or(0);
        calls += sent;
        generate_wall = generate_wall.max(r["generate_wall_seconds"].as_f64().unwrap_or(f64::NAN));
        ideal = ideal.max((sent as f64 / concurrency as f64).ceil() * 0.2);
    }
    Ok((calls, ideal, generate_wall))
}

fn sharded_llm_build(dir: &std::path::Path) -> anyhow::Result<()> {
    const N: usize = 2000;
    const SHARDS: usize = 4;
    const CONCURRENCY: usize = 64;
    let gtb = std::env::current_exe()?.with_file_name("gtb");
    anyhow::ensure!(
        gtb.exists(),
        "{} is missing: run `cargo build --release --bins` first",
        gtb.display()
    );
    let (mut server, base_url) = fake_llm_server(200)?;
    let dir = dir.join("sharded-llm");
    let args = |cache: &str, concurrency: usize| -> Vec<String> {
        let mut a: Vec<String> = ["--n", &N.to_string(), "--seed", "1", "--llm", "openai"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(["--model", "fake-model", "--api-key-env", "GTB_BENCH_NO_KEY"].map(String::from));
        a.extend(["--base-url".into(), base_url.clone()]);
        a.extend(["--cache-dir".into(), dir.join(cache).display().to_string()]);
        a.extend(["--concurrency".into(), concurrency.to_string()]);
        a
    };
    let run = |a: &[String]| -> anyhow::Result<()> {
        let o = std::process::Command::new(&gtb).args(a).output()?;
        anyhow::ensure!(
            o.status.success(),
            "gtb {a:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        Ok(())
    };
    let t = Instant::now();
    let shard_args = |i: usize| -> Vec<String> {
        let mut a: Vec<String> = vec!["build".into(), "--shard".into(), format!("{i}/{SHARDS}")];
        let out = dir.join(format!("shard-{i}")).display().to_string();
        a.extend(["--out".into(), out]);
        a.extend(args("shared-cache", CONCURRENCY));
        a
    };
    run_at_once(&gtb, (0..SHARDS).map(shard_args))?;
    let t_shards = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut merge: Vec<String> = vec!["merge".into()];
    merge.extend((0..SHARDS).map(|i| dir.join(format!("shard-{i}")).display().to_string()));
    merge.extend(["--out".into(), dir.join("merged").display().to_string()]);
    run(&merge)?;
    let t_merge = t.elapsed().as_secs_f64();
    let (calls, ideal, generate_wall) = shard_requests(&dir, SHARDS, CONCURRENCY)?;
    let mut whole: Vec<String> = vec![
        "build".into(),
        "--out".into(),
        dir.join("whole").display().to_string(),
    ];
    whole.extend(args("own-cache", SHARDS * CONCURRENCY));
    let t = Instant::now();
    run(&whole)?;
    let t_whole = t.elapsed().as_secs_f64();
    server.kill().ok();
    server.wait().ok();
    let sha = |p: &str| gtb_core::digest::sha256_file(&dir.join(p));
    anyhow::ensure!(
        sha("merged/test.jsonl")? == sha("whole/test.jsonl")?,
        "merged bytes differ from the unsharded build"
    );
    println!(
        "sharded llm build {N} tasks, {SHARDS} shards x concurrency {CONCURRENCY}, 200 ms server, one shared cache: {calls} calls, shards {t_shards:.2}s wall, of which generate {generate_wall:.2}s (ideal {ideal:.2}s: ratio {:.2} whole, {:.2} generate) + merge {t_merge:.2}s; unsharded at concurrency {} {t_whole:.2}s; same sha256",
        t_shards / ideal,
        generate_wall / ideal,
        SHARDS * CONCURRENCY
    );
    Ok(())
}

/// `gtb solve` of a built split: wall time of the witnesses (all cores), then the mean group
/// utility by difficulty of the witness against the naive baseline (`Solver::baseline`: only the
/// shared must_visits, the cheapest food, hotel and modes; scored on the original preferences,
/// a task whose baseline cannot be framed counting 0).
fn solve_witnesses(c: &Config, tasks: &std::path::Path) -> anyhow::Result<()> {
    use gtb_score::{PoiDb, score_plan};
    use rayon::prelude::*;
    let res = gtb_ops::load_resources(c)?;
    let db = PoiDb::from_resources(&res);
    let solver = gtb_solve::Solver::new(&res, &db);
    let tasks = gtb_ops::solve::read_tasks(tasks)?;
    let t = Instant::now();
    let lines = gtb_ops::solve::solve_tasks(&solver, &tasks);
    let wall = t.elapsed().as_secs_f64();
    let summary = gtb_ops::solve::SolveSummary::of(&tasks, &lines);
    println!(
        "solve n={}: {wall:.3}s wall on {} threads, {} witnesses ({} proven infeasible, {} search exhausted), peak RSS {:.0} MiB",
        tasks.len(),
        rayon::current_num_threads(),
        summary.solved,
        summary.infeasible,
        summary.exhausted,
        peak_rss_mib()
    );
    let baseline: Vec<Baseline> = tasks
        .par_iter()
        .map(|t| match solver.baseline(t) {
            Ok(plan) => {
                let plan = serde_json::to_value(&plan).expect("plans serialise");
                let s = score_plan(t, &plan, &[], &db);
                let u = &s.utility;
                [
                    u.total_score as f64,
                    u.per_user_average_score,
                    u.fairness,
                    f64::from(u8::from(s.validity.valid)),
                ]
            }
            Err(_) => [0.0; 4],
        })
        .collect();
    print_against_baseline(&tasks, &summary.figures, &baseline);
    solver_cpu::report(&solver, &tasks);
    Ok(())
}

/// The naive plan's group utility, per-member utility, fairness and validity (1 or 0).
type Baseline = [f64; 4];

/// The witnesses' figures by difficulty beside the naive baseline's.
fn print_against_baseline(
    tasks: &[gtb_core::task::Task],
    figures: &gtb_ops::solve::Figures,
    baseline: &[Baseline],
) {
    for k in ["easy", "medium", "hard", "all"] {
        let picked: Vec<&Baseline> = tasks
            .iter()
            .zip(baseline)
            .filter(|(t, _)| k == "all" || t.difficulty_type == k)
            .map(|(_, b)| b)
            .collect();
        let (Some(w), false) = (figures.by_difficulty.get(k), picked.is_empty()) else {
            continue;
        };
        let m = picked.len() as f64;
        let mean = |i: usize| picked.iter().map(|b| b[i]).sum::<f64>() / m;
        println!(
            "  {k:<6} {:>4} tasks: witness group utility {:.2}, per member {:.2}, fairness {:.2} (upper bound {:.2}; with compromises {:.0} %, subgroups {:.0} %; stand-in hotels {:.1} % of {}, meals {:.1} % of {}) | baseline group utility {:.2}, per member {:.2}, fairness {:.2} (valid {:.0} %)",
            w.tasks,
            w.group_utility,
            w.per_user_average,
            w.fairness,
            w.upper_bound,
            w.with_compromises * 100.0,
            w.with_subgroups * 100.0,
            w.hotel_stand_in_share * 100.0,
            w.hotels,
            w.meal_stand_in_share * 100.0,
            w.meals,
            mean(0),
            mean(1),
            mean(2),
            mean(3) * 100.0,
        );
    }
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

/// `fixture-release`: a synthetic release-format file over the cities of cities.csv.
fn fixture_release(args: &[String]) -> anyhow::Result<()> {
    use gtb_store::import::release::fixture;
    use std::io::Write;
    let spec = fixture::Spec {
        pois: flag(args, "--pois", Some(338_000))?,
        seed: flag(args, "--seed", Some(1))?,
        malformed: flag(args, "--malformed", Some(0))?,
    };
    let out: std::path::PathBuf = flag(args, "--out", None)?;
    let c = cfg(650, &std::env::temp_dir());
    let res = gtb_resources::load(&c.paths)?;
    let t = Instant::now();
    let mut summary = None;
    gtb_core::digest::write_streaming_atomic(&out, |w| {
        let mut w = std::io::BufWriter::new(w);
        summary = Some(fixture::write(&mut w, &res.cities, &spec)?);
        w.flush()?;
        Ok(())
    })?;
    let s = summary.expect("written");
    println!(
        "{}: {} POIs over {} cities ({} malformed), {:.1} MB in {:.3}s",
        out.display(),
        s.entries,
        s.kept.len(),
        s.malformed.len(),
        std::fs::metadata(&out)?.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `import-release FILE`: `gtb import release` in this process (the CLI's path: resources,
/// lock, import, publish) into a temporary store; wall time and peak RSS.
fn import_release(args: &[String]) -> anyhow::Result<()> {
    let input: std::path::PathBuf = args
        .first()
        .map(Into::into)
        .ok_or_else(|| anyhow::anyhow!("import-release FILE"))?;
    let dir = std::env::temp_dir().join(format!("gtb-bench-{}", std::process::id()));
    let opts = gtb_store::import::ImportOptions {
        adapter: gtb_store::import::Adapter::Release,
        input: input.clone(),
        out: dir.join("store"),
        cities: None,
        licence: None,
        map: Default::default(),
        radius_km: 60.0,
        progress: false,
    };
    let c = cfg(650, &dir);
    let t = Instant::now();
    let s = gtb_ops::import(&c, &opts)?;
    println!(
        "import release {} ({:.1} MB): {:.3}s wall, {} POIs in {} cities, {} dropped, peak RSS {:.0} MiB",
        input.display(),
        std::fs::metadata(&input)?.len() as f64 / 1e6,
        t.elapsed().as_secs_f64(),
        s.pois.rows,
        s.counts.len(),
        s.dropped_file.rows,
        peak_rss_mib()
    );
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

/// Write the synthetic extract of [`osm_import`]: around 20 city centres, 300,000 tagged
/// nodes (a fifth unnamed), 100,000 plain ones, 100,000 closed ways of 7 nodes (30 % named
/// parks, the rest buildings), 2,000 multipolygon parks and a square boundary per city.
/// Names are plainly synthetic (`基准景点17`); nothing of it is real or kept. Returns the
/// number of elements written.
fn write_osm_fixture(
    path: &std::path::Path,
    centres: &[(String, f64, f64)],
) -> anyhow::Result<u64> {
    use rand::SeedableRng;
    let mut f = OsmFixture {
        w: gtb_pbf_write::PbfWriter::new(std::io::BufWriter::new(std::fs::File::create(path)?))?,
        rng: rand_chacha::ChaCha8Rng::seed_from_u64(11),
        id: 0,
        centres,
    };
    f.poi_nodes()?;
    let first_way_node = f.id + 1;
    f.outline_nodes()?;
    let first_border_node = f.id + 1;
    f.border_nodes()?;
    let nodes = f.id as u64;
    let first_border_way = f.ways(first_way_node, first_border_node)?;
    f.relations(first_border_way)?;
    f.w.finish()?;
    Ok(nodes + 100_000 + 4 * centres.len() as u64 + centres.len() as u64 + 2_000)
}

/// The fixture being written: the writer, its random stream and the last node id.
struct OsmFixture<'c> {
    w: gtb_pbf_write::PbfWriter<std::io::BufWriter<std::fs::File>>,
    rng: rand_chacha::ChaCha8Rng,
    id: i64,
    centres: &'c [(String, f64, f64)],
}

impl OsmFixture<'_> {
    /// A point within about 25 km of centre `i` (round robin).
    fn near(&mut self, i: usize) -> (f64, f64) {
        use rand::Rng;
        let c = &self.centres[i % self.centres.len()];
        (
            c.1 + self.rng.gen_range(-0.25..0.25),
            c.2 + self.rng.gen_range(-0.25..0.25),
        )
    }

    /// 400,000 nodes: POIs of six kinds (a fifth unnamed) and plain crossings.
    fn poi_nodes(&mut self) -> anyhow::Result<()> {
        const KINDS: [&[(&str, &str)]; 6] = [
            &[
                ("tourism", "museum"),
                ("opening_hours", "Tu-Su 09:00-17:00; Mo off"),
            ],
            &[("amenity", "restaurant"), ("cuisine", "sichuan")],
            &[
                ("amenity", "fast_food"),
                ("cuisine", "noodle"),
                ("opening_hours", "Mo-Fr 07:00-21:00; Sa-Su 08:00-22:00"),
            ],
            &[("tourism", "hotel"), ("stars", "4")],
            &[("historic", "memorial"), ("wikidata", "Q1")],
            &[("amenity", "cafe"), ("opening_hours", "24/7")],
        ];
        for i in 0..400_000usize {
            self.id += 1;
            let (lat, lon) = self.near(i);
            if i % 4 == 3 {
                self.w.node(self.id, lat, lon, &[("highway", "crossing")])?;
                continue;
            }
            let name = format!("基准景点{i}");
            let mut tags: Vec<(&str, &str)> = KINDS[i % KINDS.len()].to_vec();
            if i % 5 != 0 {
                tags.push(("name", &name));
            }
            self.w.node(self.id, lat, lon, &tags)?;
        }
        Ok(())
    }

    /// Way outlines: 7 nodes each (a heptagon of about 100 m).
    fn outline_nodes(&mut self) -> anyhow::Result<()> {
        for i in 0..100_000usize {
            let (lat, lon) = self.near(i);
            for k in 0..7 {
                let a = k as f64 * std::f64::consts::TAU / 7.0;
                self.id += 1;
                self.w
                    .node(self.id, lat + 0.001 * a.sin(), lon + 0.001 * a.cos(), &[])?;
            }
        }
        Ok(())
    }

    /// City squares, 50 nodes a side.
    fn border_nodes(&mut self) -> anyhow::Result<()> {
        for c in self.centres {
            let (s, n, we, e) = (c.1 - 0.3, c.1 + 0.3, c.2 - 0.3, c.2 + 0.3);
            for k in 0..200 {
                let t = (k % 50) as f64 / 50.0;
                let (lat, lon) = match k / 50 {
                    0 => (s, we + t * (e - we)),
                    1 => (s + t * (n - s), e),
                    2 => (n, e - t * (e - we)),
                    _ => (n - t * (n - s), we),
                };
                self.id += 1;
                self.w.node(self.id, lat, lon, &[])?;
            }
        }
        Ok(())
    }

    /// 100,000 closed ways (30 % named parks, the rest buildings), then four border ways per
    /// city; returns the first border way's id.
    fn ways(&mut self, first_way_node: i64, first_border_node: i64) -> anyhow::Result<i64> {
        for i in 0..100_000i64 {
            let base = first_way_node + 7 * i;
            let mut refs: Vec<i64> = (base..base + 7).collect();
            refs.push(base);
            let name = format!("基准公园{i}");
            let tags: Vec<(&str, &str)> = if i % 10 < 3 {
                vec![("leisure", "park"), ("name", &name)]
            } else {
                vec![("building", "yes")]
            };
            self.w.way(i + 1, &refs, &tags)?;
        }
        let first_border_way = 100_001i64;
        for ci in 0..self.centres.len() as i64 {
            for side in 0..4i64 {
                let start = first_border_node + 200 * ci + 50 * side;
                let mut refs: Vec<i64> = (start..start + 50).collect();
                refs.push(if side == 3 {
                    first_border_node + 200 * ci
                } else {
                    start + 50
                });
                self.w.way(first_border_way + 4 * ci + side, &refs, &[])?;
            }
        }
        Ok(first_border_way)
    }

    /// A boundary relation per city, and 2,000 multipolygon parks over building outlines.
    fn relations(&mut self, first_border_way: i64) -> anyhow::Result<()> {
        use gtb_pbf_write::{Member, MemberType};
        let outer = |id| Member {
            kind: MemberType::Way,
            id,
            role: "outer",
        };
        for (ci, c) in self.centres.iter().enumerate() {
            let members: Vec<Member> = (0..4)
                .map(|s| outer(first_border_way + 4 * ci as i64 + s))
                .collect();
            let tags = [
                ("type", "boundary"),
                ("boundary", "administrative"),
                ("admin_level", "5"),
                ("name", c.0.as_str()),
            ];
            self.w.relation(ci as i64 + 1, &members, &tags)?;
        }
        for i in 0..2_000i64 {
            let name = format!("基准园区{i}");
            // a building way's outline (ways 4, 14, 24, ... are untagged buildings)
            let tags = [
                ("type", "multipolygon"),
                ("leisure", "park"),
                ("name", name.as_str()),
            ];
            self.w.relation(10_000 + i, &[outer(10 * i + 4)], &tags)?;
        }
        Ok(())
    }
}

/// `gtb import osm` of the synthetic extract: elements/s over the whole import (three passes,
/// city assignment, the store written), and peak RSS.
fn osm_import(dir: &std::path::Path) -> anyhow::Result<()> {
    use gtb_store::import::{Adapter, ImportOptions};
    let c = cfg(650, dir);
    let res = gtb_ops::load_resources(&c)?;
    let centres: Vec<(String, f64, f64)> = res
        .cities
        .iter()
        .step_by((res.cities.len() / 20).max(1))
        .take(20)
        .map(|x| (x.name.clone(), x.lat, x.lng))
        .collect();
    let pbf = dir.join("bench.osm.pbf");
    let t = Instant::now();
    let elements = write_osm_fixture(&pbf, &centres)?;
    let t_write = t.elapsed();
    let bytes = std::fs::metadata(&pbf)?.len();
    let opts = ImportOptions {
        adapter: Adapter::Osm,
        input: pbf.clone(),
        out: dir.join("osm-store"),
        cities: None,
        licence: None,
        map: Default::default(),
        radius_km: 60.0,
        progress: false,
    };
    // the floor: osmpbf decoding every element and nothing else
    let t = Instant::now();
    let decoded =
        osmpbf::ElementReader::from_path(&pbf)?.par_map_reduce(|_| 1u64, || 0, |a, b| a + b)?;
    let t_decode = t.elapsed().as_secs_f64();
    // the adapter (three passes, city assignment) and the store write, timed apart
    let t = Instant::now();
    let ctx = gtb_store::import::ImportContext {
        opts: &opts,
        cities: gtb_store::import::CityDirectory {
            cities: &res.cities,
        },
    };
    let mut builder = gtb_store::StoreBuilder::new(None);
    gtb_store::import::osm::import(&ctx, &mut builder)?;
    let t_adapter = t.elapsed().as_secs_f64();
    let s = builder.finish(&opts.out)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "osm import: {elements} elements ({:.1} MB PBF, written in {:.2}s) in {secs:.2}s = {:.0} elements/s (adapter {t_adapter:.2}s = {:.0} elements/s, store write {:.2}s); {} POIs, {} dropped; peak RSS {:.0} MiB",
        bytes as f64 / 1e6,
        t_write.as_secs_f64(),
        elements as f64 / secs,
        elements as f64 / t_adapter,
        secs - t_adapter,
        s.pois.rows,
        s.dropped_file.rows,
        peak_rss_mib()
    );
    println!(
        "osm decode only (osmpbf par_map_reduce, one pass): {decoded} elements in {t_decode:.2}s = {:.0} elements/s",
        decoded as f64 / t_decode
    );
    Ok(())
}
