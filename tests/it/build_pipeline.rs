//! Whole-pipeline tests: format, quotas, determinism, stage reuse.

use crate::common::*;
use gtb_build::BuildStage;
use gtb_core::task::Task;
use gtb_pipeline::{Change, DirtyReason, Freshness, InputChange};

fn lines(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n') && !text.ends_with("\n\n"));
    text.lines().map(String::from).collect()
}

#[test]
fn default_build_is_release_shaped() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_in(dir.path());
    let s = build(&cfg, 2);
    let out = &s.splits[0].path;
    let ls = lines(out);
    assert_eq!(ls.len(), 650);
    let mut classes = std::collections::BTreeMap::new();
    let mut ids = std::collections::HashSet::new();
    for l in &ls {
        let t: Task = serde_json::from_str(l).unwrap();
        // re-serialising gives the same bytes: key order, separators, number types
        assert_eq!(&gtb_core::pyjson::to_string(&t), l);
        assert!(ids.insert(t.task_id.clone()));
        assert!(t.task_id.starts_with("task_") && t.task_id.len() == 11);
        *classes.entry(t.difficulty_type.clone()).or_insert(0) += 1;
        let n = t.group_size();
        assert!(
            t.query.ends_with(&format!("，{}人的旅行计划", n)),
            "{}",
            t.query
        );
        assert!(t.context.starts_with(&format!(
            "出发城市：{}；出行日期：{}；团队类型：{}（共{}人）",
            t.metadata.departure_city, t.time, t.metadata.group_name, n
        )));
        let comp: Vec<&String> = t
            .user_preferences
            .iter()
            .filter(|(_, e)| e.compromisable)
            .map(|(u, _)| u)
            .collect();
        let mut a: Vec<&String> = t.metadata.compromise_pattern.iter().collect();
        let mut b = comp.clone();
        a.sort();
        b.sort();
        assert_eq!(
            a, b,
            "compromise_pattern lists exactly the compromisable members"
        );
        assert!(!a.is_empty());
        assert_eq!(t.initial_messages.len(), t.user_preferences.len());
        for e in t.user_preferences.values() {
            let g = &e.preference.global_constraints;
            assert!(g.avg_budget % 100 == 0 && g.avg_budget >= 500);
            let mut modes: Vec<&String> = g
                .transport
                .must
                .iter()
                .chain(&g.transport.prefer)
                .chain(&g.transport.avoid)
                .chain(&g.transport.reject)
                .collect();
            let before = modes.len();
            modes.sort();
            modes.dedup();
            assert_eq!(before, modes.len(), "a mode in two buckets");
            assert!(
                g.hotel_preference
                    .prefer
                    .iter()
                    .all(|h| !g.hotel_preference.avoid.contains(h))
            );
            let keys: Vec<&String> = e.preference.city_specific_preferences.keys().collect();
            assert_eq!(keys, t.metadata.cities.iter().collect::<Vec<_>>());
            for c in e.preference.city_specific_preferences.values() {
                assert!((1..=2).contains(&c.attractions.must_visit.len()));
            }
        }
        for m in &t.initial_messages {
            for field in [
                "must_visit",
                "avg_budget",
                "reject",
                "prefer_eat",
                "global_constraints",
            ] {
                assert!(
                    !m.content.contains(field),
                    "field name in message: {}",
                    m.content
                );
            }
        }
    }
    assert_eq!(classes["easy"], 200);
    assert_eq!(classes["medium"], 250);
    assert_eq!(classes["hard"], 200);
    // manifest and reports
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.run.out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["test_jsonl_sha256"].as_str().unwrap(),
        s.splits[0].sha256
    );
    assert_eq!(manifest["counts"]["tasks"], 650);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.run.reports.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(
        report["written"].as_u64().unwrap() + report["dropped"].as_u64().unwrap(),
        report["generated"].as_u64().unwrap()
    );
    assert!(cfg.run.reports.join("report.md").exists());
}

#[test]
fn same_seed_same_bytes_for_any_thread_count_and_other_seed_differs() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(&dir.path().join("a"));
    cfg.run.n = 120;
    let a = build(&cfg, 1);
    let mut cfg_b = config_in(&dir.path().join("b"));
    cfg_b.run.n = 120;
    let b = build(&cfg_b, 2);
    assert_eq!(
        std::fs::read(&a.splits[0].path).unwrap(),
        std::fs::read(&b.splits[0].path).unwrap()
    );
    let mut cfg_c = config_in(&dir.path().join("c"));
    cfg_c.run.n = 120;
    cfg_c.run.seed = 2;
    let c = build(&cfg_c, 2);
    assert_ne!(a.splits[0].sha256, c.splits[0].sha256);
}

#[test]
fn rerun_reuses_fresh_stages_and_names_why_a_stale_one_reruns() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = 40;
    let first = build(&cfg, 2);
    assert!(
        first
            .stages
            .iter()
            .all(|r| matches!(r.freshness, Freshness::Dirty(_)))
    );
    let second = build(&cfg, 2);
    assert!(
        second.stages.iter().all(|r| r.freshness.is_fresh()),
        "{:?}",
        second.stages
    );
    assert_eq!(first.splits[0].sha256, second.splits[0].sha256);
    cfg.generate.conflicts.food = 0.5;
    let third = build(&cfg, 2);
    let d = |stage| third.freshness("test", stage).unwrap().clone();
    assert_eq!(d(BuildStage::Sample), Freshness::Fresh);
    assert_eq!(
        d(BuildStage::Generate),
        Freshness::Dirty(DirtyReason::InputsChanged(vec![InputChange {
            key: "config generate".into(),
            how: Change::Changed,
        }]))
    );
    let validate = d(BuildStage::Validate);
    assert!(
        matches!(
            &validate,
            Freshness::Dirty(DirtyReason::InputsChanged(c)) if c.iter().any(|c| c.key == "upstream generate")
        ),
        "{validate:?}"
    );
}

