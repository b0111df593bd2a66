//! The default build's bytes are pinned: `tests/golden/default_build.sha256` holds the sha256
//! of `make dataset`'s `output/test.jsonl`. Refactors must leave it alone; a deliberate change
//! of data or rules updates the file and says why in its commit.

use crate::common::*;

#[test]
fn default_build_matches_the_golden_sha256() {
    let golden_file = root().join("tests/golden/default_build.sha256");
    let golden = std::fs::read_to_string(&golden_file).unwrap();
    let expected = golden
        .split_whitespace()
        .next()
        .expect("a sha256 on the first line");
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
