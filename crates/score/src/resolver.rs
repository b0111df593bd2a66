//! The POI table a plan is scored against, with the release's resolution rules
//! (`utils/eval_util.py`): per city, an exact name first, then the stored name that contains
//! the location with the best length ratio (the first such name on ties); categories outside
//! the vocabularies fall back to 公园 / 中餐 / 商务酒店 (`vocab::resolved_category`).
//!
//! Like the release's `all_poi_by_city.json` it holds real names only: the attractions, named
//! restaurants and named hotels of the resources (or of a POI store). A stand-in label
//! (`plan::standin`) resolves to nothing, as in the release: no food or hotel term, its cost
//! still counted. `with_stand_ins` adds them under the category they name: the table of a
//! split's world (`gtb-world`, issue 28: its `poi2category`, which the release's evaluator
//! reads, lists them so; `gtb score --credit-stand-ins`). `stand_ins` lists
//! a city's stand-in venues, which the solver may fall back on where the resources name too
//! few venues.

use crate::joined::Joined;
use gtb_core::FastMap as HashMap;
use gtb_plan::stand_in;
use gtb_resources::hours::{OpeningHours, TimeWindow};
pub use gtb_resources::vocab::PoiKind;
use gtb_resources::{CityId, FoodKind, Resources, vocab};

#[derive(Debug, Clone)]
pub struct Poi {
    pub name: String,
    /// the raw category (the resolution rules apply on lookup)
    pub category: String,
    pub kind: PoiKind,
    pub hours: Option<OpeningHours>,
    /// food: CNY per person; hotel: CNY per room and night; attraction: ticket
    pub price: u32,
    /// index of the attraction in `Resources::attractions[city]`
    pub attraction: Option<usize>,
    /// a stand-in label rather than a real name
    pub stand_in: bool,
}

#[derive(Debug, Default)]
struct CityPois {
    /// in first-insertion order of the name (a later duplicate replaces the entry in place,
    /// as assigning an existing key of a Python dict does)
    pois: Vec<Poi>,
    chars: Vec<usize>,
    exact: HashMap<String, usize>,
    /// the names and the categories joined, built at their first use (`PoiDb::texts`)
    texts: std::sync::OnceLock<Texts>,
}

/// A city's venue names and categories, each joined in table order (`Joined`).
#[derive(Debug, Default)]
pub struct Texts {
    pub names: Joined,
    pub categories: Joined,
}

#[derive(Debug, Default)]
pub struct PoiDb {
    cities: HashMap<String, CityPois>,
    /// per city: the stand-in venues (`stand_ins`), outside the table: never resolved
    fallback: HashMap<String, Vec<Poi>>,
}

impl CityPois {
    fn texts(&self) -> &Texts {
        self.texts.get_or_init(|| Texts {
            names: Joined::new(self.pois.iter().map(|p| p.name.as_str())),
            categories: Joined::new(self.pois.iter().map(|p| p.category.as_str())),
        })
    }
}

/// The resolution rules applied to a stored category (`vocab::resolved_category`).
pub fn effective_category(category: &str, kind: PoiKind) -> &str {
    vocab::resolved_category(category, kind)
}

impl PoiDb {
    /// The release-like table of the resources: every attraction, named restaurant and
    /// named hotel, city by city in that order, under its real name.
    pub fn from_resources(res: &Resources) -> Self {
        let mut db = PoiDb::default();
        for (c, city) in res.cities.iter().enumerate() {
            for poi in real_pois(res, c as CityId) {
                db.add(&city.name, poi);
            }
            db.fallback
                .insert(city.name.clone(), stand_ins(res, c as CityId));
        }
        db
    }

    /// The table of one city alone (its real venues, and its stand-ins outside the table), as
    /// `from_resources` holds that city.
    pub fn of_city(res: &Resources, c: CityId) -> Self {
        let mut db = PoiDb::default();
        let name = &res.cities[c as usize].name;
        for poi in real_pois(res, c) {
            db.add(name, poi);
        }
        db.fallback.insert(name.clone(), stand_ins(res, c));
        db
    }

