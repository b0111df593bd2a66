//! `gtb audit`: its numbers against an independent count on the raw JSON, the official
//! examples with hand-checked values, malformed lines, and the three output formats.
//!
//! `count`: the independent count of a small build, field by field.

mod count;

use gtb_audit::{Against, Audit, Format, audit_file};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn gtb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gtb"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("run gtb")
}

/// A small build, made once per test binary with the CLI (so that the test does not depend on
/// the build API); its folder is kept for the other tests of this file.
fn small_build() -> &'static Path {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let o = gtb(&["build", "--n", "80", "--out", dir.to_str().unwrap()]);
        assert!(
            o.status.success(),
            "build failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        dir.join("test.jsonl")
    })
}

fn official() -> Option<PathBuf> {
    let shared = std::env::var_os("GTB_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"));
    let p = shared.join("spec/official_examples.jsonl");
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "NOTE: {} is absent: the checks on the official examples are skipped",
            p.display()
        );
        None
    }
}

fn tasks(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn len(v: &Value) -> u64 {
    v.as_array().unwrap().len() as u64
}

#[test]
#[cfg_attr(
    not(has_official_examples),
    ignore = "needs ../shared/spec/official_examples.jsonl (absent)"
)]
fn official_examples_have_hand_checked_counts() {
    let Some(file) = official() else { return };
    let r = audit_file(&file, false).unwrap();
    assert_eq!(r.tasks, 3);
    // users: 3 (3-1), 3 (4-5, plus a skipped child), 2 (2-3)
    assert_eq!(r.users.users, 8);
    assert_eq!(r.users.members_per_task, Some(9.0 / 3.0));
    let want = [
        ("transport.must", 8),
        ("transport.prefer", 2),
        ("transport.avoid", 8),
        ("transport.reject", 0),
        ("hotel.prefer", 16),
        ("hotel.avoid", 8),
        ("must_visit", 21),
        ("reject_visit", 7),
        ("category.positive", 26),
        ("category.negative", 14),
        ("must_eat", 19),
        ("prefer_eat", 21),
        ("avoid_eat", 11),
        ("reject_eat", 8),
    ];
    for (f, n) in want {
        assert_eq!(r.field(f), Some(n), "{f}");
    }
    // 81 + 70 + 42 points (list items + 3 scalars per user)
    assert_eq!(r.users.atomic_points, 193);
    assert_eq!(r.users.compromisable, 4);
    // budgets 6800×3, 4200, 4200, 3500, 1600×2
    let b = r.budget.as_ref().unwrap();
    assert_eq!(
        (b.min, b.max, b.median, b.mean),
        (1600, 6800, 4200.0, 4437.5)
    );
    // no must item of one member is rejected by another in these three tasks
    for c in &r.conflicts {
        assert_eq!((c.tasks, c.share), (0, Some(0.0)), "{}", c.kind);
    }
    // Table 8 placement: N = 3, 4 (child counted), 2; cities 3, 2, 2; days 7, 5, 3
    let rows = |t: &gtb_audit::report::CrossTab| {
        t.rows
            .iter()
            .map(|r| (r.label.clone(), r.counts.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        rows(&r.table8.by_size),
        vec![
            ("N=2".into(), vec![1, 0, 0]),
            ("N=3".into(), vec![0, 1, 0]),
            ("N=4".into(), vec![0, 1, 0])
        ]
    );
    assert_eq!(
        rows(&r.table8.by_cities),
        vec![
            ("2 cities".into(), vec![1, 1, 0]),
            ("3 cities".into(), vec![0, 1, 0])
        ]
    );
    assert_eq!(
        rows(&r.table8.by_days),
        vec![
            ("2-3 days".into(), vec![1, 0, 0]),
            ("4-5 days".into(), vec![0, 1, 0]),
            ("6-7 days".into(), vec![0, 1, 0])
        ]
    );
    assert_eq!(
        (r.diversity.destination_cities, r.diversity.departure_cities),
        (7, 3)
    );
}

#[test]
#[cfg_attr(
    not(has_official_examples),
    ignore = "needs ../shared/spec/official_examples.jsonl (absent)"
)]
fn conflicts_need_two_different_members() {
    let Some(file) = official() else { return };
    let first = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut t: Value = serde_json::from_str(&first).unwrap();
    let ups = &mut t["user_preferences"];
    // User1 must visit 898艺术村 in 海口市; User2 rejects it there: one attraction clash
    ups["User2"]["preference"]["city_specific_preferences"]["海口市"]["attractions"]["reject_visit"] =
        serde_json::json!(["898艺术村"]);
    // a member rejecting their own must item is not a clash between members
    ups["User1"]["preference"]["city_specific_preferences"]["三亚市"]["food"]["reject_eat"] =
        serde_json::json!(["烤肉"]);
    // the same item rejected in another city is not a clash either
    ups["User3"]["preference"]["city_specific_preferences"]["三亚市"]["food"]["reject_eat"] =
        serde_json::json!(["海南菜"]);
    // transport is global: User3 rejects the plane the others must take
    ups["User3"]["preference"]["global_constraints"]["transport"]["reject"] =
        serde_json::json!(["飞机"]);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    std::fs::write(
        &p,
        format!("{}\n{first}\n", serde_json::to_string(&t).unwrap()),
    )
    .unwrap();
    let r = audit_file(&p, false).unwrap();
    let a = r.conflict("attractions").unwrap();
    assert_eq!((a.tasks, a.share), (1, Some(0.5)));
    assert_eq!(
        (
            a.top[0].item.as_str(),
            a.top[0].city.as_deref(),
            a.top[0].count
        ),
        ("898艺术村", Some("海口市"), 1)
    );
    assert_eq!(r.conflict("food").unwrap().tasks, 0);
    let tr = r.conflict("transport").unwrap();
    assert_eq!((tr.tasks, tr.top[0].item.as_str()), (1, "飞机"));
}

