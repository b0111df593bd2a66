//! Builds over a POI store (issue 11, item 3): the store's POIs replace the snapshot's in
//! sampling, generation and validation; cities it does not cover are no destinations.
//! The store here is written from real rows of the embedded snapshot (a few cities, half of
//! their attractions), so that a name the build could only have taken from the snapshot shows.

use gtb_core::task::Task;
use gtb_store::{PoiRow, PoiType, PopularitySource, StoreBuilder};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Cities with at least 20 attractions and 5 restaurants in the snapshot (first 4 by name).
pub(crate) fn chosen(res: &gtb_resources::Resources, most: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (0..res.cities.len())
        .filter(|&c| {
            res.attractions[c].len() >= 40
                && res.food[c]
                    .iter()
                    .filter(|f| f.kind == gtb_resources::FoodKind::Restaurant)
                    .count()
                    >= 2
                && !res.cities[c].hub
        })
        .collect();
    out.sort_by_key(|&c| res.cities[c].name.clone());
    out.truncate(most);
    assert!(
        out.len() >= most.min(2),
        "the snapshot has too few large cities"
    );
    out
}

/// A store of the chosen cities: every other attraction (by popularity order), their
/// restaurants, their hotel bands as priced hotels. Returns the attraction names per city.
fn write_store(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    write_store_of(dir, 4)
}

/// [`write_store`] of at most `most` cities.
fn write_store_of(dir: &Path, most: usize) -> BTreeMap<String, BTreeSet<String>> {
    let res = gtb_ops::load_resources(&crate::common::config_in(dir)).unwrap();
    let mut b = StoreBuilder::new(None);
    let mut names: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in chosen(&res, most) {
        let city = &res.cities[c].name;
        for (i, a) in res.attractions[c].iter().enumerate().step_by(2) {
            let mut r = PoiRow::new(city, PoiType::Attractions, &a.name, "test", format!("a{i}"))
                .with_category(&a.category, Some(&a.category));
            (r.lat, r.lng) = (Some(a.lat), Some(a.lng));
            r.popularity = Some(a.popularity as f64);
            r.popularity_source = PopularitySource::Derived;
            r.price = Some(a.ticket as f64);
            r.opening_hours = a.hours.clone();
            names
                .entry(city.clone())
                .or_default()
                .insert(a.name.clone());
            b.push(r);
        }
        // the store's restaurants: the snapshot's, several times over under branch names, so
        // that the store has more than the minimum
        for (i, f) in res.food[c].iter().enumerate() {
            for branch in ["", "(总店)", "(二店)"] {
                let name = format!("{}{branch}", f.name);
                let r = PoiRow::new(city, PoiType::Food, &name, "test", format!("f{i}{branch}"))
                    .with_category(&f.category, Some(&f.category));
                b.push(r);
            }
        }
        for (i, h) in res.hotels[c].iter().enumerate() {
            for (k, p) in [h.price_low, (h.price_low + h.price_high) / 2, h.price_high]
                .into_iter()
                .enumerate()
            {
                let name = format!("{}{}#{k}", h.category, i);
                let mut r = PoiRow::new(city, PoiType::Hotels, &name, "test", format!("h{i}.{k}"))
                    .with_category(&h.category, Some(&h.category));
                r.price = Some(p as f64);
                b.push(r);
            }
        }
    }
    b.finish(&dir.join("store")).unwrap();
    names
}

fn read_tasks(path: &Path) -> Vec<Task> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn store_config(dir: &Path, out: &str) -> gtb_core::config::Config {
    let mut cfg = crate::common::config_in(&dir.join(out));
    cfg.paths.resources = Some(dir.join("store"));
    cfg.store = Some(gtb_core::config::StoreSettings {
        named_restaurants: 0.5,
        ..Default::default()
    });
    cfg.run.n = 60;
    cfg
}

