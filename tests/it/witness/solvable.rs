//! Issue 21: tasks solvable in substance. Fixture tasks that once had no plan get one, every
//! task of 130-task builds on seeds 21 and 22 has a witness, a task without one carries a
//! proof counted apart, a transport must holds when one trip uses the mode, and stand-ins
//! score nothing unless credited.

use super::*;

/// The tasks of a fixture file under tests/fixtures.
fn fixture(name: &str) -> (PathBuf, Vec<Task>) {
    let path = crate::common::root().join("tests/fixtures").join(name);
    let tasks = read_tasks(&path).unwrap();
    (path, tasks)
}

/// task_001337 as the default build wrote it before issue 21 (深圳市 → 广州市, 东莞市,
/// 珠海市; User2 and User5 may not yield and must take 高铁, User3 may not yield and must take
/// 自驾): a plan, since a transport must holds when one trip uses the mode; both modes are in
/// it, and the scorer, the contract and the independent checker agree.
#[test]
fn issue21_task_001337_gets_a_plan() {
    let (path, tasks) = fixture("issue21_task_001337.jsonl");
    let t = &tasks[0];
    assert_eq!(t.task_id, "task_001337");
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let line = plan_line(&Solver::new(&res, &db), t);
    let plan = line
        .plan
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", line.reason));
    let modes: Vec<&str> = plan["days"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["city_segments"].as_array().unwrap())
        .filter(|s| s["type"] == "intercity_transport")
        .map(|s| s["transport_mode"].as_str().unwrap())
        .collect();
    assert!(
        modes.contains(&"高铁") && modes.contains(&"自驾"),
        "{modes:?}"
    );
    for firm in ["User2", "User3", "User5"] {
        assert!(line.compromises.iter().all(|c| c.user != firm), "{firm}");
    }
    let s = score_plan(t, plan, &line.compromises, &db);
    assert!(s.validity.valid && s.violations.is_empty(), "{s:?}");
    let dir = tempfile::tempdir().unwrap();
    let plans = dir.path().join("plans.jsonl");
    std::fs::write(&plans, plans_bytes(&[line])).unwrap();
    let (ok, text) = checker(&path, &plans);
    assert!(ok, "{text}");
}

/// 130-task builds on seeds 21 and 22: a witness for every task, published in test.jsonl's
/// order, counted in the manifest with the slots regenerated for one and the stand-ins.
#[test]
fn issue21_every_task_of_130_task_builds_on_seeds_21_and_22_has_a_witness() {
    for seed in [21, 22] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config_in(dir.path());
        cfg.run.n = 130;
        cfg.run.seed = seed;
        let s = build(&cfg, 2);
        let path = s.splits[0].path.clone();
        let tasks = read_tasks(&path).unwrap();
        let lines = read_plans(&path.with_file_name("plans.jsonl")).unwrap();
        assert_eq!(lines.len(), 130, "seed {seed}");
        for (t, l) in tasks.iter().zip(&lines) {
            assert_eq!(t.task_id, l.task_id, "seed {seed}");
            assert!(
                l.plan.is_some(),
                "seed {seed} {}: {:?}",
                t.task_id,
                l.reason
            );
        }
        let m: Value =
            serde_json::from_slice(&std::fs::read(cfg.run.out.join("manifest.json")).unwrap())
                .unwrap();
        let w = &m["witness"];
        assert_eq!(w["tasks_with_witness"], json!(130), "seed {seed}");
        assert!(w["regenerated_for_witness"].as_u64().is_some(), "{w}");
        assert!(w["stand_ins"]["share"].as_f64().is_some(), "{w}");
        assert_eq!(
            w["plans_jsonl_sha256"].as_str(),
            Some(
                gtb_core::digest::sha256_file(&path.with_file_name("plans.jsonl"))
                    .unwrap()
                    .as_str()
            )
        );
    }
}

