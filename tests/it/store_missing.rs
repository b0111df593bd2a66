//! Stores that lack a kind of POI (issue 27, item 5): a build over them finishes with witness
//! plans, or refuses clearly; the solver never panics. A city whose store names no hotel (a
//! table of attractions and restaurants only; a release dump whose hotels carry no price)
//! sleeps in the hotel stand-ins of its price bands, as the cities no store covers do.
//!
//! The stores are written from real rows of the embedded snapshot (`store_build::chosen`'s
//! cities); the fuzz draws, per case and city, which kinds of POI the store lacks and which
//! thresholds make a city a destination (`GTB_FUZZ_SEED`, `GTB_FUZZ_STORE_CASES`, default 24).

use crate::common::*;
use crate::fuzz::{assert_sound, case_rng, checked_tasks, env_number, run_cases, seed};
use crate::store_build::chosen;
use gtb_core::config::{Config, StoreSettings};
use gtb_plan::{Plan, PlanLine};
use gtb_resources::{FoodKind, Resources};
use gtb_store::import::{Adapter, ImportOptions};
use gtb_store::{PoiRow, PoiType, StoreBuilder};
use rand::Rng;
use std::path::Path;

/// The shipped resources (no store).
fn snapshot(dir: &Path) -> Resources {
    gtb_ops::load_resources(&config_in(dir)).unwrap()
}

fn import(dir: &Path, adapter: Adapter, input: &Path) -> std::path::PathBuf {
    let out = dir.join("store");
    let opts = ImportOptions {
        adapter,
        input: input.to_path_buf(),
        out: out.clone(),
        cities: None,
        licence: Some("CC0 (test fixture)".into()),
        map: Default::default(),
        radius_km: 60.0,
        progress: false,
    };
    gtb_ops::import(&config_in(dir), &opts).unwrap();
    out
}

/// A config building `n` tasks over `store`, witnesses on (the shipped default).
fn store_config(dir: &Path, store: &Path, n: usize) -> Config {
    let mut cfg = config_in(&dir.join("build"));
    cfg.paths.resources = Some(store.to_path_buf());
    cfg.run.n = n;
    assert!(cfg.solve.enabled, "witnesses are the default");
    cfg
}

/// Build, then check that every task has a witness plan, and that every hotel night of the
/// plans is at a stand-in (the store names no priced hotel). Returns the number of plans.
fn build_sleeps_in_stand_ins(cfg: &Config) -> usize {
    let s = build(cfg, 2);
    let plans = s.splits[0].path.with_file_name("plans.jsonl");
    let lines: Vec<PlanLine> = std::fs::read_to_string(&plans)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), s.splits[0].tasks);
    let (mut hotels, mut stand_ins) = (0, 0);
    for l in &lines {
        let plan: Plan = serde_json::from_value(l.plan.clone().expect("a witness plan")).unwrap();
        let v = gtb_solve::Venues::of(&plan);
        hotels += v.hotels;
        stand_ins += v.hotel_stand_ins;
    }
    assert!(hotels > 0);
    assert_eq!(hotels, stand_ins, "a hotel the store does not price");
    lines.len()
}

/// The names of a city's restaurants in the snapshot.
fn restaurants(res: &Resources, c: usize) -> impl Iterator<Item = &gtb_resources::Food> {
    res.food[c]
        .iter()
        .filter(|f| f.kind == FoodKind::Restaurant)
}

#[test]
fn issue27_a_table_of_attractions_and_restaurants_only_builds_with_witnesses() {
    let dir = tempfile::tempdir().unwrap();
    let res = snapshot(dir.path());
    let mut csv = String::from("name,city,poi_type,category,lat,lng,price\n");
    for c in chosen(&res, 3) {
        let city = &res.cities[c].name;
        for a in &res.attractions[c] {
            let row = [&a.name, city, "attractions", &a.category];
            csv += &format!("{},{},{},{}\n", row.join(","), a.lat, a.lng, a.ticket);
        }
        // each restaurant under a few branch names, so that the city has the store minimum
        for f in restaurants(&res, c) {
            for branch in ["", "(总店)", "(二店)"] {
                let (lat, lng) = (res.cities[c].lat, res.cities[c].lng);
                let name = format!("{}{branch}", f.name);
                let row = [&name, city, "food", &f.category];
                csv += &format!("{},{lat},{lng},{}\n", row.join(","), f.price);
            }
        }
    }
    let input = dir.path().join("mine.csv");
    std::fs::write(&input, csv).unwrap();
    let store = import(dir.path(), Adapter::Table, &input);
    let cfg = store_config(dir.path(), &store, 30);
    assert_eq!(build_sleeps_in_stand_ins(&cfg), 30);
}

