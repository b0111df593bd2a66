//! `gtb import osm FILE.osm.pbf`: POIs of an OpenStreetMap extract (docs/RESOURCES.md,
//! "Adapter: osm"). Three passes over the file, each decoding blobs in parallel (rayon) and
//! merging the results in file order, so the store does not depend on the thread count:
//!
//! 1. every element: POI nodes, ways and multipolygon relations (by their tags), and the
//!    administrative boundaries (admin_level 4-6) whose names are release cities;
//! 2. the ways that those relations are made of (only when there are such relations);
//! 3. the coordinates of the nodes the ways need.
//!
//! Then each POI gets a position (a node's own; the centroid of a way or relation) and a city
//! (the smallest boundary containing it, else the nearest city centre within `--radius-km`).

mod boundary;
pub mod classify;
pub mod hours;

use super::{CityDirectory, ImportContext};
use crate::{Coords, PoiRow, PoiType, PopularitySource, StoreBuilder};
use anyhow::{Context, Result, anyhow};
use boundary::{AdminArea, NodeCoords};
use classify::{Class, Tags, tag};
use gtb_core::FastMap;
use gtb_resources::hours::OpeningHours;
use osmpbf::{Blob, BlobDecode, BlobReader, PrimitiveBlock, RelMemberType};
use rayon::prelude::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

type FastSet<T> = std::collections::HashSet<T, foldhash::fast::FixedState>;

const ADAPTER: &str = "osm";
/// Blob content flags (which passes need to decode it).
const NODES: u8 = 1;
const WAYS: u8 = 2;
/// Untranslatable opening_hours values quoted in the source notes.
const HOURS_EXAMPLES: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Node,
    Way,
    Relation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OsmId {
    kind: Kind,
    id: i64,
}

impl OsmId {
    /// `n123`, `w45`, `r6`
    fn source_id(self) -> String {
        let k = match self.kind {
            Kind::Node => 'n',
            Kind::Way => 'w',
            Kind::Relation => 'r',
        };
        format!("{k}{}", self.id)
    }
    /// `node 123`, `way 45`, `relation 6`
    fn position(self) -> String {
        let k = match self.kind {
            Kind::Node => "node",
            Kind::Way => "way",
            Kind::Relation => "relation",
        };
        format!("{k} {}", self.id)
    }
}

/// Where a POI is, as read in pass 1.
#[derive(Debug)]
enum Shape {
    Point(f64, f64),
    /// node ids
    Way(Vec<i64>),
    /// ids of the outer member ways
    Relation(Vec<i64>),
}

/// A POI element with everything its tags say.
#[derive(Debug)]
struct Candidate {
    id: OsmId,
    class: Class,
    name: Option<String>,
    /// `None`: no opening_hours tag; `Some(Err)`: untranslatable (the raw value)
    hours: Option<Result<OpeningHours, String>>,
    price: Option<f64>,
    popularity: Option<(f64, PopularitySource)>,
    shape: Shape,
}

/// An administrative boundary relation whose name is a release city.
#[derive(Debug)]
struct Admin {
    relation: i64,
    city: String,
    outer: Vec<i64>,
    inner: Vec<i64>,
}

/// What pass 1 found in one blob.
#[derive(Debug, Default)]
struct BlobScan {
    kinds: u8,
    /// nodes, ways, relations
    elements: [u64; 3],
    pois: Vec<Candidate>,
    admins: Vec<Admin>,
}

pub fn import(ctx: &ImportContext, out: &mut StoreBuilder) -> Result<()> {
    let mut info = ctx.source_info()?;
    let scans = read_blocks(ctx, "osm scan", |_| false, |b| scan_block(b, &ctx.cities))?;
    let kinds: Vec<u8> = scans.iter().map(|s| s.kinds).collect();
    let mut elements = [0u64; 3];
    let (mut pois, mut admins) = (Vec::new(), Vec::new());
    for s in scans {
        for (e, n) in elements.iter_mut().zip(s.elements) {
            *e += n;
        }
        pois.extend(s.pois);
        admins.extend(s.admins);
    }
    admins.sort_by_key(|a| a.relation);
    let ways = relation_ways(ctx, &kinds, &pois, &admins)?;
    let nodes = way_nodes(ctx, &kinds, &pois, &ways)?;
    let (areas, incomplete) = admin_areas(&admins, &ways, &nodes);
    let radius = ctx.opts.radius_km;
    let placed: Vec<Result<Placed, Drop>> = pois
        .par_iter()
        .map(|p| place(p, &ways, &nodes, &areas, &ctx.cities, radius))
        .collect();
    let mut tally = Tally::default();
    let licence = ctx.opts.licence();
    for (p, placed) in pois.into_iter().zip(placed) {
        match placed {
            Ok(pl) => out.push(row(p, pl, &licence, &mut tally)),
            Err(d) => {
                *tally.drops.entry(d.kind).or_default() += 1;
                out.drop_row(p.id.position(), d.field, d.kind, d.reason)
            }
        }
    }
    let notes = &mut info.notes;
    notes.insert(
        "elements".into(),
        json!({"nodes": elements[0], "ways": elements[1], "relations": elements[2]}),
    );
    notes.insert("city_assignment".into(), tally.methods(&tally.drops));
    let used: Vec<String> = areas
        .iter()
        .map(|a| format!("r{} {}", a.relation, a.city))
        .collect();
    notes.insert(
        "boundaries".into(),
        json!({"used": used, "not_closed": incomplete}),
    );
    notes.insert("opening_hours".into(), tally.hours_note());
    notes.insert(
        "popularity".into(),
        json!("hotels: stars=* (stars); others: derived = number of wikidata, wikipedia and heritage tags present (0 = none)"),
    );
    out.add_source(info);
    Ok(())
}

