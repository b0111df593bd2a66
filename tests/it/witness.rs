//! Issue 15: witness plans (`gtb solve`) and plan scoring (`gtb score`).

use crate::common::{build, config_in};
use gtb_core::task::Task;
use gtb_ops::solve::{plan_line, plans_bytes, read_plans, read_tasks, score_lines, solve_tasks};
use gtb_plan::PlanLine;
use gtb_score::{PoiDb, score_plan};
use gtb_solve::Solver;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

mod solvable;

/// A built split of `n` tasks: (its folder, the tasks, test.jsonl).
fn built(n: usize) -> (tempfile::TempDir, Vec<Task>, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = n;
    let s = build(&cfg, 2);
    let path = s.splits[0].path.clone();
    let tasks = read_tasks(&path).unwrap();
    (dir, tasks, path)
}

fn resources() -> gtb_resources::Resources {
    gtb_ops::load_resources(&config_in(Path::new("/nonexistent"))).unwrap()
}

/// The independent checker, with the POI table of the embedded snapshot (`gtb poi-table`).
fn checker(tasks: &Path, plans: &Path) -> (bool, String) {
    let table = plans.with_file_name("all_poi_by_city.json");
    let (bytes, _, _) = gtb_ops::score::poi_table_json(&PoiDb::from_resources(&resources()));
    std::fs::write(&table, bytes).unwrap();
    let out = Command::new("python3")
        .arg(crate::common::root().join("tests/check_witness.py"))
        .arg(tasks)
        .arg(plans)
        .arg("--poi")
        .arg(&table)
        .output()
        .expect("python3 is needed for the independent witness checker (tests/check_witness.py)");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Solving is part of the build (`[solve] enabled`, the default): every task of a 130-task
/// build has a witness in `plans.jsonl` (tasks without one were regenerated or replaced, and
/// counted under check `witness`), the scorer finds every plan valid and within the contract,
/// the independent checker agrees, and `gtb score` exits 0.
#[test]
fn issue15_witnesses_pass_the_scorer_and_the_independent_checker() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = 130;
    assert!(cfg.solve.enabled, "solving is on by default");
    let s = build(&cfg, 2);
    let path = s.splits[0].path.clone();
    let tasks = read_tasks(&path).unwrap();
    assert_eq!(tasks.len(), 130);
    let plans = path.with_file_name("plans.jsonl");
    let lines = read_plans(&plans).unwrap();
    let ids = |v: Vec<&String>| v.into_iter().cloned().collect::<Vec<String>>();
    assert_eq!(
        ids(lines.iter().map(|l| &l.task_id).collect()),
        ids(tasks.iter().map(|t| &t.task_id).collect()),
        "plans.jsonl follows test.jsonl"
    );
    let db = PoiDb::from_resources(&resources());
    for (t, l) in tasks.iter().zip(&lines) {
        let plan = l.plan.as_ref().unwrap_or_else(|| {
            panic!("{}: no witness ({:?})", t.task_id, l.reason);
        });
        let s = score_plan(t, plan, &l.compromises, &db);
        assert!(s.validity.valid, "{}: {:?}", t.task_id, s.validity.issues);
        assert!(s.violations.is_empty(), "{}: {:?}", t.task_id, s.violations);
        let scores = l.scores.as_ref().unwrap();
        assert_eq!(scores["group_utility"], json!(s.utility.total_score));
        assert!(
            scores["upper_bound"].as_i64().unwrap() >= s.utility.total_score,
            "{}",
            t.task_id
        );
        for c in &l.compromises {
            assert!(
                t.user_preferences[&c.user].compromisable,
                "{}: {c:?}",
                t.task_id
            );
        }
    }
    // the drops for want of a witness are counted in the validation report
    let report: Value =
        serde_json::from_slice(&std::fs::read(cfg.run.reports.join("report.json")).unwrap())
            .unwrap();
    assert!(
        report.to_string().contains("\"witness\""),
        "the report counts no witness drop: {report}"
    );
    let figures = std::fs::read_to_string(cfg.run.reports.join("witness.md")).unwrap();
    assert!(figures.contains("| all | 130 | 130 |"), "{figures}");
    let (ok, text) = checker(&path, &plans);
    assert!(ok, "the independent checker disagrees:\n{text}");
    assert!(text.contains("checked 130 plan(s)"), "{text}");
    let out = Command::new(env!("CARGO_BIN_EXE_gtb"))
        .current_dir(crate::common::root())
        .args([
            "score",
            path.to_str().unwrap(),
            plans.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["valid"], json!(130));
    assert_eq!(report["breaking"], json!(0));
}

/// `[solve]` off: no witness is required, no plans are published, and a build with it on
/// publishes the same kind of task file beside its plans (the golden sha256 pins the default
/// build's bytes: tests/it/golden.rs).
#[test]
fn issue15_solve_off_leaves_the_build_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.solve.enabled = false;
    cfg.run.n = 60;
    build(&cfg, 2);
    assert!(cfg.run.out.join("test.jsonl").exists());
    assert!(!cfg.run.out.join("plans.jsonl").exists());
    assert!(!cfg.run.reports.join("witness.md").exists());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(cfg.run.out.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest.get("witness").is_none());
}

