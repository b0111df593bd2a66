//! Issue 14 item 5: what a new user meets first — the Makefile's commands and the README's
//! promises about them.

use crate::common::*;

/// The commands `make` would run (dry run), one string.
fn make_n(args: &[&str]) -> String {
    let o = std::process::Command::new("make")
        .arg("-n")
        .args(args)
        .current_dir(root())
        .output()
        .expect("make is installed (the README says it is needed)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn issue14_05_make_dataset_shows_the_compile_and_keeps_the_default_split() {
    let default = make_n(&["dataset"]);
    // the compile is visible: cargo without --quiet, then the binary the README names
    assert!(default.contains("cargo build --release\n"), "{default}");
    assert!(!default.contains("--quiet"), "{default}");
    assert!(
        default.contains("target/release/gtb build") && !default.contains("--out"),
        "{default}"
    );
    // another seed or size goes to its own folder unless OUT names one
    for (args, out) in [
        (vec!["dataset", "SEED=7"], "--seed 7  --out output/seed-7"),
        (vec!["dataset", "N=100"], "--n 100 --out output/n-100"),
        (
            vec!["dataset", "SEED=7", "N=100"],
            "--seed 7 --n 100 --out output/seed-7-n-100",
        ),
        (
            vec!["dataset", "SEED=7", "OUT=elsewhere"],
            "--out elsewhere",
        ),
    ] {
        let cmds = make_n(&args);
        assert!(cmds.contains(out), "{args:?}: {cmds}");
    }
    assert!(make_n(&["install"]).contains("cargo install --path ."));
}

#[test]
fn issue14_05_readme_says_where_the_binary_is_and_what_is_needed() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for promise in [
        "target/release/gtb",
        "make install",
        "`make`",
        "output/seed-7/",
        "OUT=DIR",
    ] {
        assert!(readme.contains(promise), "README does not say {promise:?}");
    }
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(cargo.contains("rust-version = \"1.89\""));
    assert!(readme.contains("Rust 1.89"));
}

/// Issue 23: with `CARGO_TARGET_DIR` set (a shared target folder), `make dataset` runs the
/// binary cargo built there; it used to run `target/release/gtb` and fail with Error 127.
/// The target folder here is this build's own, reached by another path (a symlink), so that
/// nothing is compiled again and a binary under `target/` cannot stand in for it.
#[test]
fn issue23_make_dataset_runs_the_binary_in_cargo_target_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let target = std::path::Path::new(env!("CARGO_BIN_EXE_gtb"))
        .parent()
        .and_then(|release| release.parent())
        .unwrap()
        .to_path_buf();
    let shared = tmp.path().join("shared-target");
    std::os::unix::fs::symlink(&target, &shared).unwrap();
    let out = tmp.path().join("out");
    let o = std::process::Command::new("make")
        .arg("dataset")
        .arg("N=20")
        .arg(format!("OUT={}", out.display()))
        // a user's shell, not the variables cargo gives a test (some reach build scripts'
        // fingerprints and would rebuild ring and all above it)
        .env_clear()
        .envs(std::env::vars().filter(|(k, _)| {
            [
                "PATH",
                "HOME",
                "CARGO_HOME",
                "RUSTUP_HOME",
                "RUSTUP_TOOLCHAIN",
            ]
            .contains(&k.as_str())
        }))
        .env("CARGO_TARGET_DIR", &shared)
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let ran = format!("{}/release/gtb build", shared.display());
    assert!(stdout.contains(&ran), "make did not run {ran}:\n{stdout}");
    let lines = std::fs::read_to_string(out.join("test.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 20);
}

#[test]
fn issue27_make_bench_hands_large_to_the_benchmarks() {
    // `make bench -- --large` (README, issue 27's evidence): the flag reaches gtb-bench, and
    // make does not stop at a goal it has no rule for
    let large = make_n(&["bench", "--", "--large"]);
    assert!(
        large
            .lines()
            .any(|l| l.contains("-p gtb-bench") && l.trim_end().ends_with("--large")),
        "{large}"
    );
    let plain = make_n(&["bench"]);
    assert!(!plain.contains("--large"), "{plain}");
}