#[test]
fn issue27_a_release_dump_whose_hotels_carry_no_price_builds_with_witnesses() {
    let dir = tempfile::tempdir().unwrap();
    let res = snapshot(dir.path());
    // only the fields the release's evaluator reads from all_poi_by_city.json
    let entry = |name: &str, category: &str, kind: &str| {
        serde_json::json!({"name": name, "custom_category": category, "poi_type": kind,
            "opening_hours": null})
    };
    let mut dump = serde_json::Map::new();
    for c in chosen(&res, 3) {
        let mut list: Vec<serde_json::Value> = res.attractions[c]
            .iter()
            .map(|a| entry(&a.name, &a.category, "attractions"))
            .collect();
        for f in restaurants(&res, c) {
            for branch in ["", "(总店)", "(二店)"] {
                list.push(entry(&format!("{}{branch}", f.name), &f.category, "food"));
            }
        }
        for (i, h) in res.hotels[c].iter().enumerate() {
            list.push(entry(
                &format!("{}{i}号", h.category),
                &h.category,
                "hotels",
            ));
        }
        list.extend(
            res.named_hotels[c]
                .iter()
                .map(|h| entry(&h.name, &h.category, "hotels")),
        );
        dump.insert(res.cities[c].name.clone(), list.into());
    }
    let input = dir.path().join("all_poi_by_city.json");
    std::fs::write(&input, serde_json::Value::Object(dump).to_string()).unwrap();
    let store = import(dir.path(), Adapter::Release, &input);
    let cfg = store_config(dir.path(), &store, 30);
    assert_eq!(build_sleeps_in_stand_ins(&cfg), 30);
}

/// A store of `cities` from the snapshot, each lacking the kinds of POI `lacks` says (bits:
/// attractions, food, hotels), its hotels priced or not.
fn lacking_store(res: &Resources, cities: &[(usize, u8, bool)], out: &Path) {
    let mut b = StoreBuilder::new(None);
    for &(c, lacks, priced) in cities {
        let city = &res.cities[c].name;
        let row = |t, name: &str, category: &str, id: String| {
            PoiRow::new(city, t, name, "test", id).with_category(category, Some(category))
        };
        if lacks & 1 == 0 {
            for (i, a) in res.attractions[c].iter().enumerate() {
                let mut r = row(PoiType::Attractions, &a.name, &a.category, format!("a{i}"));
                (r.lat, r.lng) = (Some(a.lat), Some(a.lng));
                r.opening_hours = a.hours.clone();
                b.push(r);
            }
        }
        if lacks & 2 == 0 {
            for (i, f) in restaurants(res, c).enumerate() {
                let mut r = row(PoiType::Food, &f.name, &f.category, format!("f{i}"));
                r.price = Some(f64::from(f.price));
                b.push(r);
            }
        }
        if lacks & 4 == 0 {
            for (i, h) in res.hotels[c].iter().enumerate() {
                let name = format!("{}{i}号", h.category);
                let mut r = row(PoiType::Hotels, &name, &h.category, format!("h{i}"));
                r.price = priced.then_some(f64::from(h.price_low));
                b.push(r);
            }
        }
    }
    b.finish(out).unwrap();
}

/// Load the store; when some city can be a destination, sample, generate and validate a few
/// tasks and solve each (a witness, or a reason). Ends as "refused", "sampler refused",
/// "witness" or "no witness"; a refusal must name the store setting or folder.
fn solve_over(cfg: &Config) -> Result<&'static str, String> {
    let res = match gtb_ops::load_resources(cfg) {
        Ok(res) => res,
        Err(e) => {
            let e = format!("{e:#}");
            return if e.contains("store") {
                Ok("refused")
            } else {
                Err(format!("the refusal names no store: {e}"))
            };
        }
    };
    let Some(tasks) = checked_tasks(cfg, &res, 4) else {
        return Ok("sampler refused");
    };
    let db = gtb_score::PoiDb::from_resources(&res);
    let solver = gtb_solve::Solver::new(&res, &db);
    let mut end = "no witness";
    for t in &tasks {
        match solver.solve(t) {
            Ok(_) => end = "witness",
            Err(no) if no.reason().is_empty() => return Err("a reasonless no".into()),
            Err(_) => {}
        }
        solver.baseline(t).ok();
    }
    Ok(end)
}

#[test]
fn issue27_fuzz_stores_lacking_poi_types_never_panic_the_solver() {
    let seed = seed();
    let n = env_number("GTB_FUZZ_STORE_CASES", 24) as usize;
    let dir = tempfile::tempdir().unwrap();
    let res = snapshot(dir.path());
    let pool = chosen(&res, 6);
    let root = dir.path().to_path_buf();
    let out = run_cases((0..n).collect(), move |_, &i| {
        let mut rng = case_rng(seed, "store", i);
        let mut cities: Vec<(usize, u8, bool)> = Vec::new();
        for &c in &pool {
            if rng.gen_bool(0.7) {
                cities.push((c, rng.gen_range(0..8u8), rng.gen_bool(0.5)));
            }
        }
        let case = root.join(format!("case{i}"));
        lacking_store(&res, &cities, &case.join("store"));
        let mut cfg = store_config(&case, &case.join("store"), 4);
        let pick = |rng: &mut rand_chacha::ChaCha8Rng, default| match rng.gen_range(0..3) {
            0 => 0,
            1 => 1,
            _ => default,
        };
        let d = StoreSettings::default();
        cfg.store = Some(StoreSettings {
            min_attractions: pick(&mut rng, d.min_attractions),
            min_food: pick(&mut rng, d.min_food),
            named_restaurants: 0.5,
        });
        cfg.run.seed = i as u64;
        let r = solve_over(&cfg).map_err(|why| format!("{cities:?} {:?}: {why}", cfg.store));
        std::fs::remove_dir_all(&case).ok();
        r
    });
    assert_sound("stores lacking POI types", n, &out, &["witness"]);
}