fn broken_file(dir: &Path) -> PathBuf {
    let good = std::fs::read_to_string(small_build()).unwrap();
    let mut lines: Vec<&str> = good.lines().take(3).collect();
    lines.insert(1, "{\"task_id\": \"task_000001\", \"query\": "); // line 2: not JSON
    lines.insert(3, "{\"task_id\": 7}"); // line 4: JSON, but not a task
    lines.insert(4, ""); // line 5: blank, skipped silently
    lines.insert(5, "[1, 2, 3]"); // line 6: not an object
    let p = dir.join("broken.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

#[test]
fn malformed_lines_are_numbered_and_fatal_unless_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let p = broken_file(dir.path());
    let name = p.display().to_string();
    let err = format!("{:#}", audit_file(&p, false).unwrap_err());
    for line in [2, 4, 6] {
        assert!(
            err.contains(&format!("{name}:{line}: ")),
            "line {line} in:\n{err}"
        );
    }
    assert!(
        !err.contains(&format!("{name}:5:")) && !err.contains(&format!("{name}:1:")),
        "{err}"
    );
    assert!(
        err.contains("invalid JSON") && err.contains("not a task"),
        "{err}"
    );

    let r = audit_file(&p, true).unwrap();
    assert_eq!((r.tasks, r.skipped_lines), (3, 3));
    assert_eq!(
        r.skipped.iter().map(|b| b.line).collect::<Vec<_>>(),
        vec![2, 4, 6]
    );

    // the command: non-zero exit with FILE:LINE messages, or a report with --skip-bad
    let o = gtb(&["audit", &name]);
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!("{name}:2: invalid JSON")),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let o = gtb(&["audit", &name, "--skip-bad"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains("3 tasks") && md.contains("3 malformed line(s) skipped"),
        "{md}"
    );
}

#[test]
fn odd_inputs_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8]); 4] = [
        ("empty", b""),
        ("blank", b"\n\n  \n"),
        ("latin1", b"{\"task_id\": \"\xe9\"}\n"),
        ("no_newline", b"{}"),
    ];
    for (name, bytes) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let r = audit_file(&p, true).unwrap();
        assert_eq!(r.tasks, 0, "{name}");
        let a = Audit::new(r, Some(&gtb_audit::paper::profile()));
        for f in [Format::Md, Format::Json, Format::Html] {
            assert!(!f.render(&a).is_empty());
        }
    }
    assert!(audit_file(&dir.path().join("latin1"), false).is_err());
    let missing = format!(
        "{:#}",
        audit_file(&dir.path().join("nope.jsonl"), false).unwrap_err()
    );
    assert!(missing.contains("nope.jsonl: cannot read"), "{missing}");
}

#[test]
fn a_file_against_itself_is_at_distance_zero() {
    let file = small_build();
    let a = Audit::run(file, Some(&Against::File(file.to_path_buf())), false).unwrap();
    let c = a.comparison.as_ref().unwrap();
    assert!(c.dists.iter().any(|d| d.key == "destinations"));
    for d in &c.dists {
        assert_eq!(d.tvd, Some(0.0), "{}", d.key);
        if let Some(x) = &d.chi_square {
            assert!(
                x.statistic.abs() < 1e-12 && (x.p_value - 1.0).abs() < 1e-9,
                "{}: {x:?}",
                d.key
            );
        }
    }
    for s in &c.scalars {
        assert!(
            s.diff.is_none_or(|d| d == 0.0),
            "{}: {:?} vs {:?}",
            s.key,
            s.ours,
            s.reference
        );
    }
}

