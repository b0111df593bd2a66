//! `gtb audit` of a small build against an independent count on the raw JSON: every figure
//! recomputed here from the task lines.

use super::*;

/// Everything the report should say, counted straight from the JSON values.
#[derive(Debug, Default)]
struct Expected {
    tasks: u64,
    classes: BTreeMap<String, u64>,
    by_size: BTreeMap<(u64, String), u64>,
    by_paper_size: BTreeMap<(u64, String), u64>,
    by_cities: BTreeMap<(u64, String), u64>,
    by_days: BTreeMap<(&'static str, String), u64>,
    archetypes: BTreeMap<(String, String), u64>,
    fields: BTreeMap<&'static str, u64>,
    users: u64,
    points: u64,
    compromisable: u64,
    budgets: Vec<u64>,
    conflicts: [u64; 3],
    clash_items: [HashMap<String, u64>; 3],
    destinations: HashMap<String, u64>,
    departures: BTreeSet<String>,
    must_visit: HashMap<(String, String), u64>,
}

fn expected(all: &[Value]) -> Expected {
    let mut e = Expected::default();
    for t in all {
        let md = &t["metadata"];
        let ups = t["user_preferences"].as_object().unwrap();
        let class = t["difficulty_type"].as_str().unwrap().to_string();
        let n = ups.len() as u64 + len(&md["child_members"]);
        let days = match md["date"].as_str().unwrap() {
            "两天一夜" | "三天两夜" => "2-3 days",
            "四天三夜" | "五天四夜" => "4-5 days",
            "六天五夜" | "七天六夜" => "6-7 days",
            other => panic!("date {other}"),
        };
        e.tasks += 1;
        *e.classes.entry(class.clone()).or_default() += 1;
        *e.by_size.entry((n, class.clone())).or_default() += 1;
        // the paper's Table 8 prints the three-generation family (6-3) with the five-member groups
        let paper_n = if md["group_id"] == "6-3" { 5 } else { n };
        *e.by_paper_size.entry((paper_n, class.clone())).or_default() += 1;
        *e.by_cities
            .entry((len(&md["cities"]), class.clone()))
            .or_default() += 1;
        *e.by_days.entry((days, class)).or_default() += 1;
        *e.archetypes
            .entry((
                md["group_id"].as_str().unwrap().into(),
                md["group_name"].as_str().unwrap().into(),
            ))
            .or_default() += 1;
        for c in strs(&md["cities"]) {
            *e.destinations.entry(c).or_default() += 1;
        }
        e.departures
            .insert(md["departure_city"].as_str().unwrap().to_string());
        for u in ups.values() {
            e.users += 1;
            e.compromisable += u["compromisable"].as_bool().unwrap() as u64;
            let g = &u["preference"]["global_constraints"];
            e.budgets.push(g["avg_budget"].as_u64().unwrap());
            let mut items = 0;
            let mut add = |f: &'static str, v: &Value| {
                *e.fields.entry(f).or_default() += len(v);
                items += len(v);
            };
            for b in ["must", "prefer", "avoid", "reject"] {
                add(["transport.", b].concat().leak(), &g["transport"][b]);
            }
            add("hotel.prefer", &g["hotel_preference"]["prefer"]);
            add("hotel.avoid", &g["hotel_preference"]["avoid"]);
            for (city, cp) in u["preference"]["city_specific_preferences"]
                .as_object()
                .unwrap()
            {
                let a = &cp["attractions"];
                add("must_visit", &a["must_visit"]);
                add("reject_visit", &a["reject_visit"]);
                add("category.positive", &a["category_pref"]["positive"]);
                add("category.negative", &a["category_pref"]["negative"]);
                for f in ["must_eat", "prefer_eat", "avoid_eat", "reject_eat"] {
                    add(f, &cp["food"][f]);
                }
                for p in strs(&a["must_visit"]) {
                    *e.must_visit.entry((city.clone(), p)).or_default() += 1;
                }
            }
            e.points += items + 3;
        }
        // conflicts: ordered pairs of different users
        let mut found: [BTreeSet<String>; 3] = Default::default();
        for (ku, u) in ups {
            for (kv, v) in ups {
                if ku == kv {
                    continue;
                }
                let (pu, pv) = (&u["preference"], &v["preference"]);
                let rej = strs(&pv["global_constraints"]["transport"]["reject"]);
                for m in strs(&pu["global_constraints"]["transport"]["must"]) {
                    if rej.contains(&m) {
                        found[2].insert(m);
                    }
                }
                for (city, cu) in pu["city_specific_preferences"].as_object().unwrap() {
                    let Some(cv) = pv["city_specific_preferences"].get(city) else {
                        continue;
                    };
                    for (k, must, reject, sect) in [
                        (0, "must_visit", "reject_visit", "attractions"),
                        (1, "must_eat", "reject_eat", "food"),
                    ] {
                        let rej = strs(&cv[sect][reject]);
                        for m in strs(&cu[sect][must]) {
                            if rej.contains(&m) {
                                found[k].insert(format!("{m} ({city})"));
                            }
                        }
                    }
                }
            }
        }
        for (k, items) in found.iter().enumerate() {
            e.conflicts[k] += !items.is_empty() as u64;
            for item in items {
                *e.clash_items[k].entry(item.clone()).or_default() += 1;
            }
        }
    }
    e
}