#[test]
fn issue15_unsolvable_task_gets_no_plan_and_a_reason_naming_the_budget() {
    let (_dir, tasks, _) = built(20);
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let solver = Solver::new(&res, &db);
    let mut t = tasks[0].clone();
    for e in t.user_preferences.values_mut() {
        e.compromisable = false;
        e.preference.global_constraints.avg_budget = 100;
    }
    t.metadata.compromise_pattern.clear();
    let line = plan_line(&solver, &t);
    assert!(line.plan.is_none());
    // a proof: the budget is below a lower bound of every trip
    assert_eq!(line.verdict.as_deref(), Some("infeasible"));
    let reason = line.reason.unwrap();
    let first = t.user_preferences.keys().next().unwrap();
    assert!(
        reason.contains(&format!(
            "the budget of {first} (100 CNY) is below the cheapest possible trip"
        )),
        "{reason}"
    );
    assert!(
        reason.contains("fares") && reason.contains("cheapest hotels"),
        "{reason}"
    );
}

#[test]
fn issue15_solving_is_deterministic_across_threads() {
    let (_dir, tasks, _) = built(40);
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let solver = Solver::new(&res, &db);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| plans_bytes(&solve_tasks(&solver, &tasks)))
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn issue27_scouting_skips_only_frames_that_cannot_be_finalists() {
    // a frame whose floor (the breaches and compromises its transport and cheapest hotels
    // force) ranks below the finalists so far is not scouted: the witnesses are those of
    // scouting every frame
    let (_dir, tasks, _) = built(130);
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let mut solver = Solver::new(&res, &db);
    let pruned = plans_bytes(&solve_tasks(&solver, &tasks));
    solver.effort.prune = false;
    let every = plans_bytes(&solve_tasks(&solver, &tasks));
    assert!(pruned == every, "skipping frames changed a witness");
}

/// A task's instance and its usable mode combinations, unless a proof rules the task out.
fn searchable<'a>(
    task: &'a Task,
    res: &'a gtb_resources::Resources,
    db: &'a PoiDb,
) -> Option<(
    gtb_solve::instance::Instance<'a>,
    Vec<gtb_solve::proof::Options>,
)> {
    use gtb_solve::{instance::Instance, proof};
    let inst = Instance::new(task, res, db).ok()?;
    let usable = proof::usable_options(&inst).ok()?;
    let combos = proof::transport_combos(&inst, &usable).ok()?;
    Some((inst, combos))
}

#[test]
fn issue27_a_frame_floor_and_ceiling_bound_every_searched_plan() {
    // scouting skips a frame when its floor and utility ceiling rank below the finalists: no
    // plan of the frame may break less than the floor (its transport, its budget at the
    // cheapest hotels, the must items none of its pieces can serve), and the ceiling must bound
    // the utility of any plan that breaks no more, here every frame's searched plan (the
    // scout's and a deeper search's)
    use gtb_solve::{bound, eval, frame, proof, search::Search, sims::Sims};
    let (_dir, tasks, _) = built(60);
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let (mut at_floor, mut below, mut unmeetable) = (0, 0, 0);
    for task in &tasks {
        let Some((inst, combos)) = searchable(task, &res, &db) else {
            continue;
        };
        let tops = bound::Tops::new(&inst);
        let mut sims = Sims::default();
        for nights in frame::allocations(inst.days - 1, inst.dest.len()) {
            for f in combos
                .iter()
                .filter_map(|c| frame::Frame::new(&inst, &nights, c))
            {
                let (floor, ceiling) = (eval::floor(&inst, &f), bound::ceiling(&inst, &f, &tops));
                let places = (0..inst.n()).flat_map(|i| (0..inst.dest.len()).map(move |d| (i, d)));
                unmeetable += places
                    .filter(|&(i, d)| proof::unmeetable(&inst, &f, i, d) != (0, 0))
                    .count();
                for budget in [600, 4000] {
                    let st = Search::new(&inst, &f, budget, &mut sims).run();
                    assert!(
                        (-st.eval.breach, -st.eval.compromises) <= (-floor.0, -floor.1),
                        "{}: a searched plan breaks less ({}, {}) than its frame's floor {floor:?}",
                        task.task_id,
                        st.eval.breach,
                        st.eval.compromises
                    );
                    if (st.eval.breach, st.eval.compromises) != floor {
                        continue;
                    }
                    at_floor += 1;
                    assert!(
                        st.eval.total <= ceiling,
                        "{}: a plan at the floor has utility {} above the ceiling {ceiling}",
                        task.task_id,
                        st.eval.total
                    );
                    below += usize::from(st.eval.total < ceiling);
                }
            }
        }
    }
    assert!(
        at_floor > 100,
        "only {at_floor} plans at their frame's floor"
    );
    assert!(below > 0);
    // the must items a frame cannot serve are part of some floors
    assert!(unmeetable > 0, "no frame has a must item it cannot serve");
    eprintln!(
        "{unmeetable} (member, destination) pairs of frames with must items they cannot serve"
    );
}