    /// The venues a plan may use in a city (what the witness search plans with): the table's,
    /// then the stand-ins, except where a POI store covers the city and names venues of the
    /// stand-in's kind (a store of attractions and restaurants only, or one whose hotels carry
    /// no price, sleeps its city in stand-ins priced from the hotel bands).
    pub fn venues<'a>(&'a self, res: &Resources, city: &str) -> impl Iterator<Item = &'a Poi> {
        let store_covered = res
            .store
            .as_ref()
            .is_some_and(|s| s.used.contains_key(city));
        let real: &'a [Poi] = self.city(city);
        let named = move |kind: PoiKind| real.iter().any(|p| p.kind == kind);
        let fallback = self
            .stand_ins_of(city)
            .iter()
            .filter(move |p| !store_covered || !named(p.kind));
        real.iter().chain(fallback)
    }

    /// Whether some venue of `city` serves the must_eat item `x` as the witness contract reads
    /// it (`must_eat_kept` at one of `venues`): the value a member who cannot yield may ask for.
    pub fn serves_must_eat(&self, res: &Resources, city: &str, x: &str) -> bool {
        let must = [x];
        let lists = crate::rules::FoodLists {
            must: &must,
            reject: &[],
            prefer: &[],
            avoid: &[],
        };
        self.venues(res, city)
            .filter(|p| p.kind == PoiKind::Food)
            .any(|p| {
                let terms = self.category(&p.name, city).map_or_else(Vec::new, |cat| {
                    crate::rules::food_terms(&lists, &p.name, cat)
                });
                must_eat_kept(&terms, p, x)
            })
    }

    /// `from_resources` plus every stand-in label of each city under the category it names:
    /// the table of a split's world (`gtb-world`), which its `poi2category` lists, so that the
    /// release's evaluator scores a stand-in by its category as gtb does. The release's own
    /// table has no such names.
    pub fn with_stand_ins(res: &Resources) -> Self {
        let mut db = PoiDb::from_resources(res);
        for (c, city) in res.cities.iter().enumerate() {
            for poi in stand_ins(res, c as CityId) {
                db.add(&city.name, poi);
            }
        }
        db
    }

    pub fn add(&mut self, city: &str, poi: Poi) {
        let c = self.cities.entry(city.to_string()).or_default();
        c.texts = Default::default();
        match c.exact.get(&poi.name) {
            Some(&i) => c.pois[i] = poi,
            None => {
                c.exact.insert(poi.name.clone(), c.pois.len());
                c.chars.push(poi.name.chars().count());
                c.pois.push(poi);
            }
        }
    }

    /// The stand-in venues of a city (not in the table: they resolve to nothing).
    pub fn stand_ins_of(&self, city: &str) -> &[Poi] {
        self.fallback.get(city).map_or(&[], Vec::as_slice)
    }

    /// The venues of a city, in table order.
    pub fn city(&self, city: &str) -> &[Poi] {
        self.cities.get(city).map_or(&[], |c| c.pois.as_slice())
    }

    /// The city's venue names and categories joined (`Texts`), in table order (built at the
    /// first call for the city, and again after an `add` to it); `None` for a city the table
    /// does not have.
    pub fn texts(&self, city: &str) -> Option<&Texts> {
        self.cities.get(city).map(CityPois::texts)
    }

    /// Where the venue of this exact name is in `city(city)`.
    pub fn position(&self, city: &str, name: &str) -> Option<usize> {
        self.cities.get(city)?.exact.get(name).copied()
    }

    /// `_match_poi`: the exact name, else the stored name containing `name` with the best
    /// `len(name) / len(stored)` (the first on ties).
    pub fn find(&self, name: &str, city: &str) -> Option<&Poi> {
        let c = self.cities.get(city)?;
        if let Some(&i) = c.exact.get(name) {
            return Some(&c.pois[i]);
        }
        let n = name.chars().count();
        let mut best: Option<(usize, usize)> = None; // (index, stored length)
        // a zero-length query has ratio 0 and never beats the initial 0.0
        if n == 0 {
            return None;
        }
        // ratio n / len beats the best n / best_len when len < best_len
        let finder = memchr::memmem::Finder::new(name.as_bytes());
        for i in c.texts().names.containing(&finder) {
            if best.is_none_or(|(_, bl)| c.chars[i] < bl) {
                best = Some((i, c.chars[i]));
            }
        }
        best.map(|(i, _)| &c.pois[i])
    }

    /// `POICategoryResolver.resolve`: the category of a location in a city after the
    /// resolution rules, `None` when nothing matches.
    pub fn category(&self, name: &str, city: &str) -> Option<&str> {
        self.find(name, city)
            .map(|p| effective_category(&p.category, p.kind))
    }

    /// The cities of the table (sorted) with their venues in table order: the release's
    /// `all_poi_by_city.json` layout (`gtb poi-table`).
    pub fn cities(&self) -> impl Iterator<Item = (&str, &[Poi])> {
        let mut names: Vec<&String> = self.cities.keys().collect();
        names.sort();
        names
            .into_iter()
            .map(|c| (c.as_str(), self.cities[c].pois.as_slice()))
    }

    /// `POIOpeningHoursResolver.get_time_windows`: the windows of the matched POI on a date
    /// (`YYYY-MM-DD`); `None` when there is nothing to check.
    pub fn windows(&self, name: &str, city: &str, date: &str) -> Option<&[TimeWindow]> {
        let (mmdd, weekday) = date_parts(date)?;
        self.find(name, city)?
            .hours
            .as_ref()?
            .windows_on(&mmdd, weekday)
    }
}

