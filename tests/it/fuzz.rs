//! Fuzzing in the test suite (issue 13 item 16). Mutated task files go through `gtb validate`
//! and `gtb audit` (in-process, plus some through the binary), mutated raw rows through the
//! input loading of `prepare` and, when accepted, a small sample → generate → validate. Every
//! case must end (no hang: a per-case time limit), without a panic, and every refusal must name
//! the file.
//!
//! The mutations are drawn from `GTB_FUZZ_SEED` (default 13; set another to fuzz with a seed
//! the suite does not use). `GTB_FUZZ_CASES` sets the number of task files (default 2,000),
//! `GTB_FUZZ_BINARY_CASES` those run through the binary (default 30, each by validate and
//! audit), and `GTB_FUZZ_RAW_CASES` that of raw-data mutations (default 150).

use crate::common::*;
use gtb_core::config::Config;
use gtb_core::task::Task;
use gtb_resources::Resources;
use gtb_validate::{Mode, Validator};
use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longer than any case takes on a loaded 2-core machine (most take milliseconds).
mod raw;

const CASE_LIMIT: Duration = Duration::from_secs(30);

pub(crate) fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

pub(crate) fn seed() -> u64 {
    let s = env_number("GTB_FUZZ_SEED", 13);
    eprintln!("fuzz seed {s} (GTB_FUZZ_SEED)");
    s
}

pub(crate) fn case_rng(seed: u64, kind: &str, case: usize) -> ChaCha8Rng {
    gtb_core::rng::item_rng(seed, "fuzz", &format!("{kind}#{case}"))
}

/// What the cases came to: failures (a check's complaint, a panic, or a case still running
/// after `CASE_LIMIT`, which ends the run) as `case i: why`, and how many cases ended each way
/// (so that a test can tell its mutations reach past the parser).
pub(crate) struct Outcomes {
    failures: Vec<String>,
    ends: BTreeMap<&'static str, usize>,
}

/// Run `check` on every case on a worker thread; it says how the case ended.
pub(crate) fn run_cases<C: Send + 'static>(
    cases: Vec<C>,
    check: impl Fn(usize, &C) -> Result<&'static str, String> + Send + 'static,
) -> Outcomes {
    let n = cases.len();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for (i, c) in cases.iter().enumerate() {
            let outcome = catch_unwind(AssertUnwindSafe(|| check(i, c)))
                .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(&p))));
            if tx.send((i, outcome)).is_err() {
                return;
            }
        }
    });
    let mut out = Outcomes {
        failures: Vec::new(),
        ends: BTreeMap::new(),
    };
    for _ in 0..n {
        match rx.recv_timeout(CASE_LIMIT) {
            Ok((_, Ok(end))) => *out.ends.entry(end).or_default() += 1,
            Ok((i, Err(why))) => out.failures.push(format!("case {i}: {why}")),
            Err(_) => {
                out.failures
                    .push(format!("a case ran longer than {CASE_LIMIT:?} (hang)"));
                break;
            }
        }
    }
    out
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// No failure, and every one of `ends` reached by some case.
pub(crate) fn assert_sound(what: &str, total: usize, out: &Outcomes, ends: &[&str]) {
    eprintln!(
        "{what}: {total} cases, {} failures, {:?}",
        out.failures.len(),
        out.ends
    );
    assert_no_failures(what, total, &out.failures);
    for end in ends {
        assert!(
            out.ends.contains_key(end),
            "{what}: no case ended as {end:?}: {:?}",
            out.ends
        );
    }
}