#[test]
fn against_paper_lists_the_targets() {
    let a = Audit::run(small_build(), Some(&Against::parse("paper")), false).unwrap();
    let c = a.comparison.as_ref().unwrap();
    let get = |k: &str| {
        c.scalars
            .iter()
            .find(|s| s.key == k)
            .and_then(|s| s.reference)
    };
    assert_eq!(get("conflict_share_attractions"), Some(0.331));
    assert_eq!(get("conflict_share_food"), Some(0.212));
    assert_eq!(get("conflict_share_transport"), Some(0.008));
    assert_eq!(get("compromisable_share"), Some(0.542));
    assert_eq!(get("budget_median"), Some(3000.0));
    assert!(
        c.dists.iter().all(|d| d.key != "table8_size"),
        "the paper's size rows group archetypes, not member counts"
    );
    let t8 = c
        .dists
        .iter()
        .find(|d| d.key == "table8_size_paper")
        .unwrap();
    assert_eq!(t8.reference_total, 650);
    assert_eq!(
        t8.rows
            .iter()
            .find(|r| r.label == "N=5 · hard")
            .unwrap()
            .reference,
        123
    );
    let t9 = c.dists.iter().find(|d| d.key == "fields").unwrap();
    assert_eq!(
        t9.rows
            .iter()
            .find(|r| r.label == "must_visit")
            .unwrap()
            .reference,
        7699
    );
    assert!(
        c.dists
            .iter()
            .all(|d| d.tvd.is_some_and(|t| (0.0..=1.0).contains(&t)))
    );
    let md = Format::Md.render(&a);
    assert!(md.contains("## Comparison") && md.contains("TVD"));
}

#[test]
fn outputs_md_json_and_self_contained_html() {
    let file = small_build().to_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for (format, name) in [
        ("md", "audit.md"),
        ("json", "audit.json"),
        ("html", "audit.html"),
    ] {
        let o = gtb(&[
            "audit",
            &file,
            "--against",
            "paper",
            "--format",
            format,
            "--out",
            out,
        ]);
        assert!(
            o.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(dir.path().join(name).exists(), "{name}");
    }
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("audit.json")).unwrap())
            .unwrap();
    assert_eq!(json["report"]["tasks"], 80);
    assert!(json["comparison"]["dists"].as_array().unwrap().len() >= 9);

    let html = std::fs::read_to_string(dir.path().join("audit.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(
        html.matches("<svg").count() >= 5,
        "Table 8 ×3, archetypes, fields, conflicts, destinations"
    );
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    for banned in [
        "http://", "https://", "<script", "<link", "<img", "src=", "url(", "@import",
    ] {
        assert!(
            !html.contains(banned),
            "the page must not load anything: found {banned:?}"
        );
    }
    // without a reference, and printed to stdout when --out is absent
    let o = gtb(&["audit", &file, "--format", "html"]);
    assert!(o.status.success());
    let page = String::from_utf8(o.stdout).unwrap();
    assert!(page.contains("<svg") && !page.contains("http"));
}

/// The audit reads files in blocks; block boundaries fall anywhere (inside a line, on a
/// newline, inside a line longer than the block) and must change neither the counts nor the
/// numbers of bad lines.
#[test]
fn blocks_do_not_change_counts_or_line_numbers() {
    use gtb_audit::load::{tally_bytes, tally_reader_in_blocks};
    let good: Vec<String> = std::fs::read_to_string(small_build())
        .unwrap()
        .lines()
        .take(12)
        .map(str::to_string)
        .collect();
    let mut text = String::new();
    for i in 0..30 {
        match i {
            7 => text.push_str("{\"task_id\": \"broken\"\n"),
            20 => text.push('\n'),
            26 => text.push_str("not json at all\n"),
            _ => {
                text.push_str(&good[i % good.len()]);
                text.push('\n');
            }
        }
    }
    let whole = tally_bytes(text.as_bytes()).report("f");
    assert_eq!(whole.tasks, 27);
    let longest = good.iter().map(String::len).max().unwrap();
    for block in [1, 50, 999, longest, longest + 1, 1 << 20] {
        let mut t = tally_reader_in_blocks(text.as_bytes(), block).unwrap();
        let lines: Vec<usize> = t.bad_lines().iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![8, 27], "block {block}");
        assert_eq!(t.report("f"), whole, "block {block}");
    }
}

/// The audit's reader runs on its own thread: a read that fails part way through the file is
/// the error of the whole pass, never a count of the lines read before it.
#[test]
fn a_read_error_part_way_is_an_error_not_a_short_count() {
    use gtb_audit::load::tally_reader_in_blocks;
    let line = std::fs::read_to_string(small_build()).unwrap();
    let line = line.lines().next().unwrap().to_string() + "\n";
    /// The bytes of its cursor, then an error.
    struct Failing(std::io::Cursor<Vec<u8>>);
    impl std::io::Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(std::io::Error::other("disk gone")),
                n => Ok(n),
            }
        }
    }
    for block in [1, 100, 1 << 20] {
        let good = line.repeat(40).into_bytes();
        let failing = Failing(std::io::Cursor::new(good));
        let err = tally_reader_in_blocks(failing, block);
        assert_eq!(err.err().map(|e| e.to_string()), Some("disk gone".into()));
    }
}