/// Read every blob of the input, decoding on all threads as blobs are read (rayon's
/// `par_bridge`, which holds only as many blobs as there are threads); blobs for which
/// `skip(index)` holds are not decoded. Results come back in file order; of several errors,
/// the first in the file is reported.
fn read_blocks<T, F>(
    ctx: &ImportContext,
    what: &str,
    skip: impl Fn(usize) -> bool + Sync + Send,
    f: F,
) -> Result<Vec<T>>
where
    T: Send + Default,
    F: Fn(&PrimitiveBlock) -> T + Sync,
{
    let path = ctx.opts.input.as_path();
    let size = std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    let bar = ctx.bar(size, what);
    let reader =
        BlobReader::from_path(path).map_err(|e| anyhow!("{}: cannot open: {e}", path.display()))?;
    let mut results: Vec<(usize, Result<T>)> = reader
        .enumerate()
        .inspect(|(_, b)| {
            if let Some(off) = b.as_ref().ok().and_then(Blob::offset) {
                bar.set_position(off.0);
            }
        })
        .filter(|(i, _)| !skip(*i))
        .par_bridge()
        .map(|(i, blob)| {
            let r = match blob {
                Ok(b) => decode(path, i, &b, &f),
                Err(e) => Err(anyhow!("{}: blob {i}: not PBF: {e}", path.display())),
            };
            (i, r)
        })
        .collect();
    bar.finish_and_clear();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// One blob through `f`. osmpbf panics on some malformed data (an unknown member type):
/// that becomes an error naming the blob, as any other decoding error.
fn decode<T: Default, F: Fn(&PrimitiveBlock) -> T>(
    path: &Path,
    i: usize,
    blob: &Blob,
    f: &F,
) -> Result<T> {
    let at = || format!("{}: blob {i}", path.display());
    catch_unwind(AssertUnwindSafe(|| match blob.decode() {
        Ok(BlobDecode::OsmData(block)) => Ok(f(&block)),
        Ok(_) => Ok(T::default()),
        Err(e) => Err(anyhow!("{}: cannot decode: {e}", at())),
    }))
    .unwrap_or_else(|_| Err(anyhow!("{}: malformed primitive block", at())))
}

/// A node of either encoding (dense or plain): counted, and a POI candidate when its tags say so.
fn scan_node<'a>(
    s: &mut BlobScan,
    tags: &mut Vec<(&'a str, &'a str)>,
    id: i64,
    node_tags: impl Iterator<Item = (&'a str, &'a str)>,
    (lat, lon): (f64, f64),
) {
    (s.kinds, s.elements[0]) = (s.kinds | NODES, s.elements[0] + 1);
    tags.clear();
    tags.extend(node_tags);
    let id = OsmId {
        kind: Kind::Node,
        id,
    };
    s.pois
        .extend(candidate(id, tags, || Shape::Point(lat, lon)));
}

