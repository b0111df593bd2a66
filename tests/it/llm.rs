//! The LLM generation path against a fake OpenAI-compatible server on loopback (real wire
//! format, injected faults). No test needs the network.

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
    let server = FakeServer::start(
        FakeConfig {
            latency: Duration::ZERO,
            faults: Faults {
                require_key: Some("sk-right-key-000".into()),
                ..Default::default()
            },
            ..Default::default()
        },
        0,
    )
    .unwrap();
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

    let server = FakeServer::start(
        FakeConfig {
            latency: Duration::ZERO,
            faults: Faults {
                quota_exhausted: true,
                ..Default::default()
            },
            ..Default::default()
        },
        0,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_AUTH", 30);
    let e = run(&cfg).unwrap_err().to_string();
    assert!(e.contains("quota"), "{e}");
    assert!(requests(&server) <= 8);
}

#[test]
fn servers_without_json_schema_get_json_object() {
    let server = FakeServer::start(
        FakeConfig {
            latency: Duration::ZERO,
            faults: Faults {
                reject_json_schema: true,
                ..Default::default()
            },
            ..Default::default()
        },
        0,
    )
    .unwrap();
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
    let server = FakeServer::start(
        FakeConfig {
            latency: Duration::ZERO,
            faults: Faults {
                always_bad_messages: true,
                ..Default::default()
            },
            ..Default::default()
        },
        0,
    )
    .unwrap();
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

#[test]
fn issue13_12_retry_after_holds_every_new_request() {
    // Two slots and answers that take 300 ms: while the first request's 429 announces a 1 s
    // pause, the other tasks wait for a slot. Slots freed during the pause (at 300 ms, 600 ms,
    // ...) must not let a queued request through before the pause has passed.
    let server = fake(
        Faults {
            rate_429: 0.25,
            retry_after_secs: 1,
            each_kind_first: true,
            ..Default::default()
        },
        300,
    );
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_UNSET_12", 12);
    cfg.llm.concurrency = 2;
    run(&cfg).unwrap();
    assert!(server.stats.fault_count("429") >= 1, "no 429 to test");
    assert_eq!(
        early(&server),
        0,
        "new requests reached the server inside an announced Retry-After"
    );
    assert!(
        llm_report(&cfg)["requests"]["rate_limited_seconds"]
            .as_f64()
            .unwrap()
            >= 1.0
    );
}

#[test]
fn issue13_13_rate_limits_never_change_the_output() {
    let dir = tempfile::tempdir().unwrap();
    // the reference: no limit
    let free = fake(Faults::default(), 0);
    let cfg = llm_config(&dir.path().join("free"), &free, "GTB_TEST_KEY_UNSET_13", 24);
    let reference = std::fs::read(&run(&cfg).unwrap().splits[0].path).unwrap();
    // an honest 4 requests/s limit, 8 requests in flight: many 429s, never a task given up
    let limited = fake(
        Faults {
            rate_limit_per_sec: 4.0,
            ..Default::default()
        },
        0,
    );
    let mut cfg = llm_config(&dir.path().join("a"), &limited, "GTB_TEST_KEY_UNSET_13", 24);
    cfg.llm.max_retries = 1; // 429s are not bounded by the retries of transient failures
    let s = run(&cfg).unwrap();
    assert!(
        limited.stats.fault_count("rate_limit") > 0,
        "the limit never bit"
    );
    assert_eq!(std::fs::read(&s.splits[0].path).unwrap(), reference);
    assert_eq!(early(&limited), 0);
    let r = llm_report(&cfg);
    assert_eq!(r["requests"]["failed"], 0, "{r}");
    assert_eq!(r["replies"]["attempts_failed"], 0, "{r}");

    // a budget too small to wait out the limit: a resumable stop, nothing published
    let stingy = fake(
        Faults {
            rate_limit_per_sec: 4.0,
            ..Default::default()
        },
        0,
    );
    let mut cfg = llm_config(&dir.path().join("b"), &stingy, "GTB_TEST_KEY_UNSET_13", 24);
    cfg.llm.rate_limit_budget_secs = 0;
    let e = run(&cfg).unwrap_err().to_string();
    assert!(
        e.contains("rate-limit budget") && e.contains("Rerun the same command"),
        "{e}"
    );
    assert!(!cfg.run.out.join("test.jsonl").exists());
    let first = completions(&stingy);
    assert!(first < 24, "the stop came too late ({first} answers)");
    // the rerun with room to wait asks only for what is missing and gives the same file
    cfg.llm.rate_limit_budget_secs = 600;
    let s = run(&cfg).unwrap();
    assert_eq!(std::fs::read(&s.splits[0].path).unwrap(), reference);
    assert_eq!(
        completions(&stingy),
        completions(&free),
        "answers were asked twice"
    );
}

#[test]
fn issue13_14_options_real_servers_need() {
    let server = fake(
        Faults {
            reject_max_tokens: true,
            require_header: Some(("api-key".into(), "azure-key-0014-abcdef".into())),
            require_query: Some("api-version=2024-10-21".into()),
            ..Default::default()
        },
        0,
    );
    let dir = tempfile::tempdir().unwrap();
    set_key("GTB_TEST_KEY_AZURE", "azure-key-0014-abcdef");
    let mut cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_AZURE", 6);
    cfg.llm.api_key_header = "api-key".into();
    cfg.llm.query = vec!["api-version=2024-10-21".into()];
    cfg.llm.extra_body =
        r#"{"enable_thinking": false, "chat_template_kwargs": {"enable_thinking": false}}"#.into();
    cfg.llm.headers = vec!["X-Trace-Token: header-secret-0014-xyz".into()];
    let s = run(&cfg).unwrap();
    assert_eq!(tasks(&s.splits[0].path).len(), 6);
    let members = server.stats.body_members.lock().unwrap().clone();
    assert!(
        members.keys().any(|k| k == "enable_thinking=false"),
        "{members:?}"
    );
    assert!(
        members
            .keys()
            .any(|k| k.starts_with("chat_template_kwargs=")),
        "{members:?}"
    );
    assert!(
        members
            .keys()
            .any(|k| k.starts_with("max_completion_tokens=")),
        "{members:?}"
    );
    assert!(server.stats.fault_count("reject_max_tokens") >= 1);
    assert!(
        server
            .stats
            .header_names
            .lock()
            .unwrap()
            .contains(&"x-trace-token".to_string())
    );
    assert!(
        !server
            .stats
            .header_names
            .lock()
            .unwrap()
            .contains(&"authorization".to_string())
    );
    let r = llm_report(&cfg);
    assert_eq!(r["max_tokens_param"], "max_completion_tokens");
    assert_eq!(r["extra_headers"][0], "X-Trace-Token");
    // the switched field is found in the cache: a run elsewhere sends nothing
    let sent = requests(&server);
    let mut again = cfg.clone();
    again.run.out = dir.path().join("again");
    again.run.work_dir = dir.path().join("again/.work");
    again.run.reports = dir.path().join("again/reports");
    run(&again).unwrap();
    assert_eq!(requests(&server), sent, "a cached answer was asked again");
    // what can change the answer is part of the cache key: the extra body, the header values
    let mut other_body = again.clone();
    other_body.llm.extra_body = r#"{"enable_thinking": true}"#.into();
    other_body.run.out = dir.path().join("b");
    other_body.run.work_dir = dir.path().join("b/.work");
    run(&other_body).unwrap();
    let after_body = requests(&server);
    assert!(after_body > sent, "another extra body reused the cache");
    let mut other_header = again.clone();
    other_header.llm.headers = vec!["X-Trace-Token: another-value-0014".into()];
    other_header.run.out = dir.path().join("h");
    other_header.run.work_dir = dir.path().join("h/.work");
    run(&other_header).unwrap();
    assert!(
        requests(&server) > after_body,
        "another header value reused the cache"
    );
    // header values and the key never reach a file
    for secret in [
        "header-secret-0014-xyz",
        "azure-key-0014-abcdef",
        "another-value-0014",
    ] {
        assert_no_key(&[dir.path()], secret);
    }
    // a bad --extra-body is refused before any request
    let mut bad = cfg.clone();
    bad.llm.extra_body = r#"{"model": "other"}"#.into();
    let e = run(&bad).unwrap_err().to_string();
    assert!(e.contains("--extra-body") && e.contains("model"), "{e}");
}

#[test]
fn issue13_15_content_parts_and_prose_braces_parse_at_once() {
    let server = fake(
        Faults {
            rate_content_parts: 0.5,
            rate_prose_braces: 0.5,
            each_kind_first: true,
            ..Default::default()
        },
        0,
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_UNSET_15A", 12);
    let s = run(&cfg).unwrap();
    assert!(server.stats.fault_count("content_parts") > 0);
    assert!(server.stats.fault_count("prose_braces") > 0);
    let r = llm_report(&cfg);
    assert_eq!(r["replies"]["rejected"], 0, "{}", r["rejections"]);
    let (_, findings) = gtb_ops::validate_file(&cfg, &s.splits[0].path).unwrap();
    assert!(findings.is_empty(), "{findings:?}");
}

#[test]
fn issue13_15_refresh_rejected_asks_again_for_cached_garbage() {
    let server = fake(
        Faults {
            bad_messages_first_sight: true,
            ..Default::default()
        },
        0,
    );
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_UNSET_15B", 24);
    cfg.llm.message_fallback = false;
    // one request per task: every request of the first run is seen again by the refreshing
    // run (per member, the members after a failed one were never asked, and their first sight
    // would come only then)
    cfg.llm.granularity = "task".into();
    let e = run(&cfg).unwrap_err().to_string();
    assert!(e.contains("--refresh-rejected"), "{e}");
    // a plain rerun replays the cached garbage and stops the same way
    let sent = requests(&server);
    let e = run(&cfg).unwrap_err().to_string();
    assert!(e.contains("stopping early"), "{e}");
    // re-asking what the checks reject gets the model's new (good) replies
    cfg.llm.refresh_rejected = true;
    let s = run(&cfg).unwrap();
    assert!(requests(&server) > sent);
    assert_eq!(tasks(&s.splits[0].path).len(), 24);
    // and they replaced the garbage in the cache: a plain run elsewhere sends nothing
    let sent = requests(&server);
    let mut plain = cfg.clone();
    plain.llm.refresh_rejected = false;
    plain.run.out = dir.path().join("plain");
    plain.run.work_dir = dir.path().join("plain/.work");
    plain.run.reports = dir.path().join("plain/reports");
    let p = run(&plain).unwrap();
    assert_eq!(requests(&server), sent);
    assert_eq!(
        std::fs::read(&p.splits[0].path).unwrap(),
        std::fs::read(&s.splits[0].path).unwrap()
    );
}

#[test]
fn issue13_15_noop_rerun_keeps_the_accounting() {
    let server = fake(Faults::default(), 0);
    let dir = tempfile::tempdir().unwrap();
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_UNSET_15C", 8);
    run(&cfg).unwrap();
    let report_path = cfg.run.reports.join("llm_report.json");
    let before = std::fs::read(&report_path).unwrap();
    run(&cfg).unwrap(); // every stage reused
    assert_eq!(
        std::fs::read(&report_path).unwrap(),
        before,
        "the report was rewritten"
    );
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.run.out.join("manifest.json")).unwrap()).unwrap();
    let r = llm_report(&cfg);
    assert!(r["requests"]["sent"].as_u64().unwrap() >= 8);
    assert_eq!(m["llm"]["requests"], r["requests"]);
    assert_eq!(m["llm"]["tokens"], r["tokens"]);
}