#[test]
fn issue27_a_deep_search_that_replays_its_scout_ends_as_a_fresh_one() {
    // a finalist's deep search replays its scout's trail: it must reach the same plan with the
    // same budget left as the same search run from scratch, for every frame and budget pair
    use gtb_solve::{frame, search::Search, sims::Sims};
    let (_dir, tasks, _) = built(40);
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let (mut searches, mut replayed) = (0, 0);
    for task in &tasks {
        let Some((inst, combos)) = searchable(task, &res, &db) else {
            continue;
        };
        let (mut shared, mut alone) = (Sims::default(), Sims::default());
        for nights in frame::allocations(inst.days - 1, inst.dest.len()) {
            for f in combos
                .iter()
                .filter_map(|c| frame::Frame::new(&inst, &nights, c))
            {
                for (short, long) in [(600, 4000), (90, 700), (250, 250)] {
                    let (_, trail) = Search::new(&inst, &f, short, &mut shared).run_with_trail();
                    let mut fresh = Search::new(&inst, &f, long, &mut alone);
                    let want = fresh.run();
                    let mut again = Search::new(&inst, &f, long, &mut shared).replaying(trail);
                    let got = again.run();
                    let same = got.hotels == want.hotels
                        && got.programs == want.programs
                        && got.eval.key() == want.eval.key()
                        && again.budget == fresh.budget;
                    assert!(same, "{}: the replay ended elsewhere", task.task_id);
                    searches += 1;
                    replayed += again.replayed();
                }
            }
        }
    }
    assert!(searches > 300, "only {searches} searches");
    assert!(
        replayed > 5 * searches,
        "only {replayed} steps replayed in {searches} searches"
    );
}

#[test]
fn issue27_a_run_from_a_marked_prefix_ends_as_a_run_from_the_start() {
    // a candidate runs from the mark of the last slot it shares with the state's program:
    // every edit of every searched program must simulate as a run from the start does,
    // those that stop at a slot that does not fit included
    use gtb_solve::sim::{Item, PieceEval, Prefix, Slot, simulate, simulate_after};
    use gtb_solve::{frame, search::Search, sims::Sims};
    let (_dir, tasks, _) = built(30);
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let same = |a: &PieceEval, b: &PieceEval| {
        (a.ok, a.members, a.split, a.stand_ins) == (b.ok, b.members, b.split, b.stand_ins)
    };
    let (mut fit, mut not) = (0, 0);
    for task in &tasks {
        let Some((inst, combos)) = searchable(task, &res, &db) else {
            continue;
        };
        let nights = &frame::allocations(inst.days - 1, inst.dest.len())[0];
        let Some(f) = combos
            .iter()
            .find_map(|c| frame::Frame::new(&inst, nights, c))
        else {
            continue;
        };
        let st = Search::new(&inst, &f, 600, &mut Sims::default()).run();
        for (p, base) in st.programs.iter().enumerate() {
            let mut prefix = Prefix::default();
            prefix.record(&inst, &f, p, base);
            let sights = inst.dest[f.pieces[p].dest].sights.len().min(5) as u16;
            let mut edits: Vec<(usize, Vec<Slot>)> = Vec::new();
            for k in 0..=base.len() {
                for s in 0..sights {
                    let mut e = base.clone();
                    e.insert(k, Slot::joint(inst.all, Item::Sight(s)));
                    edits.push((k, e.clone()));
                    e.insert(k, Slot::joint(inst.all, Item::Brief(s)));
                    edits.push((k, e));
                }
                if k < base.len() {
                    let mut e = base.clone();
                    e.remove(k);
                    edits.push((k, e));
                }
                if k > 0 && k < base.len() {
                    let mut e = base.clone();
                    e.swap(k - 1, k);
                    edits.push((k - 1, e));
                }
            }
            for (k, e) in edits {
                let want = simulate(&inst, &f, p, &e);
                let got = simulate_after(&inst, &f, p, &e, &prefix, k);
                assert!(same(&got, &want), "{}: piece {p}, slot {k}", task.task_id);
                if want.ok { fit += 1 } else { not += 1 }
            }
        }
    }
    assert!(fit > 500 && not > 500, "{fit} edits fit, {not} do not");
}

