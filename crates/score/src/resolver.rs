//! The POI table a plan is scored against, with the release's resolution rules
//! (`utils/eval_util.py`): per city, an exact name first, then the stored name that contains
//! the location with the best length ratio (the first such name on ties); categories outside
//! the vocabularies fall back to 公园 / 中餐 / 商务酒店. Built from our resources: attractions
//! and named restaurants under their names, hotel bands, cuisines and dishes under their
//! stand-in labels (`plan::standin`), plus a stand-in for every food category of a city that
//! no cuisine or dish row names (so that every category has a venue whose name shows it). It
//! is also the solver's catalogue of venues and prices.

use gtb_plan::{parse_stand_in, stand_in};
use gtb_resources::hours::{OpeningHours, TimeWindow};
use gtb_resources::{FoodKind, Resources, vocab};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoiKind {
    Attraction,
    Food,
    Hotel,
}

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
}

#[derive(Debug, Default)]
pub struct PoiDb {
    cities: HashMap<String, CityPois>,
}

/// The resolution rules applied to a stored category.
pub fn effective_category(category: &str, kind: PoiKind) -> &str {
    let fallback = match kind {
        PoiKind::Attraction => "公园",
        PoiKind::Food => "中餐",
        PoiKind::Hotel => "商务酒店",
    };
    let excluded = match kind {
        PoiKind::Attraction => vocab::EXCLUDED_ATTRACTION_CATEGORIES.contains(&category),
        PoiKind::Food => vocab::EXCLUDED_FOOD_CATEGORIES.contains(&category),
        PoiKind::Hotel => !vocab::is_hotel_category(category),
    };
    if category.is_empty() || excluded {
        fallback
    } else {
        category
    }
}

impl PoiDb {
    /// Every venue of the resources, city by city: attractions, food, hotels.
    pub fn from_resources(res: &Resources) -> Self {
        let mut db = PoiDb::default();
        for (c, city) in res.cities.iter().enumerate() {
            for (i, a) in res.attractions[c].iter().enumerate() {
                db.add(
                    &city.name,
                    Poi {
                        name: a.name.clone(),
                        category: a.category.clone(),
                        kind: PoiKind::Attraction,
                        hours: a.hours.clone(),
                        price: a.ticket,
                        attraction: Some(i),
                        stand_in: false,
                    },
                );
            }
            for f in &res.food[c] {
                let named = f.kind == FoodKind::Restaurant;
                db.add(
                    &city.name,
                    Poi {
                        name: if named {
                            f.name.clone()
                        } else {
                            stand_in(&f.name, &city.name)
                        },
                        category: f.category.clone(),
                        kind: PoiKind::Food,
                        hours: None,
                        price: f.price,
                        attraction: None,
                        stand_in: !named,
                    },
                );
            }
            // a venue whose name shows each food category of the city: a category known only
            // from named restaurants (or from cuisine rows named otherwise) gets a stand-in
            let mut categories: Vec<(&str, u32)> = Vec::new();
            for f in &res.food[c] {
                match categories.iter_mut().find(|(k, _)| *k == f.category) {
                    Some(e) => e.1 = e.1.min(f.price),
                    None => categories.push((&f.category, f.price)),
                }
            }
            for (category, price) in categories {
                if res.food[c]
                    .iter()
                    .any(|f| f.kind != FoodKind::Restaurant && f.name.contains(category))
                {
                    continue;
                }
                db.add(
                    &city.name,
                    Poi {
                        name: stand_in(category, &city.name),
                        category: category.to_string(),
                        kind: PoiKind::Food,
                        hours: None,
                        price,
                        attraction: None,
                        stand_in: true,
                    },
                );
            }
            for h in &res.hotels[c] {
                db.add(
                    &city.name,
                    Poi {
                        name: stand_in(&h.category, &city.name),
                        category: h.category.clone(),
                        kind: PoiKind::Hotel,
                        hours: None,
                        price: h.price_low,
                        attraction: None,
                        stand_in: true,
                    },
                );
            }
        }
        db
    }

    pub fn add(&mut self, city: &str, poi: Poi) {
        let c = self.cities.entry(city.to_string()).or_default();
        match c.exact.get(&poi.name) {
            Some(&i) => c.pois[i] = poi,
            None => {
                c.exact.insert(poi.name.clone(), c.pois.len());
                c.chars.push(poi.name.chars().count());
                c.pois.push(poi);
            }
        }
    }

    /// The venues of a city, in table order.
    pub fn city(&self, city: &str) -> &[Poi] {
        self.cities.get(city).map_or(&[], |c| c.pois.as_slice())
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
        for (i, p) in c.pois.iter().enumerate() {
            // ratio n / len beats the best n / best_len when len < best_len; a zero-length
            // query has ratio 0 and never beats the initial 0.0
            if n > 0 && p.name.contains(name) && best.is_none_or(|(_, bl)| c.chars[i] < bl) {
                best = Some((i, c.chars[i]));
            }
        }
        best.map(|(i, _)| &c.pois[i])
    }

    /// `POICategoryResolver.resolve`: the category of a location in a city after the
    /// resolution rules, `None` when nothing matches. A stand-in label that the table does not
    /// hold still resolves to the vocabulary category it names.
    pub fn category(&self, name: &str, city: &str) -> Option<&str> {
        if let Some(p) = self.cities.get(city).and_then(|c| c.exact.get(name)) {
            let p = &self.cities[city].pois[*p];
            return Some(effective_category(&p.category, p.kind));
        }
        if let Some((kind, at)) = parse_stand_in(name)
            && at == city
            && let Some(k) = vocab::HOTEL_CATEGORIES
                .iter()
                .chain(vocab::FOOD_CATEGORIES.iter())
                .find(|c| **c == kind)
        {
            return Some(k);
        }
        self.find(name, city)
            .map(|p| effective_category(&p.category, p.kind))
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
        assert_eq!(
            db.category("豪华型（西安市·示意）", "西安市"),
            Some("豪华型")
        );
        assert_eq!(db.category("豪华型（北京市·示意）", "西安市"), None);
        assert_eq!(date_parts("2026-5-4"), Some(("05-04".into(), 1)));
        assert_eq!(date_parts("2026-02-30"), None);
    }
}