fn assert_no_failures(what: &str, total: usize, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{what}: {} of {total} cases failed (seed {}):\n{}",
        failures.len(),
        seed(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// --- task files --------------------------------------------------------------------------

/// The lines of a small default build: the corpus the task mutations start from.
fn corpus() -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = 6;
    let s = build(&cfg, 1);
    let text = std::fs::read_to_string(&s.splits[0].path).unwrap();
    text.lines().map(String::from).collect()
}

/// Values that break assumptions: wrong types, bounds, dates, keys, sizes, nesting.
fn odd_value(rng: &mut ChaCha8Rng, task: &Value) -> Value {
    let nested = |depth: usize| {
        let mut v = json!(1);
        for _ in 0..depth {
            v = json!([v]);
        }
        v
    };
    match rng.gen_range(0..24) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(0),
        3 => json!(-3),
        4 => json!(200),
        5 => json!(u32::MAX),
        6 => json!(u64::MAX),
        7 => json!(-1e308),
        8 => json!(0.5),
        9 => json!(""),
        10 => json!("X"),
        11 => json!(["User7", "User0", "User400", "user1"].choose(rng).unwrap()),
        12 => json!(
            ["2026-13-45", "+262142-12-31", "2026-02-30", "0000-01-01"]
                .choose(rng)
                .unwrap()
        ),
        13 => json!(["两天一夜", "十天九夜", "七天六夜"].choose(rng).unwrap()),
        14 => json!(
            ["北京市", "重庆火锅", "大同市", "高铁", "飞机"]
                .choose(rng)
                .unwrap()
        ),
        15 => json!("啊".repeat(rng.gen_range(1000..20_000))),
        16 => json!("\u{0}\u{FEFF}\u{202E}"),
        17 => json!([]),
        18 => json!({}),
        19 => nested(rng.gen_range(50..200)),
        20 => json!({"": 1, "User1": {}}),
        // another node of the same task: well-typed values in the wrong place
        _ => {
            let mut all = Vec::new();
            collect(task, &mut all);
            all.choose(rng).cloned().cloned().unwrap_or(Value::Null)
        }
    }
}

fn collect<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
    out.push(v);
    match v {
        Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect(x, out)),
        _ => {}
    }
}

/// A mutable reference to node number `target` (pre-order), counting with `seen`.
fn node_mut<'v>(v: &'v mut Value, target: usize, seen: &mut usize) -> Option<&'v mut Value> {
    if *seen == target {
        return Some(v);
    }
    *seen += 1;
    match v {
        Value::Array(a) => a.iter_mut().find_map(|x| node_mut(x, target, seen)),
        Value::Object(o) => o.values_mut().find_map(|x| node_mut(x, target, seen)),
        _ => None,
    }
}

/// Strings that break assumptions while keeping the type: dates, day phrases, member keys,
/// names of other places, control characters, sizes.
fn odd_string(rng: &mut ChaCha8Rng) -> String {
    const ODD: [&str; 22] = [
        "",
        "X",
        "2026-13-45",
        "+262142-12-31",
        "2026-02-30",
        "两天一夜",
        "十天九夜",
        "User7",
        "User0",
        "User400",
        "user1",
        "北京市",
        "大同市",
        "重庆火锅",
        "肠粉",
        "高铁",
        "轮船",
        "豪华型",
        "9-9",
        "\u{0}\u{FEFF}\u{202E}",
        "  故宫  ",
        "故宫博物院",
    ];
    if rng.gen_bool(0.05) {
        return "啊".repeat(rng.gen_range(1000..20_000));
    }
    ODD.choose(rng).unwrap().to_string()
}

/// One change to a task. Mostly one that keeps the node's JSON type (so that the task still
/// reads and the validators see it), sometimes any value in any place.
fn mutate_value(rng: &mut ChaCha8Rng, task: &mut Value) {
    let snapshot = task.clone();
    let mut all = Vec::new();
    collect(&snapshot, &mut all);
    let target = rng.gen_range(0..all.len());
    let node = node_mut(task, target, &mut 0).expect("node exists");
    if rng.gen_bool(0.1) {
        *node = odd_value(rng, &snapshot);
        return;
    }
    match node {
        Value::String(s) => *s = odd_string(rng),
        Value::Number(_) => {
            *node = json!([0, 1, 4, 25, 200, 100_000, u32::MAX].choose(rng).unwrap());
        }
        Value::Bool(b) => *b = !*b,
        Value::Array(a) => match rng.gen_range(0..4) {
            0 => a.clear(),
            1 if !a.is_empty() => {
                a.remove(rng.gen_range(0..a.len()));
            }
            2 if !a.is_empty() => {
                let v = a[rng.gen_range(0..a.len())].clone();
                a.extend(std::iter::repeat_n(v, rng.gen_range(1..50)));
            }
            _ if a.iter().all(Value::is_string) => a.push(json!(odd_string(rng))),
            _ => a.reverse(),
        },
        Value::Object(o) if !o.is_empty() => {
            let k = o.keys().nth(rng.gen_range(0..o.len())).unwrap().clone();
            match rng.gen_range(0..6) {
                0 if rng.gen_bool(0.3) => {
                    o.shift_remove(&k);
                }
                1 => {
                    // renamed: the value under another key (a member, a city)
                    let v = o.shift_remove(&k).unwrap();
                    o.insert(odd_string(rng), v);
                }
                2 => {
                    // many members (or cities) like the one there: the 400-user shape
                    let v = o[&k].clone();
                    for i in 0..rng.gen_range(2..400) {
                        o.insert(format!("User{i}"), v.clone());
                    }
                }
                3 => o.clear(),
                4 => {
                    let v = o[&k].clone();
                    o.insert(odd_string(rng), v);
                }
                _ => {
                    // the same members or fields, in reverse order
                    let reversed: Vec<(String, Value)> =
                        std::mem::take(o).into_iter().rev().collect();
                    o.extend(reversed);
                }
            }
        }
        _ => *node = odd_value(rng, &snapshot),
    }
}