/// The first witness of a small build, as JSON, with its task.
fn a_witness() -> (Task, Value, PoiDb) {
    let (_dir, tasks, _) = built(20);
    let res = resources();
    let db = PoiDb::from_resources(&res);
    let solver = Solver::new(&res, &db);
    for t in tasks {
        let l = plan_line(&solver, &t);
        if let (Some(p), true) = (l.plan, l.compromises.is_empty()) {
            return (t, p, db);
        }
    }
    panic!("no witness without compromises among 20 tasks");
}

fn issues(t: &Task, plan: &Value, db: &PoiDb) -> Vec<&'static str> {
    score_plan(t, plan, &[], db)
        .validity
        .issues
        .iter()
        .map(|i| i.kind)
        .collect()
}

/// Every (day, segment, activity) position of an activity of `kind`.
fn find(plan: &Value, kind: &str) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    for (d, day) in plan["days"].as_array().unwrap().iter().enumerate() {
        for (s, seg) in day["city_segments"].as_array().unwrap().iter().enumerate() {
            if let Some(acts) = seg["activities"].as_array() {
                for (a, act) in acts.iter().enumerate() {
                    if act["type"] == kind {
                        out.push((d, s, a));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn issue15_scorer_reports_each_validity_rule() {
    let (t, plan, db) = a_witness();
    assert!(issues(&t, &plan, &db).is_empty());
    let act = |p: &Value, (d, s, a): (usize, usize, usize)| -> Value {
        p["days"][d]["city_segments"][s]["activities"][a].clone()
    };
    let acts_mut = |p: &mut Value, d: usize, s: usize| -> Vec<Value> {
        p["days"][d]["city_segments"][s]["activities"]
            .as_array()
            .unwrap()
            .clone()
    };
    // 1: a city change without intercity transport
    let mut p = plan.clone();
    p["days"][0]["city_segments"]
        .as_array_mut()
        .unwrap()
        .remove(0);
    let first_city = p["days"][0]["city_segments"][0]["city"].clone();
    p["days"][0]["city_segments"].as_array_mut().unwrap().insert(
        0,
        json!({"city": "某地", "activities": [{"type": "rest", "start_time": "06:00", "end_time": "06:30", "participants": ["All"]}]}),
    );
    assert!(first_city.is_string());
    assert!(issues(&t, &p, &db).contains(&"missing_intercity_transport"));
    // 2: the first night's hotel removed
    let mut p = plan.clone();
    let h = find(&p, "hotel")[0];
    let mut acts = acts_mut(&mut p, h.0, h.1);
    acts.remove(h.2);
    p["days"][h.0]["city_segments"][h.1]["activities"] = Value::from(acts);
    assert!(issues(&t, &p, &db).contains(&"missing_hotel"));
    // 3: an attraction ending before it starts
    let mut p = plan.clone();
    let a = find(&p, "attraction")[0];
    let x = act(&p, a);
    p["days"][a.0]["city_segments"][a.1]["activities"][a.2]["end_time"] = x["start_time"].clone();
    let found = issues(&t, &p, &db);
    assert!(found.contains(&"invalid_time_range"), "{found:?}");
    // 4 and 7: the same activity twice for everyone
    let mut p = plan.clone();
    let mut acts = acts_mut(&mut p, a.0, a.1);
    acts.insert(a.2, acts[a.2].clone());
    p["days"][a.0]["city_segments"][a.1]["activities"] = Value::from(acts);
    let found = issues(&t, &p, &db);
    assert!(
        found.contains(&"time_overlap") && found.contains(&"timeline_order_violation"),
        "{found:?}"
    );
    // 5: an attraction with opening hours visited at 03:00
    let mut p = plan.clone();
    let timed = find(&p, "attraction").into_iter().find(|&(d, s, a)| {
        let (day, seg) = (&p["days"][d], &p["days"][d]["city_segments"][s]);
        db.windows(
            seg["activities"][a]["location"].as_str().unwrap(),
            seg["city"].as_str().unwrap(),
            day["date"].as_str().unwrap(),
        )
        .is_some_and(|w| !w.is_empty())
    });
    if let Some((d, s, a)) = timed {
        p["days"][d]["city_segments"][s]["activities"][a]["start_time"] = json!("03:00");
        p["days"][d]["city_segments"][s]["activities"][a]["end_time"] = json!("03:30");
        assert!(issues(&t, &p, &db).contains(&"outside_opening_hours"));
    }
    // 6: the transfer to the first attraction removed
    let mut p = plan.clone();
    let tr = find(&p, "intracity_transport")[1];
    let mut acts = acts_mut(&mut p, tr.0, tr.1);
    acts.remove(tr.2);
    p["days"][tr.0]["city_segments"][tr.1]["activities"] = Value::from(acts);
    assert!(issues(&t, &p, &db).contains(&"missing_intracity_transport"));
    // 8: a meal without avg_cost
    let mut p = plan.clone();
    let f = find(&p, "food")[0];
    p["days"][f.0]["city_segments"][f.1]["activities"][f.2]
        .as_object_mut()
        .unwrap()
        .remove("avg_cost");
    assert_eq!(issues(&t, &p, &db), vec!["missing_avg_cost"]);
    // 9: an unknown participant, an empty list, a string
    for bad in [json!(["User9"]), json!([]), json!("All")] {
        let mut p = plan.clone();
        p["days"][f.0]["city_segments"][f.1]["activities"][f.2]["participants"] = bad.clone();
        assert!(
            issues(&t, &p, &db).contains(&"invalid_participants"),
            "{bad}"
        );
    }
    // not a plan at all
    let s = score_plan(&t, &json!({"days": []}), &[], &db);
    assert!(!s.is_plan && !s.validity.valid);
}

#[test]
fn issue15_score_cli_exits_non_zero_on_an_invalid_plan() {
    let (t, mut plan, _) = a_witness();
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        gtb_ops::sinks::release_bytes(std::slice::from_ref(&t)),
    )
    .unwrap();
    plan["days"][0]["city_segments"][0]
        .as_object_mut()
        .unwrap()
        .remove("avg_cost");
    let line = json!({"task_id": t.task_id, "plan": plan, "compromises": []});
    let plans = dir.path().join("plans.jsonl");
    std::fs::write(&plans, format!("{line}\n")).unwrap();
    assert_eq!(read_plans(&plans).unwrap().len(), 1);
    let out = Command::new(env!("CARGO_BIN_EXE_gtb"))
        .current_dir(crate::common::root())
        .args(["score", tasks.to_str().unwrap(), plans.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("missing_avg_cost"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 of 1 plans are invalid"));
    // a compromise by a member who may not yield breaks the witness contract
    let firm = t
        .user_preferences
        .iter()
        .find(|(_, e)| !e.compromisable)
        .map(|(u, _)| u.clone());
    if let Some(u) = firm {
        let db = PoiDb::from_resources(&resources());
        let l: Vec<PlanLine> = vec![serde_json::from_value(json!({
            "task_id": t.task_id, "plan": plan, "compromises": [{"user": u, "path": "global_constraints.avg_budget", "value": 99999}]
        }))
        .unwrap()];
        let r = score_lines(std::slice::from_ref(&t), &l, &db);
        assert_eq!(r.breaking, 1);
    }
}

/// `gtb build --no-witness` is `[solve] enabled = false` from the command line: the task file
/// without plans; the same build without the flag publishes its plans.
#[test]
fn issue23_no_witness_flag_turns_the_witness_search_off() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &str, extra: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_gtb"))
            .current_dir(dir.path())
            .args(["build", "--n", "12", "--seed", "4", "--out", out])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        dir.path().join(out)
    };
    let off = run("off", &["--no-witness"]);
    assert!(off.join("test.jsonl").exists());
    assert!(!off.join("plans.jsonl").exists());
    // issue 28: the world is built on the witness plans
    assert!(!off.join("sandbox_cache").exists());
    let on = run("on", &[]);
    assert!(on.join("plans.jsonl").exists());
    assert!(on.join("sandbox_cache/search_poi_cache.json").exists());
}
