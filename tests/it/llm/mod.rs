//! The LLM generation path against a fake OpenAI-compatible server on loopback (real wire
//! format, injected faults). No test needs the network.
//!
//! `issue13`: the limits real servers set (retry-after, rate limits, options, content parts);
//! `issue20`: streamed replies, the learnt context window and the reply gates.

mod issue13;
mod issue20;

use crate::common::*;
use gtb_core::config::Config;
use gtb_core::task::Task;
use gtb_fake_llm::{FakeConfig, FakeServer, Faults};
use gtb_resources::Strategy;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Each test names its own key variable (the environment is shared by the test threads).
pub(crate) fn set_key(var: &str, key: &str) {
    // SAFETY: every test uses a distinct variable, set before any thread reads it
    unsafe { std::env::set_var(var, key) };
}

pub(crate) fn llm_config(dir: &Path, server: &FakeServer, key_var: &str, n: usize) -> Config {
    let mut cfg = config_in(dir);
    cfg.run.n = n;
    cfg.run.generator = "openai".into();
    cfg.llm.base_url = server.base_url();
    cfg.llm.model = "fake-model".into();
    cfg.llm.api_key_env = key_var.into();
    cfg.llm.cache_dir = dir.join("cache");
    cfg.llm.concurrency = 8;
    cfg.llm.backoff_ms = 20;
    cfg.llm.timeout_secs = 5;
    // `GTB_TEST_LLM_GRANULARITY=task` runs these tests with one request per task (default: the
    // shipped config's, one per member)
    if let Ok(g) = std::env::var("GTB_TEST_LLM_GRANULARITY") {
        cfg.llm.granularity = g;
    }
    // these tests count the requests of the LLM generator itself; a task without a witness
    // plan would be regenerated and ask again (the witness requirement: tests/it/witness.rs)
    cfg.solve.enabled = false;
    cfg
}

fn run(cfg: &Config) -> anyhow::Result<gtb_build::BuildSummary> {
    gtb_build::build(&gtb_build::BuildRequest::new(cfg.clone()))
}

fn requests(s: &FakeServer) -> u64 {
    s.stats.requests.load(Ordering::Relaxed)
}

fn tasks(path: &Path) -> Vec<Task> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn assert_no_key(dirs: &[&Path], key: &str) {
    let mut n = 0;
    for d in dirs {
        for f in files(d) {
            n += 1;
            let bytes = std::fs::read(&f).unwrap();
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "the API key is in {}",
                f.display()
            );
        }
    }
    assert!(n > 0, "no files were checked");
}

fn llm_report(cfg: &Config) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(cfg.run.reports.join("llm_report.json")).unwrap())
        .unwrap()
}

