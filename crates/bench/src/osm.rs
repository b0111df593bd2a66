//! `gtb import osm` of a synthetic 1.2M-element extract (written here, nothing of it real or
//! kept): elements/s of the whole import and of the adapter alone, against osmpbf decoding
//! alone, and peak RSS (`gtb-bench osm-import`).

use crate::{cfg, peak_rss_mib};
use std::time::Instant;

/// Write the synthetic extract of [`osm_import`]: around 20 city centres, 300,000 tagged
/// nodes (a fifth unnamed), 100,000 plain ones, 100,000 closed ways of 7 nodes (30 % named
/// parks, the rest buildings), 2,000 multipolygon parks and a square boundary per city.
/// Names are plainly synthetic (`基准景点17`); nothing of it is real or kept. Returns the
/// number of elements written.
fn write_osm_fixture(
    path: &std::path::Path,
    centres: &[(String, f64, f64)],
) -> anyhow::Result<u64> {
    use rand::SeedableRng;
    let mut f = OsmFixture {
        w: gtb_pbf_write::PbfWriter::new(std::io::BufWriter::new(std::fs::File::create(path)?))?,
        rng: rand_chacha::ChaCha8Rng::seed_from_u64(11),
        id: 0,
        centres,
    };
    f.poi_nodes()?;
    let first_way_node = f.id + 1;
    f.outline_nodes()?;
    let first_border_node = f.id + 1;
    f.border_nodes()?;
    let nodes = f.id as u64;
    let first_border_way = f.ways(first_way_node, first_border_node)?;
    f.relations(first_border_way)?;
    f.w.finish()?;
    Ok(nodes + 100_000 + 4 * centres.len() as u64 + centres.len() as u64 + 2_000)
}

/// The fixture being written: the writer, its random stream and the last node id.
struct OsmFixture<'c> {
    w: gtb_pbf_write::PbfWriter<std::io::BufWriter<std::fs::File>>,
    rng: rand_chacha::ChaCha8Rng,
    id: i64,
    centres: &'c [(String, f64, f64)],
}

impl OsmFixture<'_> {
    /// A point within about 25 km of centre `i` (round robin).
    fn near(&mut self, i: usize) -> (f64, f64) {
        use rand::Rng;
        let c = &self.centres[i % self.centres.len()];
        (
            c.1 + self.rng.gen_range(-0.25..0.25),
            c.2 + self.rng.gen_range(-0.25..0.25),
        )
    }

    /// 400,000 nodes: POIs of six kinds (a fifth unnamed) and plain crossings.
    fn poi_nodes(&mut self) -> anyhow::Result<()> {
        const KINDS: [&[(&str, &str)]; 6] = [
            &[
                ("tourism", "museum"),
                ("opening_hours", "Tu-Su 09:00-17:00; Mo off"),
            ],
            &[("amenity", "restaurant"), ("cuisine", "sichuan")],
            &[
                ("amenity", "fast_food"),
                ("cuisine", "noodle"),
                ("opening_hours", "Mo-Fr 07:00-21:00; Sa-Su 08:00-22:00"),
            ],
            &[("tourism", "hotel"), ("stars", "4")],
            &[("historic", "memorial"), ("wikidata", "Q1")],
            &[("amenity", "cafe"), ("opening_hours", "24/7")],
        ];
        for i in 0..400_000usize {
            self.id += 1;
            let (lat, lon) = self.near(i);
            if i % 4 == 3 {
                self.w.node(self.id, lat, lon, &[("highway", "crossing")])?;
                continue;
            }
            let name = format!("基准景点{i}");
            let mut tags: Vec<(&str, &str)> = KINDS[i % KINDS.len()].to_vec();
            if i % 5 != 0 {
                tags.push(("name", &name));
            }
            self.w.node(self.id, lat, lon, &tags)?;
        }
        Ok(())
    }

    /// Way outlines: 7 nodes each (a heptagon of about 100 m).
    fn outline_nodes(&mut self) -> anyhow::Result<()> {
        for i in 0..100_000usize {
            let (lat, lon) = self.near(i);
            for k in 0..7 {
                let a = k as f64 * std::f64::consts::TAU / 7.0;
                self.id += 1;
                self.w
                    .node(self.id, lat + 0.001 * a.sin(), lon + 0.001 * a.cos(), &[])?;
            }
        }
        Ok(())
    }

    /// City squares, 50 nodes a side.
    fn border_nodes(&mut self) -> anyhow::Result<()> {
        for c in self.centres {
            let (s, n, we, e) = (c.1 - 0.3, c.1 + 0.3, c.2 - 0.3, c.2 + 0.3);
            for k in 0..200 {
                let t = (k % 50) as f64 / 50.0;
                let (lat, lon) = match k / 50 {
                    0 => (s, we + t * (e - we)),
                    1 => (s + t * (n - s), e),
                    2 => (n, e - t * (e - we)),
                    _ => (n - t * (n - s), we),
                };
                self.id += 1;
                self.w.node(self.id, lat, lon, &[])?;
            }
        }
        Ok(())
    }

    /// 100,000 closed ways (30 % named parks, the rest buildings), then four border ways per
    /// city; returns the first border way's id.
    fn ways(&mut self, first_way_node: i64, first_border_node: i64) -> anyhow::Result<i64> {
        for i in 0..100_000i64 {
            let base = first_way_node + 7 * i;
            let mut refs: Vec<i64> = (base..base + 7).collect();
            refs.push(base);
            let name = format!("基准公园{i}");
            let tags: Vec<(&str, &str)> = if i % 10 < 3 {
                vec![("leisure", "park"), ("name", &name)]
            } else {
                vec![("building", "yes")]
            };
            self.w.way(i + 1, &refs, &tags)?;
        }
        let first_border_way = 100_001i64;
        for ci in 0..self.centres.len() as i64 {
            for side in 0..4i64 {
                let start = first_border_node + 200 * ci + 50 * side;
                let mut refs: Vec<i64> = (start..start + 50).collect();
                refs.push(if side == 3 {
                    first_border_node + 200 * ci
                } else {
                    start + 50
                });
                self.w.way(first_border_way + 4 * ci + side, &refs, &[])?;
            }
        }
        Ok(first_border_way)
    }

    /// A boundary relation per city, and 2,000 multipolygon parks over building outlines.
    fn relations(&mut self, first_border_way: i64) -> anyhow::Result<()> {
        use gtb_pbf_write::{Member, MemberType};
        let outer = |id| Member {
            kind: MemberType::Way,
            id,
            role: "outer",
        };
        for (ci, c) in self.centres.iter().enumerate() {
            let members: Vec<Member> = (0..4)
                .map(|s| outer(first_border_way + 4 * ci as i64 + s))
                .collect();
            let tags = [
                ("type", "boundary"),
                ("boundary", "administrative"),
                ("admin_level", "5"),
                ("name", c.0.as_str()),
            ];
            self.w.relation(ci as i64 + 1, &members, &tags)?;
        }
        for i in 0..2_000i64 {
            let name = format!("基准园区{i}");
            // a building way's outline (ways 4, 14, 24, ... are untagged buildings)
            let tags = [
                ("type", "multipolygon"),
                ("leisure", "park"),
                ("name", name.as_str()),
            ];
            self.w.relation(10_000 + i, &[outer(10 * i + 4)], &tags)?;
        }
        Ok(())
    }
}

