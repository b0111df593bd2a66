//! Which cities know a place: the city of a route call that names none (`route_city`) is the
//! first city (in resource order) that knows both ends, and a world answers hundreds of
//! thousands of such calls. A city knows a name when its table matches it (`PoiDb::find`: the
//! exact name, or a venue name containing it) or a witness plan names it there.
//!
//! `Known` lists those cities once for every place the witnesses name, with one substring
//! search per city (its venue names joined by newlines) instead of one per venue; a name it
//! does not list is looked up city by city (`knows`), which is the definition.

use crate::witness::Facts;
use gtb_core::FastMap as HashMap;
use gtb_resources::{CityId, Resources};
use gtb_score::PoiDb;
use rayon::prelude::*;
use std::collections::BTreeSet;

/// Whether a city knows a name (module doc): the definition that `Known` lists.
pub(crate) fn knows(db: &PoiDb, facts: &Facts, city: &str, name: &str) -> bool {
    db.find(name, city).is_some() || facts.places.get(city).is_some_and(|s| s.contains(name))
}

/// Per witness place: the cities that know it, ascending.
#[derive(Default)]
pub(crate) struct Known {
    cities: HashMap<String, Vec<CityId>>,
}

/// A city's venue names joined by newlines, to find a name inside any of them at once;
/// `None` when a venue name holds a newline itself (a match could then span two names).
fn joined(db: &PoiDb, city: &str) -> Option<String> {
    let names = db.city(city).iter().map(|p| p.name.as_str());
    let names: Vec<&str> = names.collect();
    names
        .iter()
        .all(|n| !n.contains('\n'))
        .then(|| names.join("\n"))
}

impl Known {
    pub(crate) fn new(res: &Resources, db: &PoiDb, facts: &Facts) -> Known {
        let blobs: Vec<Option<String>> = res.cities.iter().map(|c| joined(db, &c.name)).collect();
        let names: BTreeSet<&String> = facts.places.values().flatten().collect();
        let cities = names
            .into_par_iter()
            .map(|name| (name.clone(), Known::scan(res, db, facts, &blobs, name)))
            .collect();
        Known { cities }
    }

    /// The cities that know `name`, ascending.
    fn scan(
        res: &Resources,
        db: &PoiDb,
        facts: &Facts,
        blobs: &[Option<String>],
        name: &str,
    ) -> Vec<CityId> {
        let finder = memchr::memmem::Finder::new(name.as_bytes());
        let plain = !name.is_empty() && !name.contains('\n');
        let table = |c: usize, city: &str| match &blobs[c] {
            Some(blob) if plain => finder.find(blob.as_bytes()).is_some(),
            _ => db.find(name, city).is_some(),
        };
        let witness = |city: &str| facts.places.get(city).is_some_and(|s| s.contains(name));
        let known = res.cities.iter().enumerate();
        known
            .filter(|(c, city)| table(*c, &city.name) || witness(&city.name))
            .map(|(c, _)| c as CityId)
            .collect()
    }

    /// The cities that know a witness place, ascending; `None` for a name no witness uses.
    pub(crate) fn get(&self, name: &str) -> Option<&[CityId]> {
        self.cities.get(name).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue27_known_lists_exactly_the_cities_that_know_a_place() {
        let res = gtb_resources::load(&gtb_core::config::Paths::default()).unwrap();
        let db = PoiDb::with_stand_ins(&res);
        let mut facts = Facts::default();
        // venue names, parts of them, a name of two cities, stations, nothing at all
        let city = |i: usize| res.cities[i].name.clone();
        let some: Vec<usize> = (0..res.cities.len()).step_by(7).collect();
        for &i in &some {
            let names: Vec<String> = db.city(&city(i)).iter().map(|p| p.name.clone()).collect();
            let places = facts.places.entry(city(i)).or_default();
            for n in names.iter().take(5) {
                places.insert(n.clone());
                places.insert(n.chars().take(2).collect());
            }
            places.insert(format!("{}东站", city(i)));
            places.insert(String::new());
            places.insert("不在任何城市的地方".into());
        }
        let known = Known::new(&res, &db, &facts);
        let names: BTreeSet<&String> = facts.places.values().flatten().collect();
        assert!(names.len() > 50, "{}", names.len());
        for name in names {
            let want: Vec<CityId> = (0..res.cities.len())
                .filter(|&c| knows(&db, &facts, &city(c), name))
                .map(|c| c as CityId)
                .collect();
            assert_eq!(known.get(name), Some(&want[..]), "{name:?}");
        }
        assert_eq!(known.get("no witness names this"), None);
    }
}
