//! Issue 20: streamed replies, servers that refuse streams, the context window learnt from
//! the server, and replies corrected when they fail the gates.

use super::*;

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