/// No plan is a proof, not a give-up: a firm member's must_eat that no venue of the city
/// serves is shown infeasible (verdict `infeasible`, the reason names it), and `gtb solve`
/// counts proofs and exhausted searches apart.
#[test]
fn issue21_no_plan_is_a_proof_and_counted_apart() {
    let (dir, tasks, _) = built(12);
    let mut t = tasks[0].clone();
    let (user, entry) = t.user_preferences.iter_mut().next().unwrap();
    let user = user.clone();
    entry.compromisable = false;
    let city = t.metadata.cities[0].clone();
    entry
        .preference
        .city_specific_preferences
        .get_mut(&city)
        .unwrap()
        .food
        .must_eat = vec!["不存在的菜".into()];
    t.metadata.compromise_pattern.retain(|u| *u != user);
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let line = plan_line(&Solver::new(&res, &db), &t);
    assert_eq!(
        line.verdict.as_deref(),
        Some("infeasible"),
        "{:?}",
        line.reason
    );
    let reason = line.reason.unwrap();
    assert!(
        reason.contains("不存在的菜") && reason.contains("no restaurant there serves it"),
        "{reason}"
    );
    let file = dir.path().join("one.jsonl");
    std::fs::write(&file, gtb_core::pyjson::to_string(&t) + "\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gtb"))
        .current_dir(crate::common::root())
        .args(["solve", file.to_str().unwrap(), "--out"])
        .arg(dir.path().join("p.jsonl"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("0 of 1 tasks have a witness plan (1 proven infeasible, 0 search exhausted)"),
        "{text}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no plan (infeasible)"), "{err}");
}

/// The contract's transport rule is the release's: a must holds when one trip is by one of
/// its modes (the others may differ); it breaks only when no trip is.
#[test]
fn issue21_a_transport_must_holds_when_one_trip_uses_it() {
    let (t, plan, db) = a_witness();
    let modes: Vec<String> = plan["days"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["city_segments"].as_array().unwrap())
        .filter(|s| s["type"] == "intercity_transport")
        .map(|s| s["transport_mode"].as_str().unwrap().to_string())
        .collect();
    let first = t.user_preferences.keys().next().unwrap().clone();
    let with_must = |must: Vec<String>| {
        let mut t = t.clone();
        let tr = &mut t.user_preferences[&first]
            .preference
            .global_constraints
            .transport;
        tr.prefer.retain(|m| !must.contains(m));
        tr.avoid.retain(|m| !must.contains(m));
        tr.reject.retain(|m| !must.contains(m));
        tr.must = must;
        score_plan(&t, &plan, &[], &db)
            .violations
            .into_iter()
            .filter(|v| v.field == "global_constraints.transport.must")
            .count()
    };
    assert_eq!(with_must(vec![modes[0].clone()]), 0);
    let unused = ["飞机", "高铁", "火车", "自驾"]
        .into_iter()
        .find(|m| !modes.iter().any(|x| x == m))
        .expect("a mode the plan does not use");
    assert_eq!(with_must(vec![unused.to_string()]), 1);
    assert_eq!(with_must(vec![unused.to_string(), modes[0].clone()]), 0);
}

/// A stand-in is no name of a table of real venues: it resolves to nothing and scores nothing;
/// `--credit-stand-ins` scores against the split's world table (issue 28), which lists it.
#[test]
fn issue21_stand_ins_score_nothing_unless_credited() {
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let credited = PoiDb::with_stand_ins(&res);
    let label = gtb_plan::stand_in("烧烤", "北京市");
    assert_eq!(db.category(&label, "北京市"), None);
    assert_eq!(credited.category(&label, "北京市"), Some("烧烤"));
    // the release's rule has no category for an unknown label either
    assert_eq!(credited.category("烧烤（北京·示意）", "北京市"), None);
    let (_dir, _, path) = built(12);
    let plans = path.with_file_name("plans.jsonl");
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_gtb"))
            .current_dir(crate::common::root())
            .args(["score", path.to_str().unwrap(), plans.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(run(&[]).contains("Scored as the release does"));
    let text = run(&["--credit-stand-ins"]);
    assert!(text.contains("against the split's world table"), "{text}");
}
