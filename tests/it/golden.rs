//! The default build's bytes are pinned: `tests/golden/default_build.sha256` holds the sha256
//! of `make dataset`'s `output/test.jsonl` and of its witness plans, `output/plans.jsonl`.
//! Refactors must leave them alone; a deliberate change of data, rules or the solver updates
//! the file and says why in its commit.

use crate::common::*;

#[test]
fn default_build_matches_the_golden_sha256() {
    let golden_file = root().join("tests/golden/default_build.sha256");
    let golden = std::fs::read_to_string(&golden_file).unwrap();
    let pinned = |file: &str| {
        golden
            .lines()
            .find(|l| l.ends_with(file))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("no sha256 of {file} in the golden file"))
            .to_string()
    };
    let expected = pinned("output/test.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_in(dir.path());
    let s = build(&cfg, 2);
    assert_eq!(s.splits[0].tasks, 650);
    assert!(
        s.splits[0].sha256 == expected,
        "the default build's bytes changed: test.jsonl has sha256 {}, {} pins {expected}.\n\
         If you changed data or generation rules on purpose, put the new sha256 into that file \
         and say in the commit message what changed the bytes and why; a refactor must not \
         change them.",
        s.splits[0].sha256,
        golden_file.display(),
    );
    // every task has its witness, and the plans are pinned too
    let plans = s.splits[0].path.with_file_name("plans.jsonl");
    let text = std::fs::read_to_string(&plans).unwrap();
    assert_eq!(text.lines().count(), 650);
    assert!(!text.contains("\"plan\": null"));
    let sha = gtb_core::digest::sha256_file(&plans).unwrap();
    assert!(
        sha == pinned("output/plans.jsonl"),
        "the default build's plans changed: plans.jsonl has sha256 {sha}, {} pins {}; update it \
         deliberately (data, generation or solver change) and say why in the commit message.",
        golden_file.display(),
        pinned("output/plans.jsonl"),
    );
    // issue 27: the paper's targets hold (budget range, mean and median within 5 %, the
    // compromisable and clash shares): a drift fails here
    let audit =
        gtb_audit::Audit::run(&s.splits[0].path, Some(&gtb_audit::Against::Paper), false).unwrap();
    let misses = &audit.comparison.as_ref().unwrap().misses;
    assert!(
        misses.is_empty(),
        "the default split misses paper targets: {misses:?}"
    );
    // issue 20: the offline lines agree with their tables, the scalars are plausible and the
    // strategies hold at the first try (no task of the default split is regenerated for them)
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.run.reports.join("report.json")).unwrap())
            .unwrap();
    for check in ["lines", "scalars", "strategies"] {
        let row = &report["checks"][check];
        assert_eq!(row["passes"], 650, "{check}: {row}");
        assert_eq!(row["retries"], 0, "{check}: {row}");
    }
}