/// Whether a venue keeps the must_eat item `x` as the witness contract reads it: the release
/// scores it there (`terms`, its food terms for the member), or it is a stand-in named after
/// it (no real venue of the table serves it).
pub fn must_eat_kept(terms: &[crate::rules::Term], poi: &Poi, x: &str) -> bool {
    terms.iter().any(|t| t.field == "must_eat" && t.item == x)
        || poi.stand_in && poi.name.contains(x)
}

/// The real venues of a city: attractions, named restaurants, named hotels.
fn real_pois(res: &Resources, c: CityId) -> Vec<Poi> {
    let ci = c as usize;
    let attractions = res.attractions[ci].iter().enumerate().map(|(i, a)| Poi {
        name: a.name.clone(),
        category: a.category.clone(),
        kind: PoiKind::Attraction,
        hours: a.hours.clone(),
        price: a.ticket,
        attraction: Some(i),
        stand_in: false,
    });
    let restaurants = res.food[ci]
        .iter()
        .filter(|f| f.kind == FoodKind::Restaurant)
        .map(|f| Poi {
            name: f.name.clone(),
            category: f.category.clone(),
            kind: PoiKind::Food,
            hours: None,
            price: f.price,
            attraction: None,
            stand_in: false,
        });
    let hotels = res.named_hotels[ci].iter().map(|h| Poi {
        name: h.name.clone(),
        category: h.category.clone(),
        kind: PoiKind::Hotel,
        hours: None,
        price: h.price,
        attraction: None,
        stand_in: false,
    });
    attractions.chain(restaurants).chain(hotels).collect()
}

/// The stand-in venues of a city (`plan::standin`): one per cuisine and dish row (priced
/// from the row), one per food category that no such row names (priced as the cheapest row
/// of that category, named restaurants included), so that every category has a venue whose
/// name shows it, and one per hotel band (priced at the band's lower price per room).
pub fn stand_ins(res: &Resources, c: CityId) -> Vec<Poi> {
    let ci = c as usize;
    let city = &res.cities[ci].name;
    let poi = |name: &str, category: &str, kind, price| Poi {
        name: stand_in(name, city),
        category: category.to_string(),
        kind,
        hours: None,
        price,
        attraction: None,
        stand_in: true,
    };
    let mut out: Vec<Poi> = res.food[ci]
        .iter()
        .filter(|f| f.kind != FoodKind::Restaurant)
        .map(|f| poi(&f.name, &f.category, PoiKind::Food, f.price))
        .collect();
    let mut categories: Vec<(&str, u32)> = Vec::new();
    for f in &res.food[ci] {
        match categories.iter_mut().find(|(k, _)| *k == f.category) {
            Some(e) => e.1 = e.1.min(f.price),
            None => categories.push((&f.category, f.price)),
        }
    }
    for (category, price) in categories {
        let shown = res.food[ci]
            .iter()
            .any(|f| f.kind != FoodKind::Restaurant && f.name.contains(category));
        if !shown {
            out.push(poi(category, category, PoiKind::Food, price));
        }
    }
    out.extend(
        res.hotels[ci]
            .iter()
            .map(|h| poi(&h.category, &h.category, PoiKind::Hotel, h.price_low)),
    );
    out
}