#[test]
fn issue11_a_build_over_a_store_draws_only_store_cities_and_names() {
    let dir = tempfile::tempdir().unwrap();
    let names = write_store(dir.path());
    let cfg = store_config(dir.path(), "a");
    let s1 = crate::common::build(&cfg, 1);
    let tasks = read_tasks(&s1.splits[0].path);
    assert_eq!(tasks.len(), 60);
    let mut named = 0;
    let mut seen_cities = BTreeSet::new();
    for t in &tasks {
        for c in &t.metadata.cities {
            assert!(
                names.contains_key(c),
                "{}: destination {c} is not a store city",
                t.task_id
            );
            seen_cities.insert(c.clone());
        }
        for u in t.user_preferences.values() {
            for (city, cp) in &u.preference.city_specific_preferences {
                for n in cp
                    .attractions
                    .must_visit
                    .iter()
                    .chain(&cp.attractions.reject_visit)
                {
                    assert!(
                        names[city].contains(n),
                        "{}: {n} is not a store attraction of {city}",
                        t.task_id
                    );
                }
                named += cp
                    .food
                    .must_eat
                    .iter()
                    .chain(&cp.food.prefer_eat)
                    .filter(|v| v.ends_with("店)"))
                    .count();
            }
        }
    }
    assert!(seen_cities.len() >= 2, "{seen_cities:?}");
    assert!(named > 0, "no must_eat/prefer_eat names a store restaurant");
    // the manifest says which store and which cities
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(s1.splits[0].path.with_file_name("manifest.json")).unwrap(),
    )
    .unwrap();
    let used: BTreeSet<String> = manifest["store"]["used"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(used, names.keys().cloned().collect());
    assert!(
        manifest["store"]["excluded"]
            .as_object()
            .unwrap()
            .is_empty()
    );
    // the same bytes on 2 threads
    let cfg2 = store_config(dir.path(), "b");
    let s2 = crate::common::build(&cfg2, 2);
    assert_eq!(s1.splits[0].sha256, s2.splits[0].sha256);
    // and `gtb validate --resources` accepts the file
    let (n, findings) = gtb_ops::validate_file(&cfg, &s1.splits[0].path).unwrap();
    assert_eq!((n, findings.len()), (60, 0), "{findings:?}");
}

#[test]
fn issue11_validate_against_a_store_flags_a_poi_of_another_city() {
    let dir = tempfile::tempdir().unwrap();
    let names = write_store(dir.path());
    let cfg = store_config(dir.path(), "a");
    let s = crate::common::build(&cfg, 2);
    let mut tasks = read_tasks(&s.splits[0].path);
    let t = &mut tasks[0];
    let city = t.metadata.cities[0].clone();
    let other = names
        .iter()
        .find(|(c, _)| **c != city)
        .map(|(_, n)| {
            n.iter()
                .find(|x| !names[&city].contains(*x))
                .unwrap()
                .clone()
        })
        .unwrap();
    let u = t.user_preferences.values_mut().next().unwrap();
    let cp = &mut u.preference.city_specific_preferences[&city];
    cp.attractions.must_visit = vec![other.clone()];
    let file = dir.path().join("edited.jsonl");
    std::fs::write(&file, serde_json::to_string(t).unwrap() + "\n").unwrap();
    let (_, findings) = gtb_ops::validate_file(&cfg, &file).unwrap();
    assert!(
        findings.iter().any(|f| f.to_string().contains(&other)),
        "{other} of another city passed: {findings:?}"
    );
}

#[test]
fn issue11_a_store_that_covers_no_city_is_an_error_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    write_store(dir.path());
    let mut cfg = store_config(dir.path(), "a");
    cfg.store = Some(gtb_core::config::StoreSettings {
        min_attractions: 100_000,
        ..Default::default()
    });
    let e = gtb_ops::load_resources(&cfg).err().unwrap().to_string();
    assert!(e.contains("store.min_attractions"), "{e}");
}

#[test]
fn issue11_a_one_city_store_builds_its_hard_quota_as_medium() {
    // one destination has only one-city clusters: no hard trip exists under the release
    // formula, so those tasks are medium ones, not an unsatisfiable-quota error
    let dir = tempfile::tempdir().unwrap();
    let names = write_store_of(dir.path(), 1);
    assert_eq!(names.len(), 1);
    let cfg = store_config(dir.path(), "a");
    let s = crate::common::build(&cfg, 2);
    let tasks = read_tasks(&s.splits[0].path);
    assert_eq!(tasks.len(), 60);
    assert!(tasks.iter().all(|t| t.difficulty_type != "hard"));
    assert!(tasks.iter().any(|t| t.difficulty_type == "medium"));
    let (n, findings) = gtb_ops::validate_file(&cfg, &s.splits[0].path).unwrap();
    assert_eq!((n, findings.len()), (60, 0), "{findings:?}");
}