/// One change to the bytes of a file.
fn mutate_bytes(rng: &mut ChaCha8Rng, bytes: &mut Vec<u8>) {
    let at = |rng: &mut ChaCha8Rng, b: &Vec<u8>| rng.gen_range(0..=b.len());
    match rng.gen_range(0..9) {
        0 if !bytes.is_empty() => {
            let i = rng.gen_range(0..bytes.len());
            bytes[i] = rng.r#gen();
        }
        1 => {
            let i = at(rng, bytes);
            let junk: Vec<u8> = (0..rng.gen_range(1..16)).map(|_| rng.r#gen()).collect();
            bytes.splice(i..i, junk);
        }
        2 => {
            let i = at(rng, bytes);
            let j = (i + rng.gen_range(1..200)).min(bytes.len());
            bytes.drain(i..j);
        }
        3 => {
            let i = at(rng, bytes);
            bytes.truncate(i);
        }
        4 => {
            bytes.splice(0..0, *b"\xEF\xBB\xBF");
        }
        5 => {
            let i = at(rng, bytes);
            bytes.insert(i, b'\n');
        }
        6 => {
            let copy = bytes.clone();
            bytes.extend(copy);
        }
        7 => {
            *bytes = bytes
                .split(|&b| b == b'\n')
                .collect::<Vec<_>>()
                .join(&b"\r\n"[..]);
        }
        _ => {
            let i = at(rng, bytes);
            bytes.splice(i..i, *b"\xFF\x00\xC3");
        }
    }
}

/// A mutated task file: some corpus lines, changed structurally and/or byte-wise.
fn mutated_task_file(rng: &mut ChaCha8Rng, corpus: &[String]) -> Vec<u8> {
    let mut lines = Vec::new();
    for _ in 0..rng.gen_range(1..=3) {
        let line = corpus.choose(rng).unwrap();
        if rng.gen_bool(0.85) {
            let mut v: Value = serde_json::from_str(line).unwrap();
            for _ in 0..rng.gen_range(1..=3) {
                mutate_value(rng, &mut v);
            }
            lines.push(gtb_core::pyjson::to_string(&v));
        } else {
            lines.push(line.clone());
        }
    }
    let mut bytes = (lines.join("\n") + "\n").into_bytes();
    if rng.gen_bool(0.15) {
        mutate_bytes(rng, &mut bytes);
    }
    bytes
}

/// `gtb validate` and `gtb audit` (every format, against the paper) on one file, in-process:
/// an error must name the file and a line. Ends as "malformed", "findings" or "clean".
fn validate_and_audit(v: &Validator, bytes: &[u8]) -> Result<&'static str, String> {
    const NAME: &str = "fuzz.jsonl";
    let end = match gtb_ops::validate_bytes(v, NAME, bytes) {
        Err(e) => {
            let e = format!("{e:#}");
            if !e.starts_with(&format!("{NAME}:")) {
                return Err(format!("validate error without FILE:LINE: {e}"));
            }
            "malformed"
        }
        Ok((_, findings)) if findings.is_empty() => "clean",
        Ok(_) => "findings",
    };
    let mut tally = gtb_audit::load::tally_bytes(bytes);
    if tally.bad_lines().iter().any(|b| b.line == 0) {
        return Err("audit: a bad line numbered 0".into());
    }
    let audit = gtb_audit::Audit::new(tally.report(NAME), Some(&gtb_audit::paper::profile()));
    for f in [
        gtb_audit::Format::Md,
        gtb_audit::Format::Json,
        gtb_audit::Format::Html,
    ] {
        f.render(&audit);
    }
    Ok(end)
}