#[test]
fn build_is_valid_grounded_and_a_rerun_sends_nothing() {
    let server = FakeServer::start(FakeConfig::default(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = "sk-gtb-test-key-0001-abcdefgh";
    set_key("GTB_TEST_KEY_BUILD", key);
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_BUILD", 20);
    let s = run(&cfg).unwrap();
    let sent = requests(&server);
    assert!(sent >= 20, "one request per task at least, got {sent}");
    assert_eq!(
        server.stats.auth_seen.lock().unwrap().clone(),
        vec![format!("Bearer {key}")]
    );
    // the output passes every validator
    let (n, findings) = gtb_ops::validate_file(&cfg, &s.splits[0].path).unwrap();
    assert_eq!(n, 20);
    assert!(findings.is_empty(), "{findings:?}");
    // copy strategies hold exactly: inherited fields equal the reference's
    let res = gtb_ops::load_resources(&cfg).unwrap();
    let mut copies = 0;
    for t in tasks(&s.splits[0].path) {
        let a = res.archetype(&t.metadata.group_id).unwrap();
        for slot in a.planned_slots() {
            let Some(r) = &slot.reference else { continue };
            let (me, rf) = (
                &t.user_preferences[&slot.user].preference,
                &t.user_preferences[r].preference,
            );
            assert_eq!(me.global_constraints, rf.global_constraints);
            if slot.strategy == Strategy::CopyMinor {
                for (c, cp) in &me.city_specific_preferences {
                    assert_eq!(
                        cp.attractions.category_pref,
                        rf.city_specific_preferences[c].attractions.category_pref
                    );
                    assert_eq!(
                        cp.food.prefer_eat,
                        rf.city_specific_preferences[c].food.prefer_eat
                    );
                }
            }
            copies += 1;
        }
        assert_eq!(
            t.user_preferences.keys().collect::<Vec<_>>(),
            a.planned_slots().map(|s| &s.user).collect::<Vec<_>>()
        );
    }
    assert!(copies > 0);
    // accounting in the manifest and the report
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.run.out.join("manifest.json")).unwrap()).unwrap();
    assert!(
        m["generator"]
            .as_str()
            .unwrap()
            .starts_with(&format!("openai {}", gtb_llm::prompt::PROMPTS_VERSION))
    );
    assert_eq!(m["llm"]["requests"]["sent"], sent);
    assert!(m["llm"]["tokens"]["this_run"]["prompt"].as_u64().unwrap() > 0);
    assert!(
        llm_report(&cfg)["tokens"]["this_run"]["completion"]
            .as_u64()
            .unwrap()
            > 0
    );
    // an identical second run sends nothing, and so does a run into another folder
    let bytes = std::fs::read(&s.splits[0].path).unwrap();
    run(&cfg).unwrap();
    assert_eq!(requests(&server), sent, "a fresh rerun sent requests");
    let mut other = cfg.clone();
    other.run.out = dir.path().join("other");
    other.run.work_dir = dir.path().join("other/.work");
    other.run.reports = dir.path().join("other/reports");
    let s2 = run(&other).unwrap();
    assert_eq!(
        requests(&server),
        sent,
        "the shared cache answered everything"
    );
    assert_eq!(std::fs::read(&s2.splits[0].path).unwrap(), bytes);
    assert_eq!(
        llm_report(&other)["requests"]["cached"].as_u64().unwrap(),
        sent
    );
    assert_no_key(
        &[
            &cfg.run.out,
            &cfg.run.reports,
            &cfg.llm.cache_dir,
            &other.run.out,
        ],
        key,
    );
}

