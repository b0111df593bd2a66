//! `gtb export` (issue 14, item 4): Parquet and Hugging Face layouts, lossless rows,
//! deterministic bytes, checks on the input and the output folder. The load with the Python
//! `datasets` library is in `export_datasets.rs`.

use crate::common::*;
use gtb_ops::export::{ExportFormat, ExportOptions, export};
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// A build of `splits` (empty: one split of `n`) in `dir`; returns the output folder.
fn build_into(dir: &Path, n: usize, splits: &[(&str, usize)]) -> PathBuf {
    let mut cfg = config_in(dir);
    cfg.run.n = n;
    let req = gtb_build::BuildRequest {
        splits: splits.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
        ..gtb_build::BuildRequest::new(cfg.clone())
    };
    gtb_build::build(&req).expect("build");
    cfg.run.out
}

fn read_parquet(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

fn texts(ca: &StringChunked) -> Vec<String> {
    (0..ca.len())
        .map(|i| ca.get(i).expect("no nulls").to_string())
        .collect()
}

fn strings(df: &DataFrame, column: &str) -> Vec<String> {
    texts(df.column(column).unwrap().str().unwrap())
}

fn task_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn tree_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.strip_prefix(dir).unwrap().into(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn issue14_parquet_rows_keep_every_task_losslessly() {
    let dir = tempfile::tempdir().unwrap();
    let out = build_into(dir.path(), 40, &[]);
    let pq = dir.path().join("pq");
    let s = export(&ExportOptions::new(&out, ExportFormat::Parquet, &pq)).unwrap();
    assert_eq!(s.files.len(), 1);
    assert_eq!(s.files[0].path, "test.parquet");
    let df = read_parquet(&pq.join("test.parquet"));
    let names: Vec<&str> = df.get_column_names().iter().map(|c| c.as_str()).collect();
    let expected: Vec<&str> = gtb_export::columns::COLUMNS
        .iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, expected);
    let lines = task_lines(&out.join("test.jsonl"));
    assert_eq!(df.height(), lines.len());
    assert_eq!(
        strings(&df, "task_json"),
        lines,
        "the original lines, in order"
    );
    let prefs = strings(&df, "user_preferences");
    let cities = df.column("cities").unwrap().list().unwrap().clone();
    let users = df.column("users").unwrap().list().unwrap().clone();
    let sizes = df.column("group_size").unwrap().u32().unwrap().clone();
    for (i, line) in lines.iter().enumerate() {
        let t: gtb_core::task::Task = serde_json::from_str(line).unwrap();
        assert_eq!(prefs[i], gtb_core::pyjson::to_string(&t.user_preferences));
        let c = cities.get_as_series(i).unwrap();
        let c = texts(c.str().unwrap());
        assert_eq!(c, t.metadata.cities);
        let u = users.get_as_series(i).unwrap();
        let u = texts(u.str().unwrap());
        assert_eq!(u, t.user_preferences.keys().cloned().collect::<Vec<_>>());
        assert_eq!(sizes.get(i), Some(t.group_size() as u32));
    }
}

#[test]
fn issue14_hf_layout_is_deterministic_sharded_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let out = build_into(dir.path(), 65, &[("train", 45), ("test", 20)]);
    let opts = |to: &str| ExportOptions {
        rows_per_file: 20,
        ..ExportOptions::new(&out, ExportFormat::Hf, &dir.path().join(to))
    };
    let s = export(&opts("a")).unwrap();
    let paths: Vec<&str> = s.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "data/train-00000-of-00003.parquet",
            "data/train-00001-of-00003.parquet",
            "data/train-00002-of-00003.parquet",
            "data/test-00000-of-00001.parquet",
        ]
    );
    assert_eq!(
        s.files.iter().map(|f| f.rows).collect::<Vec<_>>(),
        [20, 20, 5, 20]
    );
    for f in &s.files {
        let p = dir.path().join("a").join(&f.path);
        assert_eq!(gtb_core::digest::sha256_file(&p).unwrap(), f.sha256);
        assert_eq!(read_parquet(&p).height() as u64, f.rows);
    }
    // same input, another run (with a different pool size for our side): the same bytes
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| export(&opts("b"))).unwrap();
    assert_eq!(
        tree_bytes(&dir.path().join("a")),
        tree_bytes(&dir.path().join("b"))
    );
    let card = std::fs::read_to_string(dir.path().join("a/README.md")).unwrap();
    let front = card.split("---\n").nth(1).expect("YAML front matter");
    for needle in [
        "license: \"cc-by-4.0\"",
        "language:\n- zh\n",
        "task_categories:\n- text-generation\n",
        "size_categories:\n- \"n<1K\"\n",
        "configs:\n- config_name: default\n  data_files:\n",
        "  - split: \"train\"\n    path: \"data/train-*.parquet\"\n",
        "  - split: \"test\"\n    path: \"data/test-*.parquet\"\n",
    ] {
        assert!(
            front.contains(needle),
            "front matter lacks {needle:?}:\n{front}"
        );
    }
    // provenance and the audit's headline, from the manifests and the rows
    let train_manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("train/manifest.json")).unwrap()).unwrap();
    for needle in [
        train_manifest["test_jsonl_sha256"]
            .as_str()
            .unwrap()
            .to_string(),
        train_manifest["stage_fingerprints"]["sample"]
            .as_str()
            .unwrap()
            .to_string(),
        format!("| seed | {} |", train_manifest["seed"]),
        "`gtb build --splits train=45,test=20`".to_string(),
        "| users with preferences |".to_string(),
        "| attractions |".to_string(),
    ] {
        assert!(card.contains(&needle), "card lacks {needle:?}");
    }
}