/// Pass 1 over one block.
fn scan_block(block: &PrimitiveBlock, cities: &CityDirectory) -> BlobScan {
    let mut s = BlobScan::default();
    let mut tags: Vec<(&str, &str)> = Vec::new();
    for group in block.groups() {
        for n in group.dense_nodes() {
            scan_node(&mut s, &mut tags, n.id(), n.tags(), (n.lat(), n.lon()));
        }
        for n in group.nodes() {
            scan_node(&mut s, &mut tags, n.id(), n.tags(), (n.lat(), n.lon()));
        }
        for w in group.ways() {
            (s.kinds, s.elements[1]) = (s.kinds | WAYS, s.elements[1] + 1);
            tags.clear();
            tags.extend(w.tags());
            let id = OsmId {
                kind: Kind::Way,
                id: w.id(),
            };
            s.pois
                .extend(candidate(id, &tags, || Shape::Way(w.refs().collect())));
        }
        for r in group.relations() {
            s.elements[2] += 1;
            tags.clear();
            tags.extend(r.tags());
            let (mut outer, mut inner) = (Vec::new(), Vec::new());
            for m in r.members() {
                if m.member_type == RelMemberType::Way {
                    match m.role().unwrap_or("") {
                        "outer" | "" => outer.push(m.member_id),
                        "inner" => inner.push(m.member_id),
                        _ => {}
                    }
                }
            }
            if let Some(city) = admin_city(&tags, cities) {
                s.admins.push(Admin {
                    relation: r.id(),
                    city,
                    outer,
                    inner,
                });
            } else if tag(&tags, "type") == Some("multipolygon") {
                let id = OsmId {
                    kind: Kind::Relation,
                    id: r.id(),
                };
                s.pois
                    .extend(candidate(id, &tags, || Shape::Relation(outer)));
            }
        }
    }
    s
}

/// The release city of an administrative boundary of admin_level 4-6, if its name is one:
/// the release name itself (北京市) or its short form (北京). A district whose short form
/// merely matches a city elsewhere (北京's 朝阳区 is not 朝阳市) does not count.
fn admin_city(tags: &Tags, cities: &CityDirectory) -> Option<String> {
    if tag(tags, "boundary") != Some("administrative") {
        return None;
    }
    let level: u8 = tag(tags, "admin_level")?.parse().ok()?;
    if !(4..=6).contains(&level) {
        return None;
    }
    ["name:zh", "name:zh-Hans", "name"]
        .into_iter()
        .filter_map(|k| tag(tags, k))
        .find_map(|n| {
            cities
                .resolve(n)
                .filter(|c| c.name == n || c.short_name() == n)
                .map(|c| c.name.clone())
        })
}

/// A POI candidate when the tags make one.
fn candidate(id: OsmId, tags: &Tags, shape: impl FnOnce() -> Shape) -> Option<Candidate> {
    let class = classify::classify(tags)?;
    let hours = tag(tags, "opening_hours").map(|h| hours::translate(h).map_err(|_| h.to_string()));
    let derived = ["wikidata", "wikipedia", "heritage"]
        .iter()
        .filter(|k| tag(tags, k).is_some())
        .count() as f64;
    let popularity = match classify::stars(tags) {
        Some(s) if class.poi_type == PoiType::Hotels => {
            Some((f64::from(s), PopularitySource::Stars))
        }
        _ if derived > 0.0 => Some((derived, PopularitySource::Derived)),
        _ => None,
    };
    Some(Candidate {
        id,
        price: price(tags, class.poi_type),
        class,
        name: classify::name(tags).map(str::to_string),
        hours,
        popularity,
        shape: shape(),
    })
}

/// CNY from `charge=*` (`50`, `50 CNY`, `CNY 50`, `¥50`, `50元`); `fee=no` is free for an
/// attraction. Other currencies are not converted.
fn price(tags: &Tags, t: PoiType) -> Option<f64> {
    if let Some(c) = tag(tags, "charge") {
        let mut s = c.trim();
        for unit in ["CNY", "RMB", "¥", "￥", "元"] {
            s = s.trim_start_matches(unit).trim_end_matches(unit).trim();
        }
        if let Ok(v) = s.parse::<f64>()
            && v.is_finite()
            && v >= 0.0
        {
            return Some(v);
        }
    }
    (t == PoiType::Attractions && tag(tags, "fee") == Some("no")).then_some(0.0)
}

/// Pass 2: the node lists of the ways that boundary and POI relations are made of.
fn relation_ways(
    ctx: &ImportContext,
    kinds: &[u8],
    pois: &[Candidate],
    admins: &[Admin],
) -> Result<FastMap<i64, Vec<i64>>> {
    let mut need: FastSet<i64> = FastSet::default();
    for a in admins {
        need.extend(a.outer.iter().chain(&a.inner));
    }
    for p in pois {
        if let Shape::Relation(w) = &p.shape
            && p.name.is_some()
        {
            need.extend(w);
        }
    }
    if need.is_empty() {
        return Ok(FastMap::default());
    }
    let found = read_blocks(
        ctx,
        "osm ways",
        |i| kinds[i] & WAYS == 0,
        |b| {
            let mut v = Vec::new();
            for g in b.groups() {
                for w in g.ways() {
                    if need.contains(&w.id()) {
                        v.push((w.id(), w.refs().collect::<Vec<i64>>()));
                    }
                }
            }
            v
        },
    )?;
    Ok(found.into_iter().flatten().collect())
}

