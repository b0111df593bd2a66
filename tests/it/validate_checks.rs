//! `gtb validate` and the validators (issue 5's evidence).

use crate::common::*;
use gtb_core::task::Task;
use std::path::Path;

#[test]
fn validate_flags_unknown_poi_contradiction_and_impossible_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = 30;
    let s = build(&cfg, 2);
    let path = &s.splits[0].path;
    // a clean build passes
    let (n, findings) = gtb_ops::validate_file(&cfg, path).unwrap();
    assert_eq!(n, 30);
    assert!(
        findings.is_empty(),
        "{:?}",
        findings.iter().take(3).collect::<Vec<_>>()
    );
    // break one task three ways
    let text = std::fs::read_to_string(path).unwrap();
    let mut tasks: Vec<Task> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let task_id = tasks[0].task_id.clone();
    let t = &mut tasks[0];
    let (user, entry) = t.user_preferences.iter_mut().next().unwrap();
    let user = user.clone();
    let city = t.metadata.cities[0].clone();
    let cp = entry
        .preference
        .city_specific_preferences
        .get_mut(&city)
        .unwrap();
    cp.attractions.must_visit.push("霍格沃茨魔法学校".into());
    cp.food.must_eat.push("黄油啤酒".into());
    let must = cp.attractions.must_visit[0].clone();
    cp.attractions.reject_visit = vec![must.clone()];
    entry.preference.global_constraints.avg_budget = 100;
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, gtb_ops::sinks::release_bytes(&tasks)).unwrap();
    let (_, findings) = gtb_ops::validate_file(&cfg, &bad).unwrap();
    let msgs: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
    let has = |check: &str, item: &str| {
        findings
            .iter()
            .any(|f| f.check == check && f.user == user && f.item.contains(item))
    };
    assert!(has("poi_names", "霍格沃茨魔法学校"), "{msgs:?}");
    assert!(has("poi_names", "黄油啤酒"), "{msgs:?}");
    assert!(has("contradictions", &must), "{msgs:?}");
    assert!(has("certificate.budget", "100"), "{msgs:?}");
    assert!(
        msgs.iter()
            .any(|m| m.contains(&task_id) && m.contains(&format!("city={city}")))
    );
}

#[test]
#[cfg_attr(
    not(has_official_examples),
    ignore = "needs ../shared/spec/official_examples.jsonl (absent)"
)]
fn issue12_official_examples_pass_reachability_and_the_certificate() {
    // task_004329 returns 万宁 -> 长春 by air: a connection at a hub, not a missing route
    let Some(shared) = shared() else { return };
    let cfg = crate::common::config_in(Path::new("/nonexistent"));
    let (n, findings) =
        gtb_ops::validate_file(&cfg, &shared.join("spec/official_examples.jsonl")).unwrap();
    assert_eq!(n, 3);
    let trip: Vec<String> = findings
        .iter()
        .map(|f| f.to_string())
        .filter(|m| m.contains("[certificate") || m.contains("[reachability"))
        .collect();
    assert!(trip.is_empty(), "{trip:?}");
}

#[test]
#[cfg_attr(
    not(has_official_examples),
    ignore = "needs ../shared/spec/official_examples.jsonl (absent)"
)]
fn official_examples_reserialise_byte_identically() {
    let Some(shared) = shared() else { return };
    let p = shared.join("spec/official_examples.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    for line in text.lines() {
        let t: Task = serde_json::from_str(line).unwrap();
        assert_eq!(gtb_core::pyjson::to_string(&t), line);
    }
}