#[test]
fn small_build_matches_an_independent_count() {
    let file = small_build();
    let r = audit_file(file, false).unwrap();
    let e = expected(&tasks(file));
    assert_eq!(r.tasks, e.tasks);
    assert_eq!(r.skipped_lines, 0);
    for c in &r.difficulty {
        assert_eq!(
            c.count,
            e.classes.get(&c.item).copied().unwrap_or(0),
            "{}",
            c.item
        );
    }
    // Table 8: every cell, and nothing outside the rows shown
    let check = |tab: &gtb_audit::report::CrossTab, get: &dyn Fn(&str, &str) -> u64, total: u64| {
        let mut sum = 0;
        for row in &tab.rows {
            for (class, n) in tab.classes.iter().zip(&row.counts) {
                assert_eq!(*n, get(&row.label, class), "{} {}", row.label, class);
                sum += n;
            }
        }
        assert_eq!(sum, total);
    };
    check(
        &r.table8.by_size,
        &|row, c| {
            e.by_size
                .get(&(row.trim_start_matches("N=").parse().unwrap(), c.to_string()))
                .copied()
                .unwrap_or(0)
        },
        e.tasks,
    );
    check(
        &r.table8.by_paper_size,
        &|row, c| {
            e.by_paper_size
                .get(&(row.trim_start_matches("N=").parse().unwrap(), c.to_string()))
                .copied()
                .unwrap_or(0)
        },
        e.tasks,
    );
    check(
        &r.table8.by_cities,
        &|row, c| {
            e.by_cities
                .get(&(row[..1].parse().unwrap(), c.to_string()))
                .copied()
                .unwrap_or(0)
        },
        e.tasks,
    );
    check(
        &r.table8.by_days,
        &|row, c| {
            e.by_days
                .iter()
                .find(|((d, cl), _)| *d == row && cl == c)
                .map_or(0, |(_, n)| *n)
        },
        e.tasks,
    );
    let arch: BTreeMap<(String, String), u64> = r
        .archetypes
        .iter()
        .map(|a| ((a.group_id.clone(), a.group_name.clone()), a.tasks))
        .collect();
    assert_eq!(arch, e.archetypes);
    // Table 9
    assert_eq!(r.fields.len(), 14);
    for f in &r.fields {
        assert_eq!(f.count, e.fields[f.field.as_str()], "{}", f.field);
    }
    // users and points
    assert_eq!(r.users.users, e.users);
    assert_eq!(r.users.atomic_points, e.points);
    assert_eq!(r.users.compromisable, e.compromisable);
    assert!(
        (r.users.compromisable_share.unwrap() - e.compromisable as f64 / e.users as f64).abs()
            < 1e-12
    );
    assert!((r.users.points_per_user.unwrap() - e.points as f64 / e.users as f64).abs() < 1e-12);
    // budget
    let mut b = e.budgets.clone();
    b.sort();
    let median = if b.len() % 2 == 1 {
        b[b.len() / 2] as f64
    } else {
        (b[b.len() / 2 - 1] + b[b.len() / 2]) as f64 / 2.0
    };
    let rb = r.budget.as_ref().unwrap();
    assert_eq!(
        (rb.min as u64, rb.max as u64, rb.median),
        (b[0], *b.last().unwrap(), median)
    );
    assert!((rb.mean - b.iter().sum::<u64>() as f64 / b.len() as f64).abs() < 1e-9);
    // conflicts, and the clashing items with their task counts
    for (k, kind) in ["attractions", "food", "transport"].iter().enumerate() {
        let c = r.conflict(kind).unwrap();
        assert_eq!(c.tasks, e.conflicts[k], "{kind}");
        for item in &c.top {
            // "item (city)" for attractions and food, the mode alone for transport
            assert_eq!(
                Some(item.count),
                e.clash_items[k].get(&item.label()).copied(),
                "{kind} {}",
                item.label()
            );
        }
        let best = e.clash_items[k].values().max().copied();
        assert_eq!(
            c.top.first().map(|x| x.count),
            best,
            "{kind}: the top item is the most frequent"
        );
    }
    assert!(
        r.conflict("attractions").unwrap().tasks > 0,
        "a default build has attraction conflicts"
    );
    // diversity
    let d = &r.diversity;
    assert_eq!(d.destination_cities, e.destinations.len() as u64);
    assert_eq!(d.departure_cities, e.departures.len() as u64);
    let freq: Vec<f64> = e.destinations.values().map(|&x| x as f64).collect();
    let n = freq.len() as f64;
    let mean = freq.iter().sum::<f64>() / n;
    // Gini by its definition: mean absolute difference over all pairs / (2 · mean)
    let mad: f64 = freq
        .iter()
        .flat_map(|a| freq.iter().map(move |b| (a - b).abs()))
        .sum::<f64>()
        / (n * n);
    assert!((d.destination_gini.unwrap() - mad / (2.0 * mean)).abs() < 1e-9);
    let total: f64 = freq.iter().sum();
    let h: f64 = freq.iter().map(|x| -(x / total) * (x / total).ln()).sum();
    assert!((d.destination_entropy.unwrap() - h / n.ln()).abs() < 1e-9);
    let mut mv: Vec<u64> = e.must_visit.values().copied().collect();
    mv.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(d.must_visit_mentions, e.fields["must_visit"]);
    assert_eq!(d.top_must_visit[0].count, mv[0]);
    let top10: u64 = mv.iter().take(10).sum();
    assert!(
        (d.top10_must_visit_share.unwrap() - top10 as f64 / e.fields["must_visit"] as f64).abs()
            < 1e-12
    );
}