/// `gtb import osm` of the synthetic extract: elements/s over the whole import (three passes,
/// city assignment, the store written), and peak RSS.
pub fn osm_import(dir: &std::path::Path) -> anyhow::Result<()> {
    use gtb_store::import::{Adapter, ImportOptions};
    let c = cfg(650, dir)?;
    let res = gtb_ops::load_resources(&c)?;
    let centres: Vec<(String, f64, f64)> = res
        .cities
        .iter()
        .step_by((res.cities.len() / 20).max(1))
        .take(20)
        .map(|x| (x.name.clone(), x.lat, x.lng))
        .collect();
    let pbf = dir.join("bench.osm.pbf");
    let t = Instant::now();
    let elements = write_osm_fixture(&pbf, &centres)?;
    let t_write = t.elapsed();
    let bytes = std::fs::metadata(&pbf)?.len();
    let opts = ImportOptions {
        adapter: Adapter::Osm,
        input: pbf.clone(),
        out: dir.join("osm-store"),
        cities: None,
        licence: None,
        map: Default::default(),
        radius_km: 60.0,
        progress: false,
    };
    // the floor: osmpbf decoding every element and nothing else
    let t = Instant::now();
    let decoded =
        osmpbf::ElementReader::from_path(&pbf)?.par_map_reduce(|_| 1u64, || 0, |a, b| a + b)?;
    let t_decode = t.elapsed().as_secs_f64();
    // the adapter (three passes, city assignment) and the store write, timed apart
    let t = Instant::now();
    let ctx = gtb_store::import::ImportContext {
        opts: &opts,
        cities: gtb_store::import::CityDirectory {
            cities: &res.cities,
        },
    };
    let mut builder = gtb_store::StoreBuilder::new(None);
    gtb_store::import::osm::import(&ctx, &mut builder)?;
    let t_adapter = t.elapsed().as_secs_f64();
    let s = builder.finish(&opts.out)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "osm import: {elements} elements ({:.1} MB PBF, written in {:.2}s) in {secs:.2}s = {:.0} elements/s (adapter {t_adapter:.2}s = {:.0} elements/s, store write {:.2}s); {} POIs, {} dropped; peak RSS {:.0} MiB",
        bytes as f64 / 1e6,
        t_write.as_secs_f64(),
        elements as f64 / secs,
        elements as f64 / t_adapter,
        secs - t_adapter,
        s.pois.rows,
        s.dropped_file.rows,
        peak_rss_mib()
    );
    println!(
        "osm decode only (osmpbf par_map_reduce, one pass): {decoded} elements in {t_decode:.2}s = {:.0} elements/s",
        decoded as f64 / t_decode
    );
    Ok(())
}