/// Issue 21, the paper's stage-4 rule: a must mode no leg can use within a travel day (a
/// 30-hour train), or one that cannot be met together with the must modes of the firm members
/// before (three modes, two legs), makes the member compromisable; a must the route can meet
/// leaves them firm.
#[test]
fn issue21_an_infeasible_must_mode_makes_the_member_compromisable() {
    use gtb_plan::day::{LegPlace, fits_travel_day};
    use gtb_validate::{Mode, Validator};
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = 40;
    let s = build(&cfg, 2);
    let text = std::fs::read_to_string(&s.splits[0].path).unwrap();
    let tasks: Vec<Task> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let base = tasks
        .into_iter()
        .find(|t| t.metadata.cities.len() == 1 && t.user_preferences.len() >= 3)
        .expect("a one-city task of three or more");
    let res = gtb_ops::load_resources(&cfg).unwrap();
    let city = res.city_id(&base.metadata.cities[0]).unwrap();
    let usable = |h, mode: &str| {
        [(h, city, LegPlace::Outbound), (city, h, LegPlace::Return)]
            .iter()
            .map(|&(a, b, place)| {
                res.transport(a, b)
                    .iter()
                    .any(|o| o.mode == mode && fits_travel_day(o.mode, o.minutes, place))
            })
            .collect::<Vec<bool>>()
    };
    let served = |h, mode: &str| res.transport(h, city).iter().any(|o| o.mode == mode);
    let hubs: Vec<gtb_resources::CityId> = (0..res.cities.len() as gtb_resources::CityId)
        .filter(|&h| h != city)
        .collect();
    let far = *hubs
        .iter()
        .find(|&&h| served(h, "火车") && usable(h, "火车") == [false, false])
        .expect("a departure city a train reaches only in more than a day");
    let near = *hubs
        .iter()
        .find(|&&h| {
            ["飞机", "高铁", "自驾"]
                .iter()
                .all(|m| !usable(h, m).contains(&false))
        })
        .expect("a departure city three modes reach within a day");
    let with = |hub: gtb_resources::CityId, musts: &[&str]| {
        let mut t = base.clone();
        t.metadata.departure_city = res.city(hub).name.clone();
        t.metadata.compromise_pattern.clear();
        let users: Vec<String> = t.user_preferences.keys().cloned().collect();
        for (k, u) in users.iter().enumerate() {
            let e = t.user_preferences.get_mut(u).unwrap();
            e.compromisable = false;
            let tr = &mut e.preference.global_constraints.transport;
            *tr = Default::default();
            if let Some(m) = musts.get(k) {
                tr.must = vec![m.to_string()];
            }
        }
        Validator::new(&res, &cfg).check_task(&mut t, Mode::Fix);
        users
            .iter()
            .map(|u| t.user_preferences[u].compromisable)
            .collect::<Vec<bool>>()
    };
    assert_eq!(&with(far, &["火车"])[..1], [true]);
    assert_eq!(
        &with(near, &["高铁", "自驾", "飞机"])[..3],
        [false, false, true]
    );
    assert_eq!(&with(near, &["高铁", "自驾"])[..2], [false, false]);
}

#[test]
#[cfg_attr(
    not(has_official_examples),
    ignore = "needs ../shared/spec/official_examples.jsonl (absent)"
)]
fn issue20_official_lines_agree_with_their_tables() {
    // the release's own lines, scalars and sharing pass the checks the issue adds
    let Some(shared) = shared() else { return };
    let cfg = crate::common::config_in(Path::new("/nonexistent"));
    let (n, findings) =
        gtb_ops::validate_file(&cfg, &shared.join("spec/official_examples.jsonl")).unwrap();
    assert_eq!(n, 3);
    let ours: Vec<String> = findings
        .iter()
        .filter(|f| ["lines", "scalars", "strategies"].contains(&f.check))
        .map(|f| f.to_string())
        .collect();
    assert!(ours.is_empty(), "{ours:?}");
}

#[test]
fn issue20_validate_flags_lines_scalars_and_copied_members() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = 40;
    let s = build(&cfg, 2);
    let path = &s.splits[0].path;
    let text = std::fs::read_to_string(path).unwrap();
    let mut tasks: Vec<Task> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // a group whose first two members write their own city preferences
    let own = [
        "2-3", "2-4", "3-3", "3-4", "4-3", "4-4", "5-1", "5-2", "6-1",
    ];
    let t = tasks
        .iter_mut()
        .find(|t| own.contains(&t.metadata.group_id.as_str()))
        .expect("a group of friends");
    let (u1, u2) = ("User1".to_string(), "User2".to_string());
    let city = t.metadata.cities[0].clone();
    // u1 says its own must_visit is one it will never visit; u2 says nothing of its table
    let must = t.user_preferences[&u1].preference.city_specific_preferences[&city]
        .attractions
        .must_visit[0]
        .clone();
    for m in t.initial_messages.iter_mut() {
        if m.role == u1 {
            m.content = format!("{must}就千万别安排了，我坚决不去。");
        } else if m.role == u2 {
            m.content = "我正在聊天".into();
        }
    }
    // an implausible budget, and u2's city preferences copied from u1
    t.user_preferences[&u1]
        .preference
        .global_constraints
        .avg_budget = 100_000;
    let copied = t.user_preferences[&u1]
        .preference
        .city_specific_preferences
        .clone();
    t.user_preferences[&u2].preference.city_specific_preferences = copied;
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, gtb_ops::sinks::release_bytes(&tasks)).unwrap();
    let (_, findings) = gtb_ops::validate_file(&cfg, &bad).unwrap();
    let msgs: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
    let has = |check: &str, user: &str, text: &str| {
        findings
            .iter()
            .any(|f| f.check == check && f.user == user && f.to_string().contains(text))
    };
    assert!(has("lines", &u1, "unwanted"), "{msgs:?}");
    assert!(has("lines", &u2, "voices none"), "{msgs:?}");
    assert!(has("scalars", &u1, "100000"), "{msgs:?}");
    assert!(has("strategies", &u2, "item for item"), "{msgs:?}");
}
