//! Geometry: rings assembled from member ways, polygons of administrative boundaries
//! (point-in-polygon with geo's `Contains`, the smallest containing area wins) and the
//! centroids of way- and relation-shaped POIs.

use geo::{
    Area, BoundingRect, Centroid, Contains, Coord, LineString, MultiPolygon, Point, Polygon, Rect,
};

/// Node id -> (lat, lon).
pub type NodeCoords = gtb_core::FastMap<i64, (f64, f64)>;

/// Closed rings (as node id lists, first == last) joined from ways by shared end nodes, in
/// the order the ways are given; ways that close no ring are left out.
pub fn rings(ways: &[&[i64]]) -> Vec<Vec<i64>> {
    // end node -> ways ending there, in order (a province boundary has thousands of ways)
    let mut ends: gtb_core::FastMap<i64, Vec<usize>> = gtb_core::FastMap::default();
    for (i, w) in ways.iter().enumerate() {
        if let (Some(&a), Some(&b)) = (w.first(), w.last())
            && w.len() >= 2
        {
            ends.entry(a).or_default().push(i);
            ends.entry(b).or_default().push(i);
        }
    }
    let mut used = vec![false; ways.len()];
    let mut out = Vec::new();
    for start in 0..ways.len() {
        if used[start] || ways[start].len() < 2 {
            continue;
        }
        used[start] = true;
        let mut ring: Vec<i64> = ways[start].to_vec();
        while ring.first() != ring.last() {
            let end = *ring.last().expect("non-empty");
            let next = ends
                .get(&end)
                .and_then(|v| v.iter().copied().find(|&i| !used[i]));
            let Some(i) = next else { break };
            used[i] = true;
            if ways[i][0] == end {
                ring.extend_from_slice(&ways[i][1..]);
            } else {
                ring.extend(ways[i].iter().rev().skip(1));
            }
        }
        if ring.len() >= 4 && ring.first() == ring.last() {
            out.push(ring);
        }
    }
    out
}

/// A ring's coordinates as a line string (x = lon, y = lat); `None` when a node is missing
/// (an extract clipped at its edge).
pub fn line(ids: &[i64], nodes: &NodeCoords) -> Option<LineString<f64>> {
    ids.iter()
        .map(|id| nodes.get(id).map(|&(lat, lon)| Coord { x: lon, y: lat }))
        .collect::<Option<Vec<_>>>()
        .map(LineString::new)
}

/// Polygons from outer and inner rings: each inner ring becomes a hole of the first outer
/// ring that contains its first point.
pub fn polygons(outer: &[LineString<f64>], inner: &[LineString<f64>]) -> MultiPolygon<f64> {
    let mut holes: Vec<Vec<LineString<f64>>> = vec![Vec::new(); outer.len()];
    for h in inner {
        let Some(p) = h.0.first() else { continue };
        let shell = outer
            .iter()
            .position(|o| Polygon::new(o.clone(), vec![]).contains(&Point::from(*p)));
        if let Some(i) = shell {
            holes[i].push(h.clone());
        }
    }
    MultiPolygon::new(
        outer
            .iter()
            .zip(holes)
            .map(|(o, h)| Polygon::new(o.clone(), h))
            .collect(),
    )
}

/// An administrative area that resolves to a release city.
pub struct AdminArea {
    pub city: String,
    pub relation: i64,
    shape: MultiPolygon<f64>,
    bbox: Rect<f64>,
    /// in square degrees: only compared between areas around one point
    area: f64,
}

impl AdminArea {
    pub fn new(city: String, relation: i64, shape: MultiPolygon<f64>) -> Option<AdminArea> {
        let bbox = shape.bounding_rect()?;
        let area = shape.unsigned_area();
        Some(AdminArea {
            city,
            relation,
            shape,
            bbox,
            area,
        })
    }
}

/// The smallest area containing a point (lat, lon).
pub fn smallest_containing(areas: &[AdminArea], lat: f64, lon: f64) -> Option<&AdminArea> {
    let p = Point::new(lon, lat);
    areas
        .iter()
        .filter(|a| {
            let (min, max) = (a.bbox.min(), a.bbox.max());
            min.x <= lon && lon <= max.x && min.y <= lat && lat <= max.y && a.shape.contains(&p)
        })
        .min_by(|a, b| a.area.total_cmp(&b.area).then(a.relation.cmp(&b.relation)))
}

/// The centre of a way or relation: the centroid of its closed rings' polygons, else of its
/// nodes as a line; `None` without any known node.
pub fn centre(parts: &[&[i64]], nodes: &NodeCoords) -> Option<(f64, f64)> {
    let closed = rings(parts);
    let shells: Vec<LineString<f64>> = closed.iter().filter_map(|r| line(r, nodes)).collect();
    if !shells.is_empty()
        && let Some(c) = MultiPolygon::new(
            shells
                .into_iter()
                .map(|s| Polygon::new(s, vec![]))
                .collect(),
        )
        .centroid()
    {
        return Some((c.y(), c.x()));
    }
    let known: Vec<Coord<f64>> = parts
        .iter()
        .flat_map(|p| p.iter())
        .filter_map(|id| nodes.get(id).map(|&(lat, lon)| Coord { x: lon, y: lat }))
        .collect();
    let c = LineString::new(known).centroid()?;
    Some((c.y(), c.x()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_join_reversed_ways_and_skip_open_ones() {
        let a = [1, 2, 3];
        let b = [1, 4, 3]; // reversed direction
        let c = [7, 8];
        let r = rings(&[&a, &c, &b]);
        assert_eq!(r, vec![vec![1, 2, 3, 4, 1]]);
    }

    #[test]
    fn smallest_area_wins_and_holes_exclude() {
        let sq = |x0: f64, y0: f64, s: f64| {
            LineString::from(vec![
                (x0, y0),
                (x0 + s, y0),
                (x0 + s, y0 + s),
                (x0, y0 + s),
                (x0, y0),
            ])
        };
        let big = AdminArea::new("大".into(), 1, polygons(&[sq(0.0, 0.0, 10.0)], &[])).unwrap();
        let small = AdminArea::new("小".into(), 2, polygons(&[sq(1.0, 1.0, 2.0)], &[])).unwrap();
        let holed = AdminArea::new(
            "洞".into(),
            3,
            polygons(&[sq(5.0, 5.0, 4.0)], &[sq(6.0, 6.0, 1.0)]),
        )
        .unwrap();
        let areas = [big, small, holed];
        assert_eq!(smallest_containing(&areas, 2.0, 2.0).unwrap().city, "小");
        assert_eq!(smallest_containing(&areas, 6.5, 6.5).unwrap().city, "大");
        assert_eq!(smallest_containing(&areas, 8.5, 8.5).unwrap().city, "洞");
        assert!(smallest_containing(&areas, 20.0, 2.0).is_none());
    }
}
