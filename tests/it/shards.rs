//! Issue 14 item 2: `gtb build --shard I/N` and `gtb merge` give the unsharded build's bytes,
//! offline and with an LLM (concurrent shard processes sharing one cache); merge refuses
//! what is not one whole build; leakage-free splits work in shards.

use crate::common::*;
use gtb_fake_llm::{FakeConfig, FakeServer};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn gtb(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gtb"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn sha(path: &Path) -> String {
    gtb_core::digest::sha256_file(path).unwrap()
}

/// `gtb build ARGS --shard i/n --out <dir>/s<i>` for every i, as concurrent processes;
/// returns the shard folders.
fn build_shards(dir: &Path, n: usize, args: &[String]) -> Vec<PathBuf> {
    let children: Vec<_> = (0..n)
        .map(|i| {
            let out = dir.join(format!("s{i}"));
            let mut a = strings(&["build", "--shard", &format!("{i}/{n}"), "--out"]);
            a.push(out.display().to_string());
            a.extend_from_slice(args);
            let child = Command::new(env!("CARGO_BIN_EXE_gtb"))
                .args(&a)
                .current_dir(root())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (out, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(out, c)| {
            ok(c.wait_with_output().unwrap());
            out
        })
        .collect()
}

fn merge(dirs: &[PathBuf], out: &Path) -> Output {
    let mut a = strings(&["merge"]);
    a.extend(dirs.iter().map(|d| d.display().to_string()));
    a.extend(strings(&["--out", &out.display().to_string()]));
    gtb(&a)
}

fn unsharded(out: &Path, args: &[String]) {
    let mut a = strings(&["build", "--out", &out.display().to_string()]);
    a.extend_from_slice(args);
    ok(gtb(&a));
}

#[test]
fn issue14_02_four_shards_and_merge_give_the_unsharded_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // the default build (650 tasks, seed 1): its golden sha256
    let shards = build_shards(dir.path(), 4, &[]);
    let m = dir.path().join("merged");
    ok(merge(&shards, &m));
    let golden = std::fs::read_to_string(root().join("tests/golden/default_build.sha256")).unwrap();
    assert_eq!(
        sha(&m.join("test.jsonl")),
        golden.split_whitespace().next().unwrap()
    );
    let whole = dir.path().join("whole");
    unsharded(&whole, &[]);
    // the reports describe the same file with the same numbers
    for f in ["report.json", "report.md"] {
        assert_eq!(
            std::fs::read(m.join("validation_reports").join(f)).unwrap(),
            std::fs::read(whole.join("validation_reports").join(f)).unwrap(),
            "{f}"
        );
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(m.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["test_jsonl_sha256"],
        sha(&m.join("test.jsonl")).as_str()
    );
    assert_eq!(manifest["counts"]["tasks"], 650);
    assert_eq!(manifest["stage_decisions"]["merge"], "ran: 4 shards");
}

#[test]
fn issue14_02_shards_with_drops_and_replacements_merge_to_the_same_bytes() {
    // a budget floor most tasks miss: many drops, each slot draws its own replacements
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("gtb.toml")).unwrap();
    let cfg = dir.path().join("gtb.toml");
    std::fs::write(
        &cfg,
        text.replace("min_meal_cost = 60 ", "min_meal_cost = 400 ")
            .replace("\"raw_data/", &format!("\"{}/raw_data/", root().display()))
            .replace(
                "\"archetypes/",
                &format!("\"{}/archetypes/", root().display()),
            )
            .replace(
                "\"city_clusters/",
                &format!("\"{}/city_clusters/", root().display()),
            ),
    )
    .unwrap();
    let mut args = strings(&["--config", &cfg.display().to_string()]);
    args.extend(strings(&["--n", "240", "--seed", "4"]));
    let shards = build_shards(dir.path(), 3, &args);
    let m = dir.path().join("merged");
    let out = ok(merge(&shards, &m));
    let whole = dir.path().join("whole");
    unsharded(&whole, &args);
    assert_eq!(sha(&m.join("test.jsonl")), sha(&whole.join("test.jsonl")));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(m.join("validation_reports/report.json")).unwrap())
            .unwrap();
    assert!(
        report["dropped"].as_u64().unwrap() > 10,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        std::fs::read(m.join("validation_reports/report.json")).unwrap(),
        std::fs::read(whole.join("validation_reports/report.json")).unwrap()
    );
}