#[test]
fn issue13_11_llm_food_values_are_scoped_to_the_city() {
    let server = fake(
        Faults {
            rate_foreign_food: 1.0,
            ..Default::default()
        },
        0,
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_UNSET_11", 10);
    let s = run(&cfg).unwrap();
    assert!(server.stats.fault_count("foreign_food") >= 10);
    let r = llm_report(&cfg);
    let rej = r["rejections"].to_string();
    assert!(rej.contains("美食候选"), "{rej}");
    // the corrected replies hold only values the city accepts
    let (_, findings) = gtb_ops::validate_file(&cfg, &s.splits[0].path).unwrap();
    assert!(findings.is_empty(), "{findings:?}");
}

fn fake_with(cfg: FakeConfig) -> FakeServer {
    FakeServer::start(cfg, 0).unwrap()
}

fn count(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

#[test]
fn issue20_streamed_replies_are_never_cut_off_while_they_come() {
    // every reply takes several seconds in small pieces, the inactivity limit is 1 s
    let server = fake_with(FakeConfig {
        piece_delay: Duration::from_millis(40),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    set_key("GTB_TEST_KEY_STREAM", "sk-gtb-test-key-0020");
    let mut cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_STREAM", 2);
    cfg.llm.timeout_secs = 1;
    let t0 = std::time::Instant::now();
    let s = run(&cfg).unwrap();
    assert!(
        t0.elapsed() > Duration::from_secs(2),
        "the replies should take longer than the limit"
    );
    let r = llm_report(&cfg);
    assert_eq!(count(&r["requests"]["timeouts"]), 0, "{r}");
    assert_eq!(count(&r["requests"]["retries"]), 0, "{r}");
    assert_eq!(r["streamed"], true);
    assert_eq!(
        server.stats.streamed.load(Ordering::Relaxed),
        requests(&server)
    );
    // a plain (not streamed) run of the same tasks writes the same bytes: the cache key and
    // the reply do not depend on how it came
    let plain_server = FakeServer::start(FakeConfig::default(), 0).unwrap();
    let dir2 = tempfile::tempdir().unwrap();
    let mut plain = llm_config(dir2.path(), &plain_server, "GTB_TEST_KEY_STREAM", 2);
    plain.llm.stream = false;
    let s2 = run(&plain).unwrap();
    assert_eq!(plain_server.stats.streamed.load(Ordering::Relaxed), 0);
    assert!(
        std::fs::read(&s.splits[0].path).unwrap() == std::fs::read(&s2.splits[0].path).unwrap(),
        "a streamed and a plain run differ"
    );
}

#[test]
fn issue20_servers_that_refuse_streams_get_plain_replies() {
    let server = fake_with(FakeConfig {
        faults: Faults {
            refuse_stream: true,
            ..Default::default()
        },
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    set_key("GTB_TEST_KEY_NOSTREAM", "sk-gtb-test-key-0021");
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_NOSTREAM", 4);
    run(&cfg).unwrap();
    // the requests in flight when the first refusal came back were refused too, no more
    let refused = server.stats.fault_count("refuse_stream");
    assert!(
        (1..=cfg.llm.concurrency as u64).contains(&refused),
        "{refused}"
    );
    assert_eq!(server.stats.streamed.load(Ordering::Relaxed), 0);
    let r = llm_report(&cfg);
    assert_eq!(r["streamed"], false);
    assert_eq!(count(&r["requests"]["failed"]), 0, "{r}");
}

/// A fake llama.cpp whose context (in the fake's tokens: characters / 2) is `n_ctx`.
fn small_context(n_ctx: u64, faults: Faults) -> FakeServer {
    fake_with(FakeConfig {
        n_ctx: Some(n_ctx),
        faults,
        ..Default::default()
    })
}

#[test]
fn issue20_the_window_is_learnt_and_no_request_overflows() {
    // bad lines on every reply, and a first member naming a sight that is no candidate on the
    // first turn: its correction turn's conversation (first turn + previous reply + problems)
    // would not fit; the prompts need fewer candidates
    let server = small_context(
        6000,
        Faults {
            always_bad_messages: true,
            rate_hallucinated: 1.0,
            ..Default::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    set_key("GTB_TEST_KEY_WINDOW", "sk-gtb-test-key-0022");
    let mut cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_WINDOW", 6);
    cfg.llm.max_tokens = 1200;
    // the whole group in one request: the largest prompts and replies (a member's own
    // correction turn fits this window)
    cfg.llm.granularity = "task".into();
    let live = run(&cfg).unwrap();
    let r = llm_report(&cfg);
    assert_eq!(server.stats.fault_count("exceed_context"), 0, "{r}");
    assert_eq!(count(&r["context_window"]["tokens"]), 6000, "{r}");
    assert!(count(&r["fitted_prompts"]) > 0, "{r}");
    assert!(count(&r["replies"]["compacted_corrections"]) > 0, "{r}");
    assert!(count(&r["replies"]["template_messages"]) > 0, "{r}");
    // the lines that failed are counted per reason; the tasks' usage adds up to the run's
    let by = &r["rejections_by_reason"];
    assert!(
        count(&by["line_form"]) > 0 && count(&by["line_reveals"]) > 0,
        "{by}"
    );
    let tasks = r["tasks"].as_object().unwrap();
    let sum = |k: &str| tasks.values().map(|t| count(&t[k])).sum::<u64>();
    assert_eq!(
        sum("prompt_tokens"),
        count(&r["tokens"]["this_run"]["prompt"])
    );
    assert_eq!(
        sum("prompt_tokens"),
        server.stats.prompt_tokens.load(Ordering::Relaxed)
    );
    assert_eq!(sum("turns"), requests(&server));
    // every conversation (the task's, or each member's) took its three turns
    assert!(
        tasks.values().all(|t| {
            let conversations = t["members"].as_object().map_or(1, |m| m.len()) as u64;
            count(&t["turns"]) == 3 * conversations
        }),
        "{tasks:?}"
    );
    // an offline replay fits the prompts the same way (the window was recorded)
    let mut replay = llm_config(
        &dir.path().join("replay"),
        &server,
        "GTB_TEST_KEY_WINDOW",
        6,
    );
    replay.llm.max_tokens = 1200;
    replay.llm.granularity = "task".into();
    replay.llm.cache_dir = cfg.llm.cache_dir.clone();
    replay.llm.offline_replay = true;
    let sent = requests(&server);
    let s = run(&replay).unwrap();
    assert_eq!(requests(&server), sent);
    assert!(
        std::fs::read(&s.splits[0].path).unwrap() == std::fs::read(&live.splits[0].path).unwrap(),
        "the replay differs"
    );
}

#[test]
fn issue20_a_request_the_server_finds_too_long_names_both_numbers_and_the_fix() {
    // the configured window is far larger than the server's: the prompts are not cut down
    let server = small_context(1500, Faults::default());
    let dir = tempfile::tempdir().unwrap();
    set_key("GTB_TEST_KEY_OVERFLOW", "sk-gtb-test-key-0023");
    let mut cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_OVERFLOW", 4);
    cfg.llm.context_tokens = 100_000;
    cfg.llm.max_error_rate = 0.0;
    let e = run(&cfg).unwrap_err().to_string();
    assert!(server.stats.fault_count("exceed_context") > 0);
    assert!(
        e.contains("the server's context is 1500 per request")
            && e.contains("prompt tokens")
            && e.contains("--context-tokens"),
        "{e}"
    );
    assert!(!cfg.run.out.join("test.jsonl").exists());
    // a window too small for any prompt stops the run before anything is sent
    let sent = requests(&server);
    let mut tiny = llm_config(
        &dir.path().join("tiny"),
        &server,
        "GTB_TEST_KEY_OVERFLOW",
        4,
    );
    tiny.llm.context_tokens = 1500;
    let e = run(&tiny).unwrap_err().to_string();
    assert!(
        e.contains("1500 tokens") && e.contains("larger context"),
        "{e}"
    );
    assert_eq!(requests(&server), sent);
}

#[test]
fn issue20_replies_failing_the_gates_are_corrected_and_counted_by_reason() {
    // the first turn of every task fails one gate each (copied member, a line that rejects its
    // own must, a budget of 50,000); the correction turn's reply passes
    let server = fake(
        Faults {
            rate_copied_member: 0.4,
            rate_contradicting_line: 0.4,
            rate_implausible_budget: 0.4,
            each_kind_first: true,
            ..Default::default()
        },
        0,
    );
    let dir = tempfile::tempdir().unwrap();
    set_key("GTB_TEST_KEY_GATES", "sk-gtb-test-key-0024");
    let cfg = llm_config(dir.path(), &server, "GTB_TEST_KEY_GATES", 12);
    let s = run(&cfg).unwrap();
    let r = llm_report(&cfg);
    let by = &r["rejections_by_reason"];
    assert!(count(&by["strategy"]) >= 1, "{by}");
    assert!(count(&by["line_disagrees"]) >= 1, "{by}");
    assert!(count(&by["scalar_range"]) >= 1, "{by}");
    assert!(count(&r["replies"]["corrections"]) >= 3, "{r}");
    // a reply whose tables passed and whose lines did not is asked for its lines alone
    assert!(server.stats.fault_count("lines_request") >= 1);
    // what was accepted passes every validator, the gates among them
    let (n, findings) = gtb_ops::validate_file(&cfg, &s.splits[0].path).unwrap();
    assert_eq!(n, 12);
    assert!(findings.is_empty(), "{findings:?}");
    for t in tasks(&s.splits[0].path) {
        for e in t.user_preferences.values() {
            assert!(e.preference.global_constraints.avg_budget <= 10_500);
        }
    }
}