#[test]
fn splits_share_no_skeleton_signature() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_in(dir.path());
    let req = gtb_build::BuildRequest {
        splits: vec![("test".into(), 60), ("train".into(), 300)],
        holdout_cities: 8,
        ..gtb_build::BuildRequest::new(cfg.clone())
    };
    let s = gtb_build::build(&req).unwrap();
    let read = |p: &std::path::Path| -> std::collections::HashSet<String> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| gtb_build::signature_of(&serde_json::from_str(l).unwrap()))
            .collect()
    };
    let test = read(&s.splits[0].path);
    let train = read(&s.splits[1].path);
    assert_eq!(s.splits[1].tasks, 300);
    assert!(test.is_disjoint(&train));
    // held-out cities never appear in the training split
    let res = gtb_ops::load_resources(&cfg).unwrap();
    let held: Vec<String> = gtb_sample::Sampler::held_out_cities(&cfg, &res, 8)
        .iter()
        .map(|&c| res.city(c).name.clone())
        .collect();
    assert_eq!(held.len(), 8);
    for l in std::fs::read_to_string(&s.splits[1].path).unwrap().lines() {
        let t: Task = serde_json::from_str(l).unwrap();
        assert!(
            t.metadata.cities.iter().all(|c| !held.contains(c)),
            "{:?} in train",
            t.metadata.cities
        );
    }
}

/// Outside the repository (no gtb.toml, no raw_data/) the binary builds from the data embedded
/// at compile time, says so, and writes the same bytes as a build from the repository root.
#[test]
fn builds_anywhere_from_the_embedded_data() {
    let run = |cwd: &std::path::Path, out: &std::path::Path| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_gtb"))
            .current_dir(cwd)
            .args(["build", "--n", "30", "--seed", "5", "--out"])
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let elsewhere = tempfile::tempdir().unwrap();
    let here = tempfile::tempdir().unwrap();
    let note = run(elsewhere.path(), &elsewhere.path().join("out"));
    assert!(
        note.contains("using the default data embedded in gtb"),
        "{note}"
    );
    let quiet = run(&root(), &here.path().join("out"));
    assert!(!quiet.contains("embedded"), "{quiet}");
    assert_eq!(
        std::fs::read(elsewhere.path().join("out/test.jsonl")).unwrap(),
        std::fs::read(here.path().join("out/test.jsonl")).unwrap()
    );
}

/// `--explain` after a build of several splits: later splits depend on earlier splits'
/// signatures, which explain reads from the fresh validate stage instead of assuming none.
#[test]
fn issue14_01_explain_of_fresh_splits_reuses_every_stage() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_in(dir.path());
    let req = gtb_build::BuildRequest {
        splits: vec![("test".into(), 30), ("train".into(), 60)],
        ..gtb_build::BuildRequest::new(cfg)
    };
    gtb_build::build(&req).unwrap();
    let explain = gtb_build::BuildRequest {
        explain: true,
        ..req.clone()
    };
    let s = gtb_build::build(&explain).unwrap();
    assert_eq!(s.stages.len(), 10);
    assert!(
        s.stages.iter().all(|r| r.freshness.is_fresh()),
        "{:?}",
        s.stages
    );
    assert!(s.splits.is_empty());
}

/// Issue 27: a restaurant known from general knowledge only grounds no food preference value.
/// Every food value of a built task is a dish, a cuisine or the category of a restaurant a
/// cited source names (`Food::grounds_values`), and some city has a restaurant category that
/// only general-knowledge restaurants serve, which no task may then name.
#[test]
fn issue27_food_values_come_from_grounding_entries_only() {
    use gtb_resources::{Food, FoodKind};
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = 120;
    cfg.solve.enabled = false;
    let res = gtb_resources::load(&cfg.paths).unwrap();
    let value = |f: &Food| match f.kind {
        FoodKind::Dish => f.name.clone(),
        FoodKind::Cuisine | FoodKind::Restaurant => f.category.clone(),
    };
    let values = |c: usize, grounding: bool| -> std::collections::BTreeSet<String> {
        let foods = res.food[c].iter();
        foods
            .filter(|f| f.grounds_values() == grounding)
            .map(value)
            .collect()
    };
    let ungrounded = (0..res.cities.len())
        .filter(|&c| {
            values(c, false)
                .difference(&values(c, true))
                .next()
                .is_some()
        })
        .count();
    assert!(
        ungrounded > 0,
        "no city has a value only general knowledge serves"
    );
    let s = build(&cfg, 2);
    for l in lines(&s.splits[0].path) {
        let t: Task = serde_json::from_str(&l).unwrap();
        for e in t.user_preferences.values() {
            for (city, p) in &e.preference.city_specific_preferences {
                let c = res.cities.iter().position(|x| x.name == *city).unwrap();
                let grounded = values(c, true);
                let f = &p.food;
                for v in [&f.must_eat, &f.prefer_eat, &f.avoid_eat, &f.reject_eat] {
                    for v in v {
                        assert!(grounded.contains(v), "{} {city}: {v}", t.task_id);
                    }
                }
            }
        }
    }
}
