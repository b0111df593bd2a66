//! Pass 1: every element of a block counted, POI candidates (tags, name, hours, price,
//! popularity, shape) and the administrative boundaries named after release cities.

use super::classify::{self, Tags, tag};
use super::{Admin, BlobScan, Candidate, Kind, NODES, OsmId, Shape, WAYS, hours};
use crate::import::CityDirectory;
use crate::{PoiType, PopularitySource};
use osmpbf::{PrimitiveBlock, RelMemberType};

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
pub(super) fn scan_block(block: &PrimitiveBlock, cities: &CityDirectory) -> BlobScan {
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