/// The shipped resources and config, for the lifetime of the test process (the worker thread
/// of `run_cases` outlives any borrow).
fn shipped() -> (&'static Config, &'static Resources) {
    let cfg: &'static Config = Box::leak(Box::new(config_in(Path::new("target/unused-outputs"))));
    let res = Box::leak(Box::new(gtb_ops::load_resources(cfg).unwrap()));
    (cfg, res)
}

#[test]
fn issue13_16_fuzz_task_files_through_validate_and_audit() {
    let seed = seed();
    let n = env_number("GTB_FUZZ_CASES", 2000) as usize;
    let corpus = corpus();
    let files: Vec<Vec<u8>> = (0..n)
        .map(|i| mutated_task_file(&mut case_rng(seed, "task", i), &corpus))
        .collect();
    let (cfg, res) = shipped();
    let v: &'static Validator = Box::leak(Box::new(Validator::new(res, cfg)));
    let started = Instant::now();
    let out = run_cases(files, move |_, bytes| validate_and_audit(v, bytes));
    eprintln!("{n} task files in {:.1} s", started.elapsed().as_secs_f64());
    assert_sound("task files", n, &out, &["malformed", "findings"]);
}

// --- through the binary ------------------------------------------------------------------

/// `gtb ARGS` in `dir`, killed after `CASE_LIMIT`: (exit code, stderr), or why it failed.
fn gtb_in(dir: &Path, args: &[&str]) -> Result<(i32, String), String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gtb"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).ok();
            return match status.code() {
                Some(c) if c == 0 || c == 1 => Ok((c, err)),
                other => Err(format!("gtb {args:?}: exit {other:?}: {err}")),
            };
        }
        if started.elapsed() > CASE_LIMIT {
            child.kill().ok();
            child.wait().ok();
            return Err(format!(
                "gtb {args:?}: still running after {CASE_LIMIT:?} (hang)"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn issue13_16_fuzz_task_files_through_the_binary() {
    let seed = seed();
    let n = env_number("GTB_FUZZ_BINARY_CASES", 30) as usize;
    let corpus = corpus();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for i in 0..n {
        let file = dir.path().join(format!("case{i}.jsonl"));
        let bytes = mutated_task_file(&mut case_rng(seed, "binary", i), &corpus);
        std::fs::write(&file, bytes).unwrap();
        let file = file.display().to_string();
        for cmd in ["validate", "audit"] {
            match gtb_in(&root(), &[cmd, &file]) {
                Ok((1, err)) if !err.contains(&file) => failures.push(format!(
                    "case {i}: gtb {cmd}: the error names no file: {err}"
                )),
                Ok(_) => {}
                Err(why) => failures.push(format!("case {i}: {why}")),
            }
        }
    }
    assert_no_failures("task files through the binary", 2 * n, &failures);
}

/// Sample `n` skeletons, generate their tasks offline and validate them (`Mode::Fix`); `None`
/// when the sampler refuses the resources.
pub(crate) fn checked_tasks(cfg: &Config, res: &Resources, n: usize) -> Option<Vec<Task>> {
    let sampler = gtb_sample::Sampler::new(cfg, res, n).ok()?;
    let generator =
        gtb_generate::offline::OfflineGenerator::new(cfg.generate.conflicts.clone(), res);
    let v = Validator::new(res, cfg);
    let mut out = Vec::new();
    for sk in sampler.sample() {
        let Ok(ctx) = gtb_generate::TaskContext::new(&sk, res, cfg.run.seed) else {
            continue;
        };
        use gtb_generate::PreferenceGenerator;
        if let Ok(g) = generator.generate(&ctx, 0, None) {
            let mut t: Task = gtb_generate::assemble(&ctx, g);
            v.check_task(&mut t, Mode::Fix);
            out.push(t);
        }
    }
    Some(out)
}