/// Pass 3: the coordinates of every node of the POI ways and of the relations' ways.
fn way_nodes(
    ctx: &ImportContext,
    kinds: &[u8],
    pois: &[Candidate],
    ways: &FastMap<i64, Vec<i64>>,
) -> Result<NodeCoords> {
    let mut need: FastSet<i64> = FastSet::default();
    for p in pois {
        if let Shape::Way(refs) = &p.shape
            && p.name.is_some()
        {
            need.extend(refs);
        }
    }
    for refs in ways.values() {
        need.extend(refs);
    }
    if need.is_empty() {
        return Ok(NodeCoords::default());
    }
    let found = read_blocks(
        ctx,
        "osm nodes",
        |i| kinds[i] & NODES == 0,
        |b| {
            let mut v = Vec::new();
            for g in b.groups() {
                for n in g.dense_nodes() {
                    if need.contains(&n.id()) {
                        v.push((n.id(), (n.lat(), n.lon())));
                    }
                }
                for n in g.nodes() {
                    if need.contains(&n.id()) {
                        v.push((n.id(), (n.lat(), n.lon())));
                    }
                }
            }
            v
        },
    )?;
    Ok(found.into_iter().flatten().collect())
}

/// The boundaries as polygons; also the relations whose outer rings did not close (an
/// extract clipped through the area) and were left out.
fn admin_areas(
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

struct Placed {
    lat: f64,
    lng: f64,
    city: String,
    method: Method,
}

struct Drop {
    field: &'static str,
    kind: &'static str,
    reason: String,
}

/// A POI's position and city, or why it has none.
fn place(
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
struct Tally {
    methods: BTreeMap<Method, u64>,
    drops: BTreeMap<&'static str, u64>,
    hours_known: u64,
    hours_absent: u64,
    hours_untranslatable: u64,
    hours_examples: Vec<String>,
}

impl Tally {
    fn methods(&self, drops: &BTreeMap<&str, u64>) -> serde_json::Value {
        let get = |m| self.methods.get(&m).copied().unwrap_or(0);
        json!({
            "boundary": get(Method::Boundary),
            "nearest_centre": get(Method::NearestCentre),
            "outside_every_city": drops.get("outside every city").copied().unwrap_or(0),
        })
    }
    fn hours_note(&self) -> serde_json::Value {
        json!({
            "translated": self.hours_known,
            "absent": self.hours_absent,
            "untranslatable": self.hours_untranslatable,
            "untranslatable_examples": self.hours_examples,
        })
    }
}

fn row(p: Candidate, pl: Placed, licence: &str, tally: &mut Tally) -> PoiRow {
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

#[cfg(test)]
mod tests {
    use super::*;
    use gtb_resources::City;

    fn city(name: &str, lat: f64, lng: f64) -> City {
        City {
            name: name.into(),
            province: String::new(),
            region: String::new(),
            tier: 1,
            hub: false,
            lat,
            lng,
            hsr: false,
            airports: Vec::new(),
            stations: Vec::new(),
        }
    }

    #[test]
    fn boundaries_count_only_under_a_city_name() {
        let cities = [
            city("北京市", 39.9042, 116.4074),
            city("长沙市", 28.2282, 112.9388),
        ];
        let dir = CityDirectory { cities: &cities };
        let admin = |level: &'static str, name: &'static str| {
            [
                ("boundary", "administrative"),
                ("admin_level", level),
                ("name", name),
            ]
        };
        assert_eq!(
            admin_city(&admin("4", "北京市"), &dir).as_deref(),
            Some("北京市")
        );
        assert_eq!(
            admin_city(&admin("5", "长沙"), &dir).as_deref(),
            Some("长沙市")
        );
        // a county of 长沙市 whose short form is the city's: not the city
        assert_eq!(admin_city(&admin("6", "长沙县"), &dir), None);
        // levels outside 4-6 (a country, a township)
        assert_eq!(admin_city(&admin("2", "北京市"), &dir), None);
        assert_eq!(admin_city(&admin("8", "北京市"), &dir), None);
        assert_eq!(
            admin_city(&[("admin_level", "4"), ("name", "北京市")], &dir),
            None
        );
    }

    #[test]
    fn charges_in_yuan_are_prices() {
        let a = PoiType::Attractions;
        assert_eq!(price(&[("charge", "60 CNY")], a), Some(60.0));
        assert_eq!(price(&[("charge", "¥40")], a), Some(40.0));
        assert_eq!(price(&[("charge", "30元")], PoiType::Food), Some(30.0));
        assert_eq!(price(&[("charge", "10 EUR")], a), None);
        assert_eq!(price(&[("fee", "no")], a), Some(0.0));
        assert_eq!(price(&[("fee", "no")], PoiType::Hotels), None);
        assert_eq!(price(&[("charge", "-5")], a), None);
    }
}
