//! Builds over a POI store (`--resources STORE`): the store's attractions, restaurants and
//! hotel prices take the place of the embedded snapshot's, city by city, so that sampling,
//! generation, validation and the LLM prompt read real POIs without knowing where they came
//! from. What stays from the snapshot: cities (coordinates, tiers, hubs), transport, profiles,
//! archetypes, and the cuisines and dishes of each city's food list.
//!
//! A city is a destination only when the store covers it well enough (`[store]
//! min_attractions`, `min_food`); the others are excluded with a reason, and so are store
//! cities gtb has no row for in cities.csv (no coordinates, tier or transport to plan with).
//! The clusters are recomputed over the destinations that remain. docs/RESOURCES.md.

use crate::{PoiRow, PoiType, Store};
use gtb_core::config::StoreSettings;
use gtb_resources::{
    Attraction, CityId, Food, FoodKind, HotelBand, NamedHotel, Resources, StoreUse,
};
use std::collections::BTreeMap;

/// Load every resource from the configured paths, then the POI store over them when
/// `paths.resources` names one (`store::overlay`).
pub fn load_with_store(
    paths: &gtb_core::config::Paths,
    settings: &gtb_core::config::StoreSettings,
) -> anyhow::Result<Resources> {
    let mut res = gtb_resources::load(paths)?;
    let Some(dir) = &paths.resources else {
        return Ok(res);
    };
    let st = crate::Store::open(dir)?;
    res.input_digests.push((
        gtb_resources::rel(&dir.join(crate::MANIFEST_FILE)),
        st.digest.clone(),
    ));
    let json = serde_json::to_vec(settings).expect("settings serialise");
    res.input_digests.push((
        "[store] settings".into(),
        gtb_core::digest::digest_bytes(&json),
    ));
    res.input_digests.sort();
    let used = overlay(&mut res, &st, settings);
    res.index_names();
    if used.used.is_empty() {
        anyhow::bail!(
            "{}: no city of the store can be a destination ({} excluded; see store.min_attractions and store.min_food): {}",
            dir.display(),
            used.excluded.len(),
            used.excluded
                .iter()
                .take(5)
                .map(|(c, why)| format!("{c}: {why}"))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    res.store = Some(used);
    Ok(res)
}

/// Lay `store` over the snapshot in `res`.
pub fn overlay(res: &mut Resources, store: &Store, settings: &StoreSettings) -> StoreUse {
    let mut by_city: BTreeMap<&str, [Vec<&PoiRow>; 3]> = BTreeMap::new();
    for r in &store.rows {
        by_city.entry(r.city.as_str()).or_default()[r.poi_type as usize].push(r);
    }
    let mut used = BTreeMap::new();
    let mut excluded = BTreeMap::new();
    let mut popularity = BTreeMap::new();
    for city in by_city.keys() {
        if res.city_id(city).is_none() {
            excluded.insert(
                city.to_string(),
                "not in cities.csv: no coordinates, tier or transport to plan a trip with".into(),
            );
        }
    }
    for c in 0..res.cities.len() {
        let name = res.cities[c].name.clone();
        let empty: [Vec<&PoiRow>; 3] = Default::default();
        let rows = by_city.get(name.as_str()).unwrap_or(&empty);
        let [atts, food, hotels] = rows;
        let snapshot = res.attractions[c].clone();
        let why = if atts.len() < settings.min_attractions {
            Some(format!(
                "{} attractions in the store, below store.min_attractions = {}",
                atts.len(),
                settings.min_attractions
            ))
        } else if food.len() < settings.min_food {
            Some(format!(
                "{} restaurants in the store, below store.min_food = {}",
                food.len(),
                settings.min_food
            ))
        } else {
            None
        };
        res.attractions[c] = Vec::new();
        res.aliases[c].clear();
        if let Some(why) = why {
            if !atts.is_empty() || !food.is_empty() || !hotels.is_empty() {
                excluded.insert(name, why);
            }
            continue;
        }
        let (list, how) = attractions(c as CityId, &res.cities[c], atts, &snapshot);
        for (k, n) in how {
            *popularity.entry(k).or_default() += n;
        }
        res.attractions[c] = list;
        replace_restaurants(&mut res.food[c], c as CityId, food);
        let priced = replace_hotel_bands(&mut res.hotels[c], c as CityId, hotels);
        res.named_hotels[c] = named_hotels(c as CityId, hotels);
        if res.hotels[c].is_empty() {
            res.attractions[c].clear();
            excluded.insert(
                name,
                "no hotel price: neither the store nor the snapshot has one".into(),
            );
            continue;
        }
        used.insert(name, [res.attractions[c].len(), food.len(), priced]);
    }
    res.named_restaurants = settings.named_restaurants;
    // clusters over the destinations that remain, about as many per destination as the
    // snapshot's table has
    let before = res.clusters.len().max(1) as f64 / snapshot_destinations(res) as f64;
    let target = ((used.len() as f64) * before).round().max(1.0) as usize;
    let params = gtb_clusters::ClusterParams {
        target,
        ..Default::default()
    };
    res.clusters = gtb_clusters::build(res, params);
    StoreUse {
        store: store.dir.display().to_string(),
        pois_sha256: store.manifest.pois.sha256.clone(),
        settings: settings.clone(),
        used,
        excluded,
        popularity,
    }
}

/// Destinations of the snapshot's cluster table (its cities), at least 1.
fn snapshot_destinations(res: &Resources) -> usize {
    let mut seen: Vec<CityId> = res.clusters.iter().flat_map(|c| c.cities.clone()).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len().max(1)
}

/// The store's attractions of a city as the build reads them, sorted by popularity (1..100,
/// from the rank of each row's signal within the city) then name. Rows without a signal
/// rank by the stand-in: the snapshot's popularity of the same name (a curated list of
/// well-known sights), else the release's grade categories (5A > 4A > 3A) over the rest.
fn attractions(
    city: CityId,
    info: &gtb_resources::City,
    rows: &[&PoiRow],
    snapshot: &[Attraction],
) -> (Vec<Attraction>, BTreeMap<String, usize>) {
    let mut how: BTreeMap<String, usize> = BTreeMap::new();
    // (signal tier, score): rows with a source signal rank above stand-ins of equal score
    let keyed: Vec<(f64, &PoiRow)> = rows
        .iter()
        .map(|r| {
            let (key, src) = match r.popularity {
                Some(p) if p.is_finite() => (p, r.popularity_source.as_str().to_string()),
                _ => stand_in(r, snapshot),
            };
            *how.entry(src).or_default() += 1;
            (key, *r)
        })
        .collect();
    let mut order: Vec<usize> = (0..keyed.len()).collect();
    order.sort_by(|&a, &b| {
        keyed[b]
            .0
            .total_cmp(&keyed[a].0)
            .then_with(|| keyed[a].1.name.cmp(&keyed[b].1.name))
    });
    let n = order.len().max(1);
    let mut out: Vec<Attraction> = order
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let r = keyed[i].1;
            Attraction {
                city,
                name: r.name.clone(),
                category: r.category_or_fallback().to_string(),
                lat: r.lat.unwrap_or(info.lat),
                lng: r.lng.unwrap_or(info.lng),
                hours: r.opening_hours.clone(),
                ticket: r.price.map_or(0, |p| p.round().min(u32::MAX as f64) as u32),
                // rank percentile: the most popular 100, the least 1
                popularity: 100 - ((99 * rank) / n) as u32,
                parent: None,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.popularity
            .cmp(&a.popularity)
            .then_with(|| a.name.cmp(&b.name))
    });
    (out, how)
}

/// A row's popularity when its source has none, and what stood in.
fn stand_in(r: &PoiRow, snapshot: &[Attraction]) -> (f64, String) {
    if let Some(a) = snapshot.iter().find(|a| a.name == r.name) {
        // snapshot popularity 1..100 maps above every grade score
        return (
            1000.0 + a.popularity as f64,
            "stand-in: snapshot popularity".into(),
        );
    }
    let grade = match r.category_or_fallback() {
        "5A景区" => 3.0,
        "4A景区" => 2.0,
        "3A景区" => 1.0,
        _ => 0.0,
    };
    (grade, "stand-in: grade category".into())
}

/// The city's restaurants become the store's (cuisines and dishes stay), most popular
/// first; the release's fallback category where the store has none.
fn replace_restaurants(list: &mut Vec<Food>, city: CityId, rows: &[&PoiRow]) {
    list.retain(|f| f.kind != FoodKind::Restaurant);
    let mut rows: Vec<&PoiRow> = rows.to_vec();
    rows.sort_by(|a, b| {
        let (pa, pb) = (a.popularity.unwrap_or(-1.0), b.popularity.unwrap_or(-1.0));
        pb.total_cmp(&pa).then_with(|| a.name.cmp(&b.name))
    });
    list.extend(rows.into_iter().map(|r| Food {
        city,
        name: r.name.clone(),
        kind: FoodKind::Restaurant,
        category: r.category_or_fallback().to_string(),
        price: r.price.map_or(0, |p| p.round().min(u32::MAX as f64) as u32),
        // the store's own table names it
        general_knowledge: false,
    }));
}

/// The store's hotels with a nightly price, most popular first (then by name): the venues
/// plans sleep in. Unpriced ones cannot be costed and are left out.
fn named_hotels(city: CityId, rows: &[&PoiRow]) -> Vec<NamedHotel> {
    let mut rows: Vec<&PoiRow> = rows
        .iter()
        .copied()
        .filter(|r| r.price.is_some_and(|p| p >= 1.0))
        .collect();
    rows.sort_by(|a, b| {
        let (pa, pb) = (a.popularity.unwrap_or(-1.0), b.popularity.unwrap_or(-1.0));
        pb.total_cmp(&pa).then_with(|| a.name.cmp(&b.name))
    });
    // one venue per name, the most popular (the release's table keeps one entry per name)
    let mut seen = std::collections::BTreeSet::new();
    rows.retain(|r| seen.insert(r.name.as_str()));
    rows.into_iter()
        .map(|r| NamedHotel {
            city,
            name: r.name.clone(),
            category: r.category_or_fallback().to_string(),
            price: r.price.map_or(0, |p| p.round().min(u32::MAX as f64) as u32),
        })
        .collect()
}

/// Hotel price bands from the store where it prices at least 3 hotels of a category: the
/// 10th and 90th percentiles of their nightly prices (the snapshot's bands stay for the
/// other categories). Returns the number of store hotels with a price.
fn replace_hotel_bands(bands: &mut Vec<HotelBand>, city: CityId, rows: &[&PoiRow]) -> usize {
    let mut prices: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in rows {
        if let Some(p) = r.price.filter(|p| *p > 0.0) {
            prices.entry(r.category_or_fallback()).or_default().push(p);
        }
    }
    let priced = prices.values().map(Vec::len).sum();
    for (category, mut p) in prices {
        if p.len() < 3 {
            continue;
        }
        p.sort_by(f64::total_cmp);
        let q = |f: f64| p[((p.len() - 1) as f64 * f).round() as usize].round() as u32;
        let band = HotelBand {
            city,
            category: category.to_string(),
            price_low: q(0.1),
            price_high: q(0.9).max(q(0.1)),
        };
        match bands.iter_mut().find(|b| b.category == category) {
            Some(b) => *b = band,
            None => bands.push(band),
        }
    }
    priced
}

/// Keep in step with `PoiType`'s order (the index of `by_city`'s arrays).
const _: () = {
    assert!(PoiType::Attractions as usize == 0);
    assert!(PoiType::Food as usize == 1);
    assert!(PoiType::Hotels as usize == 2);
};