#[test]
fn issue14_reexport_replaces_the_previous_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = build_into(dir.path(), 30, &[]);
    let to = dir.path().join("hf");
    let small = ExportOptions {
        rows_per_file: 10,
        ..ExportOptions::new(&out, ExportFormat::Hf, &to)
    };
    assert_eq!(export(&small).unwrap().files.len(), 3);
    let s = export(&ExportOptions::new(&out, ExportFormat::Hf, &to)).unwrap();
    assert_eq!(s.files.len(), 1);
    let mut data: Vec<String> = std::fs::read_dir(to.join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    data.sort();
    assert_eq!(data, ["test-00000-of-00001.parquet"], "no stale shard left");
    let entries: Vec<String> = std::fs::read_dir(&to)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        entries.iter().all(|e| !e.starts_with(".gtb-export.tmp")),
        "{entries:?}"
    );
}

#[test]
fn issue14_export_refuses_bad_inputs_with_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let out = build_into(dir.path(), 12, &[]);
    let err = |o: &ExportOptions| format!("{:#}", export(o).unwrap_err());

    // a folder that is neither empty nor an earlier export
    let foreign = dir.path().join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let e = err(&ExportOptions::new(&out, ExportFormat::Hf, &foreign));
    assert!(e.contains("not empty") && e.contains("foreign"), "{e}");
    assert!(foreign.join("notes.txt").exists());

    // a licence that is not an id
    let e = err(&ExportOptions {
        license: "CC BY 4.0".into(),
        ..ExportOptions::new(&out, ExportFormat::Hf, &dir.path().join("x"))
    });
    assert!(e.contains("--license"), "{e}");

    // a malformed line: file and line number
    let bad = dir.path().join("bad/test.jsonl");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    let mut lines = task_lines(&out.join("test.jsonl"));
    lines[2] = lines[2].replace("\"query\"", "\"quer\"");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let e = err(&ExportOptions::new(
        &bad,
        ExportFormat::Parquet,
        &dir.path().join("y"),
    ));
    assert!(e.contains(&format!("{}:3:", bad.display())), "{e}");
    assert!(!dir.path().join("y/test.parquet").exists());

    // a task file that no longer matches its manifest
    let mut lines = task_lines(&out.join("test.jsonl"));
    lines.swap(0, 1);
    std::fs::write(out.join("test.jsonl"), lines.join("\n") + "\n").unwrap();
    let e = err(&ExportOptions::new(
        &out,
        ExportFormat::Hf,
        &dir.path().join("z"),
    ));
    assert!(e.contains("sha256") && e.contains("manifest.json"), "{e}");
    assert!(!dir.path().join("z/README.md").exists());

    // nothing to export
    let e = err(&ExportOptions::new(
        &foreign,
        ExportFormat::Hf,
        &dir.path().join("w"),
    ));
    assert!(e.contains("no task file"), "{e}");
}

#[test]
fn issue14_bare_jsonl_exports_without_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let out = build_into(dir.path(), 12, &[]);
    let bare = dir.path().join("mine/dev.jsonl");
    std::fs::create_dir_all(bare.parent().unwrap()).unwrap();
    std::fs::copy(out.join("test.jsonl"), &bare).unwrap();
    let to = dir.path().join("hf");
    let s = export(&ExportOptions::new(&bare, ExportFormat::Hf, &to)).unwrap();
    assert_eq!(s.splits[0].name, "dev");
    let card = std::fs::read_to_string(to.join("README.md")).unwrap();
    assert!(card.contains("  - split: \"dev\""));
    assert!(card.contains("No manifest.json beside the source file"));
}

#[test]
fn issue14_export_doc_lists_every_column() {
    let doc = std::fs::read_to_string(root().join("docs/EXPORT.md")).unwrap();
    for c in gtb_export::columns::COLUMNS {
        assert!(
            doc.contains(&format!("| `{}` |", c.name)),
            "docs/EXPORT.md lacks column {}",
            c.name
        );
    }
}
