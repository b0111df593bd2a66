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
//!
//! Here: the elements as read and the import's outline. `read` decodes the file's blobs in
//! parallel and runs passes 2 and 3, `scan` is pass 1, `place` gives each POI its position
//! and city and makes its row; `boundary` holds the geometry, `classify` the tag mappings and
//! `hours` the opening_hours translation.

mod boundary;
pub mod classify;
pub mod hours;
mod place;
mod read;
mod scan;

use super::ImportContext;
use crate::{PopularitySource, StoreBuilder};
use anyhow::Result;
use classify::Class;
use gtb_resources::hours::OpeningHours;
use place::{Drop, Placed, Tally, admin_areas, place, row};
use rayon::prelude::*;
use read::{read_blocks, relation_ways, way_nodes};
use scan::scan_block;
use serde_json::json;

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
