//! Each POI's position (a node's own, the centroid of a way or relation) and city (the
//! smallest boundary containing it, else the nearest city centre within the radius), its row,
//! and the counts for the source notes.

use super::boundary::{self, AdminArea, NodeCoords};
use super::{ADAPTER, Admin, Candidate, HOURS_EXAMPLES, Shape};
use crate::import::CityDirectory;
use crate::{Coords, PoiRow};
use gtb_core::FastMap;
use serde_json::json;
use std::collections::BTreeMap;

/// The boundaries as polygons; also the relations whose outer rings did not close (an
/// extract clipped through the area) and were left out.
pub(super) fn admin_areas(
    admins: &[Admin],
    ways: &FastMap<i64, Vec<i64>>,
    nodes: &NodeCoords,
) -> (Vec<AdminArea>, Vec<String>) {
    let lines = |ids: &[i64]| {
        let parts: Vec<&[i64]> = ids
            .iter()
            .filter_map(|w| ways.get(w).map(Vec::as_slice))
            .collect();
        boundary::rings(&parts)
            .iter()
            .filter_map(|r| boundary::line(r, nodes))
            .collect::<Vec<_>>()
    };
    let (mut areas, mut incomplete) = (Vec::new(), Vec::new());
    for a in admins {
        let outer = lines(&a.outer);
        let area = (!outer.is_empty())
            .then(|| {
                AdminArea::new(
                    a.city.clone(),
                    a.relation,
                    boundary::polygons(&outer, &lines(&a.inner)),
                )
            })
            .flatten();
        match area {
            Some(x) => areas.push(x),
            None => incomplete.push(format!("r{} {}", a.relation, a.city)),
        }
    }
    (areas, incomplete)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Method {
    Boundary,
    NearestCentre,
}

pub(super) struct Placed {
    lat: f64,
    lng: f64,
    city: String,
    method: Method,
}

pub(super) struct Drop {
    pub(super) field: &'static str,
    pub(super) kind: &'static str,
    pub(super) reason: String,
}

/// A POI's position and city, or why it has none.
pub(super) fn place(
    p: &Candidate,
    ways: &FastMap<i64, Vec<i64>>,
    nodes: &NodeCoords,
    areas: &[AdminArea],
    cities: &CityDirectory,
    radius_km: f64,
) -> Result<Placed, Drop> {
    let Some(name) = &p.name else {
        return Err(Drop {
            field: "name",
            kind: "no name",
            reason: format!("{} has no name, name:zh or name:zh-Hans", p.class.raw),
        });
    };
    let pos = match &p.shape {
        Shape::Point(lat, lon) => Some((*lat, *lon)),
        Shape::Way(refs) => boundary::centre(&[refs.as_slice()], nodes),
        Shape::Relation(outer) => {
            let parts: Vec<&[i64]> = outer
                .iter()
                .filter_map(|w| ways.get(w).map(Vec::as_slice))
                .collect();
            boundary::centre(&parts, nodes)
        }
    };
    let Some((lat, lng)) = pos else {
        return Err(Drop {
            field: "lat",
            kind: "no coordinates",
            reason: format!("{name:?}: none of its nodes is in the extract"),
        });
    };
    if let Some(a) = boundary::smallest_containing(areas, lat, lng) {
        let city = a.city.clone();
        return Ok(Placed {
            lat,
            lng,
            city,
            method: Method::Boundary,
        });
    }
    match cities.nearest(lat, lng) {
        Some((c, d)) if d <= radius_km => Ok(Placed {
            lat,
            lng,
            city: c.name.clone(),
            method: Method::NearestCentre,
        }),
        near => Err(Drop {
            field: "city",
            kind: "outside every city",
            reason: match near {
                Some((c, d)) => format!(
                    "{name:?} ({lat:.5}, {lng:.5}) is in no city boundary and {d:.0} km from the nearest city centre ({}), beyond --radius-km {radius_km}",
                    c.name
                ),
                None => format!("{name:?}: no city is known"),
            },
        }),
    }
}

/// Counts for the source notes.
#[derive(Default)]
pub(super) struct Tally {
    methods: BTreeMap<Method, u64>,
    pub(super) drops: BTreeMap<&'static str, u64>,
    hours_known: u64,
    hours_absent: u64,
    hours_untranslatable: u64,
    hours_examples: Vec<String>,
}

impl Tally {
    pub(super) fn methods(&self, drops: &BTreeMap<&str, u64>) -> serde_json::Value {
        let get = |m| self.methods.get(&m).copied().unwrap_or(0);
        json!({
            "boundary": get(Method::Boundary),
            "nearest_centre": get(Method::NearestCentre),
            "outside_every_city": drops.get("outside every city").copied().unwrap_or(0),
        })
    }
    pub(super) fn hours_note(&self) -> serde_json::Value {
        json!({
            "translated": self.hours_known,
            "absent": self.hours_absent,
            "untranslatable": self.hours_untranslatable,
            "untranslatable_examples": self.hours_examples,
        })
    }
}

pub(super) fn row(p: Candidate, pl: Placed, licence: &str, tally: &mut Tally) -> PoiRow {
    *tally.methods.entry(pl.method).or_default() += 1;
    let name = p.name.as_deref().unwrap_or_default();
    let mut r = PoiRow::new(&pl.city, p.class.poi_type, name, ADAPTER, p.id.source_id())
        .with_category(&p.class.raw, p.class.category);
    (r.lat, r.lng, r.coords) = (Some(pl.lat), Some(pl.lng), Some(Coords::Wgs84));
    r.opening_hours = match p.hours {
        Some(Ok(h)) => {
            tally.hours_known += 1;
            Some(h)
        }
        Some(Err(raw)) => {
            tally.hours_untranslatable += 1;
            if tally.hours_examples.len() < HOURS_EXAMPLES && !tally.hours_examples.contains(&raw) {
                tally.hours_examples.push(raw);
            }
            None
        }
        None => {
            tally.hours_absent += 1;
            None
        }
    };
    r.price = p.price;
    if let Some((v, s)) = p.popularity {
        (r.popularity, r.popularity_source) = (Some(v), s);
    }
    r.licence = licence.to_string();
    r
}