#[test]
fn issue14_02_merge_refuses_missing_duplicated_and_foreign_shards() {
    let dir = tempfile::tempdir().unwrap();
    let args = strings(&["--n", "60", "--seed", "3"]);
    let shards = build_shards(dir.path(), 3, &args);
    let out = dir.path().join("merged");
    let refuse = |dirs: &[PathBuf], says: &[&str]| {
        let o = merge(dirs, &out);
        assert_eq!(o.status.code(), Some(1));
        let e = String::from_utf8_lossy(&o.stderr).to_string();
        for s in says {
            assert!(e.contains(s), "{e}");
        }
        assert!(!out.join("test.jsonl").exists() && !out.join("manifest.json").exists());
    };
    refuse(
        &shards[..2],
        &[
            "missing shard(s) 2/3",
            "build them with gtb build --shard I/3",
        ],
    );
    refuse(
        &[
            shards[0].clone(),
            shards[1].clone(),
            shards[1].clone(),
            shards[2].clone(),
        ],
        &["shard 1/3 of split test is given twice"],
    );
    // a shard of another seed: another build
    let other = dir.path().join("other");
    let mut a = strings(&[
        "build",
        "--shard",
        "2/3",
        "--out",
        &other.display().to_string(),
    ]);
    a.extend(strings(&["--n", "60", "--seed", "4"]));
    ok(gtb(&a));
    refuse(
        &[shards[0].clone(), shards[1].clone(), other],
        &["is a shard of another build", "config run.seed changed"],
    );
    // a slice changed after it was built
    let lines = shards[1].join("validated.jsonl");
    let text = std::fs::read_to_string(&lines).unwrap();
    std::fs::write(&lines, text.replacen("task_", "task_9", 1)).unwrap();
    refuse(&shards, &["the shard changed after it was built"]);
    std::fs::write(&lines, text).unwrap();
    ok(merge(&shards, &out));
}

#[test]
fn issue14_02_leakage_free_splits_in_shards() {
    let dir = tempfile::tempdir().unwrap();
    let args = strings(&[
        "--splits",
        "test=150,train=600,dev=60",
        "--holdout-cities",
        "6",
    ]);
    let shards = build_shards(dir.path(), 3, &args);
    let m = dir.path().join("merged");
    ok(merge(&shards, &m));
    let whole = dir.path().join("whole");
    unsharded(&whole, &args);
    let mut seen: Vec<std::collections::HashSet<String>> = Vec::new();
    for name in ["test", "train", "dev"] {
        let f = format!("{name}/{name}.jsonl");
        assert_eq!(sha(&m.join(&f)), sha(&whole.join(&f)), "{name}");
        let sigs: std::collections::HashSet<String> = std::fs::read_to_string(m.join(&f))
            .unwrap()
            .lines()
            .map(|l| gtb_build::signature_of(&serde_json::from_str(l).unwrap()))
            .collect();
        for other in &seen {
            assert!(sigs.is_disjoint(other), "{name} shares a signature");
        }
        seen.push(sigs);
    }
}

#[test]
fn issue14_02_llm_shards_share_one_cache_and_merge_to_the_unsharded_bytes() {
    let server = FakeServer::start(
        FakeConfig {
            latency: Duration::from_millis(5),
            ..Default::default()
        },
        0,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let llm = |cache: &Path| {
        let mut a = strings(&[
            "--n",
            "48",
            "--seed",
            "2",
            "--llm",
            "openai",
            "--model",
            "fake-model",
        ]);
        a.extend(strings(&["--base-url", &server.base_url()]));
        a.extend(strings(&["--cache-dir", &cache.display().to_string()]));
        a.extend(strings(&["--api-key-env", "GTB_SHARDS_TEST_NO_KEY"]));
        a
    };
    // four processes at once on one cache
    let shared = dir.path().join("shared-cache");
    let shards = build_shards(dir.path(), 4, &llm(&shared));
    let m = dir.path().join("merged");
    ok(merge(&shards, &m));
    // every answer went into the shared cache whole: a replay of the shards asks nothing
    let entries = files(&shared);
    assert!(entries.len() >= 48, "{}", entries.len());
    for e in &entries {
        let name = e.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            !name.ends_with(".tmp"),
            "a temp file left in the cache: {name}"
        );
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(e).unwrap()).unwrap();
    }
    // the unsharded build with a cache of its own gives the same bytes
    let whole = dir.path().join("whole");
    unsharded(&whole, &llm(&dir.path().join("own-cache")));
    assert_eq!(sha(&m.join("test.jsonl")), sha(&whole.join("test.jsonl")));
    // the merged manifest adds up the shards' LLM accounting: the unsharded build's figures
    let json = |p: PathBuf| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    };
    let merged = json(m.join("manifest.json"))["llm"].clone();
    let single = json(whole.join("manifest.json"))["llm"].clone();
    assert_eq!(merged["shards"].as_array().unwrap().len(), 4);
    for key in [
        "/requests/sent",
        "/tokens/this_run/prompt",
        "/tokens/this_run/completion",
    ] {
        let want = single.pointer(key).and_then(|v| v.as_u64()).unwrap();
        assert!(want > 0, "{key}");
        assert_eq!(
            merged
                .pointer(&format!("/totals{key}"))
                .and_then(|v| v.as_u64()),
            Some(want),
            "{key}"
        );
    }
}
