//! The LLM generate stage against a loopback `gtb-fake-llm` server answering in a fixed
//! 200 ms: 650 tasks at concurrency 64 (`gtb-bench llm`), and a 2,000-task build in 4 shards
//! then `gtb merge`, against the unsharded build.

use crate::cfg;
use std::time::Instant;

/// The LLM generate stage against a loopback server answering every request in a fixed 200 ms:
/// 650 tasks at concurrency 64; ideal wall = calls x 0.2 s / 64. The server is the
/// `gtb-fake-llm` binary in its own process (as a real server would be), so that its CPU work
/// is not counted as the client's.
pub fn llm_generate_stage(dir: &std::path::Path) -> anyhow::Result<()> {
    let (mut server, base_url) = fake_llm_server(200)?;
    let mut c = cfg(650, &dir.join("llm"))?;
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

/// Issue 14 item 2's closing figure: an LLM build of 2,000 tasks in 4 shards (4 `gtb build
/// --shard I/4` processes at once, one shared cache, concurrency 64 each) against a 200 ms
/// server, then `gtb merge`. Ideal: every shard's requests in whole rounds of 64 at 200 ms,
/// the shards side by side. The rest of a shard's wall is CPU work every process does (data,
/// validator index, sampling, checks), shared here by 4 processes on the machine's cores. The
/// unsharded build (concurrency 4 x 64, own cache) is timed too.
pub fn sharded_llm_build(dir: &std::path::Path) -> anyhow::Result<()> {
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
