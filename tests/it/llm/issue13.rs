//! Issue 13: what real servers need of the LLM client: retry-after, rate limits that never
//! change the output, the options they take, content parts, cached garbage, accounting.

use super::*;

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