/// The scoring table in the release's `all_poi_by_city.json` layout: city → POIs with `name`,
/// `custom_category` (as stored: the release's resolver applies the fallbacks on reading),
/// `poi_type` (attractions / food / hotels) and `opening_hours` (the release's structure, or
/// null), and `modelled: true` on a stand-in (a table with stand-ins: a split's world,
/// `gtb-world`). Returns the bytes and the numbers of cities and POIs.
pub fn release_table(db: &PoiDb) -> (Vec<u8>, usize, usize) {
    let mut table = serde_json::Map::new();
    let mut pois = 0;
    for (city, list) in db.cities() {
        let rows: Vec<serde_json::Value> = list
            .iter()
            .map(|p| {
                let kind = match p.kind {
                    PoiKind::Attraction => "attractions",
                    PoiKind::Food => "food",
                    PoiKind::Hotel => "hotels",
                };
                let mut row = serde_json::json!({
                    "name": p.name,
                    "custom_category": p.category,
                    "poi_type": kind,
                    "opening_hours": p.hours,
                });
                if p.stand_in {
                    // a modelled venue (`X（city·示意）`), listed by a split's world
                    row["modelled"] = true.into();
                }
                row
            })
            .collect();
        pois += rows.len();
        table.insert(city.to_string(), serde_json::Value::Array(rows));
    }
    let n = table.len();
    (gtb_core::pyjson::to_vec(&table), n, pois)
}

/// `("MM-DD", ISO weekday)` of a `%Y-%m-%d` date (one- or two-digit month and day accepted, as
/// `strptime` does).
pub fn date_parts(date: &str) -> Option<(String, u8)> {
    use chrono::Datelike;
    let mut it = date.split('-');
    let (y, m, d) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some()
        || ![(y, 4, 4), (m, 1, 2), (d, 1, 2)].iter().all(|(s, lo, hi)| {
            (*lo..=*hi).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
        })
    {
        return None;
    }
    let day = chrono::NaiveDate::from_ymd_opt(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)?;
    Some((
        format!("{:02}-{:02}", day.month(), day.day()),
        day.weekday().number_from_monday() as u8,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poi(name: &str, category: &str, kind: PoiKind) -> Poi {
        Poi {
            name: name.into(),
            category: category.into(),
            kind,
            hours: None,
            price: 0,
            attraction: None,
            stand_in: false,
        }
    }

    #[test]
    fn resolution_rules() {
        let mut db = PoiDb::default();
        db.add(
            "西安市",
            poi("西安城墙景区", "文物古迹", PoiKind::Attraction),
        );
        db.add("西安市", poi("西安城墙", "古建筑", PoiKind::Attraction));
        db.add(
            "西安市",
            poi("大唐不夜城步行街", "旅游景点", PoiKind::Attraction),
        );
        db.add("西安市", poi("某宾馆", "连锁", PoiKind::Hotel));
        db.add("西安市", poi("老孙家饭庄", "米粉", PoiKind::Food));
        assert_eq!(db.category("西安城墙", "西安市"), Some("古建筑"));
        // substring: the shortest containing name wins
        assert_eq!(db.category("城墙", "西安市"), Some("古建筑"));
        assert_eq!(db.category("大唐不夜城", "西安市"), Some("公园"));
        assert_eq!(db.category("某宾馆", "西安市"), Some("商务酒店"));
        assert_eq!(db.category("老孙家", "西安市"), Some("中餐"));
        assert_eq!(db.category("西安城墙", "北京市"), None);
        assert_eq!(db.category("", "西安市"), None);
        // a stand-in label is no name of the table: nothing, as in the release
        assert_eq!(db.category("豪华型（西安市·示意）", "西安市"), None);
        assert_eq!(date_parts("2026-5-4"), Some(("05-04".into(), 1)));
        assert_eq!(date_parts("2026-02-30"), None);
    }
}