#[test]
fn injected_faults_are_survived_reported_and_never_leak_the_key() {
    let faults = Faults {
        rate_429: 0.15,
        retry_after_secs: 1,
        rate_500: 0.15,
        rate_timeout: 0.08,
        timeout_ms: 2500,
        rate_truncated_body: 0.08,
        rate_malformed_body: 0.08,
        rate_malformed_json: 0.15,
        rate_hallucinated: 0.2,
        rate_bad_mode: 0.1,
        rate_injection: 0.2,
        rate_fenced: 0.2,
        echo_key: true,
        each_kind_first: true,
        ..Default::default()
    };
    let server = FakeServer::start(
        FakeConfig {
            latency: Duration::from_millis(5),
            faults,
            ..Default::default()
        },
        0,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = "sk-gtb-test-key-0002-leaky";
    set_key("GTB_TEST_KEY_FAULTS", key);
    let mut cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_FAULTS", 24);
    cfg.llm.timeout_secs = 1;
    let s = run(&cfg).unwrap();
    let (n, findings) = gtb_ops::validate_file(&cfg, &s.splits[0].path).unwrap();
    assert_eq!(n, 24);
    assert!(findings.is_empty(), "{findings:?}");
    let st = &server.stats;
    for k in [
        "429",
        "500",
        "timeout",
        "truncated_body",
        "malformed_body",
        "malformed_json",
        "hallucinated",
        "injection",
    ] {
        assert!(
            st.fault_count(k) > 0,
            "fault {k} was not injected: {:?}",
            st.faults.lock().unwrap()
        );
    }
    let r = llm_report(&cfg);
    let q = &r["requests"];
    assert!(
        q["http_429"].as_u64().unwrap() > 0
            && q["http_5xx"].as_u64().unwrap() > 0
            && q["timeouts"].as_u64().unwrap() > 0,
        "{q}"
    );
    assert!(
        q["malformed_bodies"].as_u64().unwrap() + q["connection_errors"].as_u64().unwrap() > 0,
        "{q}"
    );
    assert!(q["retries"].as_u64().unwrap() > 0);
    assert!(
        r["replies"]["rejected"].as_u64().unwrap() > 0
            && r["replies"]["corrections"].as_u64().unwrap() > 0
    );
    assert!(q["final_concurrency"].as_u64().unwrap() < 8 || q["http_429"].as_u64().unwrap() > 0);
    // rejected replies are listed with their problems and cache keys (the raw reply is cached)
    let rej = r["rejections"].as_array().unwrap();
    assert!(
        rej.iter()
            .any(|x| x["problems"].to_string().contains("不存在的梦幻乐园")),
        "{rej:?}"
    );
    for x in rej {
        let k = x["cache_key"].as_str().unwrap();
        assert!(
            cfg.llm
                .cache_dir
                .join("llm-responses-v1")
                .join(&k[..2])
                .join(format!("{k}.json"))
                .exists()
        );
    }
    // nothing of the injected text reached the output
    let text = std::fs::read_to_string(&s.splits[0].path).unwrap();
    assert!(
        !text.contains("忽略之前") && !text.contains("不存在的梦幻乐园") && !text.contains("轮船")
    );
    assert_no_key(&[&cfg.run.out, &cfg.run.reports, &cfg.llm.cache_dir], key);
}

#[test]
fn interrupted_run_resumes_to_the_same_bytes() {
    let server = FakeServer::start(
        FakeConfig {
            latency: Duration::from_millis(150),
            faults: Faults::default(),
            ..Default::default()
        },
        0,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gtb = |out: &Path, cache: &Path| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_gtb"));
        c.args([
            "build",
            "--llm",
            "openai",
            "--model",
            "fake-model",
            "--n",
            "24",
            "--seed",
            "5",
            "--concurrency",
            "2",
        ])
        .arg("--out")
        .arg(out)
        .arg("--cache-dir")
        .arg(cache)
        .env("OPENAI_BASE_URL", server.base_url())
        .env("OPENAI_API_KEY", "sk-gtb-test-key-0003-resume")
        .current_dir(root())
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
        c
    };
    // uninterrupted: one request per attempt (a task without a witness plan takes another)
    let (a_out, a_cache) = (dir.path().join("a"), dir.path().join("cache-a"));
    assert!(gtb(&a_out, &a_cache).status().unwrap().success());
    let full = requests(&server);
    // killed (SIGKILL) once a few answers are cached, then rerun with its own cache
    let (b_out, b_cache) = (dir.path().join("b"), dir.path().join("cache-b"));
    let mut child = gtb(&b_out, &b_cache).spawn().unwrap();
    let t0 = std::time::Instant::now();
    while files(&b_cache).len() < 6 && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let cached = files(&b_cache)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .count();
    assert!(
        cached >= 6 && !b_out.join("test.jsonl").exists(),
        "the kill came too late ({cached} cached)"
    );
    let before = requests(&server);
    assert!(gtb(&b_out, &b_cache).status().unwrap().success());
    let resumed = requests(&server) - before;
    assert!(
        resumed <= full - cached as u64 + 2,
        "the rerun asked again what was cached ({resumed} requests, {cached} cached, {full} in a whole run)"
    );
    assert_eq!(
        std::fs::read(b_out.join("test.jsonl")).unwrap(),
        std::fs::read(a_out.join("test.jsonl")).unwrap()
    );
}

#[test]
fn offline_replay_uses_the_cache_and_fails_clearly_on_a_miss() {
    let server = FakeServer::start(FakeConfig::default(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    set_key("GTB_TEST_KEY_REPLAY", "sk-gtb-test-key-0004");
    let cfg = llm_config(&dir.path().join("live"), &server, "GTB_TEST_KEY_REPLAY", 6);
    let live = run(&cfg).unwrap();
    let sent = requests(&server);
    // a replay elsewhere: everything comes from the cache, nothing from the server
    let mut replay = llm_config(
        &dir.path().join("replay"),
        &server,
        "GTB_TEST_KEY_REPLAY",
        6,
    );
    replay.llm.cache_dir = cfg.llm.cache_dir.clone();
    replay.llm.offline_replay = true;
    let s = run(&replay).unwrap();
    assert_eq!(requests(&server), sent);
    assert_eq!(
        std::fs::read(&s.splits[0].path).unwrap(),
        std::fs::read(&live.splits[0].path).unwrap()
    );
    // a miss stops the run with a clear message, and nothing is committed
    let mut miss = replay.clone();
    miss.run.seed = 99;
    miss.run.work_dir = dir.path().join("miss/.work");
    miss.run.out = dir.path().join("miss");
    let e = run(&miss).unwrap_err().to_string();
    assert!(
        e.contains("--offline-replay") && e.contains("no cached response"),
        "{e}"
    );
    assert_eq!(requests(&server), sent);
    assert!(
        !miss.run.work_dir.join("generate.fingerprint.json").exists()
            && !miss.run.out.join("test.jsonl").exists()
    );
}

#[test]
fn auth_and_quota_errors_stop_the_run_at_once() {
    let server = fake(
        Faults {
            require_key: Some("sk-right-key-000".into()),
            ..Default::default()
        },
        0,
    );
    let dir = tempfile::tempdir().unwrap();
    set_key("GTB_TEST_KEY_AUTH", "sk-wrong-key-999");
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_AUTH", 30);
    let e = run(&cfg).unwrap_err().to_string();
    assert!(
        e.contains("authentication failed") && e.contains("GTB_TEST_KEY_AUTH"),
        "{e}"
    );
    assert!(!e.contains("sk-wrong-key-999"));
    assert!(
        requests(&server) <= 8,
        "kept sending after a 401: {}",
        requests(&server)
    );
    assert!(!cfg.run.out.join("test.jsonl").exists());

    let server = fake(
        Faults {
            quota_exhausted: true,
            ..Default::default()
        },
        0,
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_AUTH", 30);
    let e = run(&cfg).unwrap_err().to_string();
    assert!(e.contains("quota"), "{e}");
    assert!(requests(&server) <= 8);
}

#[test]
fn servers_without_json_schema_get_json_object() {
    let server = fake(
        Faults {
            reject_json_schema: true,
            ..Default::default()
        },
        0,
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_UNSET_1", 10);
    let s = run(&cfg).unwrap();
    assert_eq!(tasks(&s.splits[0].path).len(), 10);
    assert!(
        server
            .stats
            .formats
            .lock()
            .unwrap()
            .get("json_object")
            .copied()
            .unwrap_or(0)
            >= 10
    );
    assert_eq!(llm_report(&cfg)["response_format"], "json_object");
    // the negotiated format is found in the cache by the next run
    let before = requests(&server);
    let mut again = cfg.clone();
    again.run.work_dir = dir.path().join("again/.work");
    again.run.out = dir.path().join("again");
    run(&again).unwrap();
    assert_eq!(requests(&server), before);
}

#[test]
fn a_model_that_keeps_failing_stops_the_run_early() {
    let server = fake(
        Faults {
            always_bad_messages: true,
            ..Default::default()
        },
        0,
    );
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_UNSET_2", 40);
    cfg.llm.message_fallback = false;
    let e = run(&cfg).unwrap_err().to_string();
    assert!(
        e.contains("stopping early") && e.contains("--refresh-rejected"),
        "{e}"
    );
    assert!(requests(&server) <= 40 * 3, "{}", requests(&server));
    // with the fallback on, template lines stand in and the build completes
    let mut ok = cfg.clone();
    ok.llm.message_fallback = true;
    ok.run.work_dir = dir.path().join("ok/.work");
    ok.run.out = dir.path().join("ok");
    ok.run.reports = dir.path().join("ok/reports");
    let s = run(&ok).unwrap();
    assert_eq!(tasks(&s.splits[0].path).len(), 40);
    assert_eq!(
        llm_report(&ok)["replies"]["template_messages"]
            .as_u64()
            .unwrap(),
        40
    );
}

#[test]
fn concurrency_and_request_rate_limits_hold() {
    let server = FakeServer::start(
        FakeConfig {
            latency: Duration::from_millis(40),
            faults: Faults::default(),
            ..Default::default()
        },
        0,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_UNSET_3", 24);
    cfg.llm.concurrency = 3;
    cfg.llm.requests_per_minute = 600; // 10/s, bursts of 100
    run(&cfg).unwrap();
    let max = server.stats.max_in_flight.load(Ordering::Relaxed);
    assert!((1..=3).contains(&max), "max in flight {max}");
}

fn fake(faults: Faults, latency_ms: u64) -> FakeServer {
    FakeServer::start(
        FakeConfig {
            latency: Duration::from_millis(latency_ms),
            faults,
            ..Default::default()
        },
        0,
    )
    .unwrap()
}

fn early(s: &FakeServer) -> u64 {
    s.stats.early_requests.load(Ordering::Relaxed)
}

fn completions(s: &FakeServer) -> u64 {
    s.stats.completions.load(Ordering::Relaxed)
}

fn fake_with(cfg: FakeConfig) -> FakeServer {
    FakeServer::start(cfg, 0).unwrap()
}

fn count(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or(0)
}
