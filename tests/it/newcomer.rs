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
