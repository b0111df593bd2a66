//! Opening a store: the manifest, then `pois.parquet` checked against the manifest's sha256.

use super::write::{COLUMNS, StoreSummary};
use super::{Coords, FORMAT, MANIFEST_FILE, PoiRow, PoiType, PopularitySource};
use anyhow::{Context as _, Result, bail};
use gtb_core::digest;
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// A store as read from its folder.
#[derive(Debug)]
pub struct Store {
    pub dir: PathBuf,
    pub manifest: StoreSummary,
    /// sorted by (city, type, name), one row per name
    pub rows: Vec<PoiRow>,
    /// blake3 of `manifest.json` (which pins the table's sha256): the store's fingerprint
    pub digest: String,
}

impl Store {
    /// Read a store. A folder without a manifest (an import that did not finish), a table
    /// whose sha256 differs from the manifest's, or a row the schema does not allow is an
    /// error naming the file, the row and the column.
    pub fn open(dir: &Path) -> Result<Store> {
        let manifest_path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&manifest_path).with_context(|| {
            format!(
                "{}: not a POI store (no {MANIFEST_FILE}; `gtb import` writes it last, so an import that did not finish has none)",
                dir.display()
            )
        })?;
        let manifest: StoreSummary = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a store manifest", manifest_path.display()))?;
        if manifest.format != FORMAT {
            bail!(
                "{}: format {:?}, this gtb reads {FORMAT:?} (re-run gtb import)",
                manifest_path.display(),
                manifest.format
            );
        }
        let pois = dir.join(&manifest.pois.file);
        // read once: hashed, then parsed from memory
        let bytes = std::fs::read(&pois).with_context(|| format!("reading {}", pois.display()))?;
        let sha = digest::sha256_bytes(&bytes);
        if sha != manifest.pois.sha256 {
            bail!(
                "{}: sha256 {sha} differs from the manifest's {} (the store was changed after import; re-run gtb import)",
                pois.display(),
                manifest.pois.sha256
            );
        }
        let rows = read_rows(&pois, bytes)?;
        Ok(Store {
            dir: dir.to_path_buf(),
            manifest,
            rows,
            digest: digest::digest_bytes(text.as_bytes()),
        })
    }
}

fn read_rows(path: &Path, bytes: Vec<u8>) -> Result<Vec<PoiRow>> {
    let df = ParquetReader::new(std::io::Cursor::new(bytes))
        .finish()
        .map_err(|e| anyhow::anyhow!("{}: not a readable Parquet file: {e}", path.display()))?;
    let col = |name: &str| -> Result<&Column> {
        df.column(name)
            .map_err(|_| anyhow::anyhow!("{}: no column {name:?}", path.display()))
    };
    for c in COLUMNS {
        col(c)?;
    }
    let s = |name: &str| -> Result<Vec<Option<&str>>> {
        Ok(col(name)?
            .str()
            .map_err(|_| anyhow::anyhow!("{}: column {name:?} is not text", path.display()))?
            .downcast_iter()
            .flat_map(|a| a.iter())
            .collect())
    };
    let f = |name: &str| -> Result<Vec<Option<f64>>> {
        Ok(col(name)?
            .f64()
            .map_err(|_| anyhow::anyhow!("{}: column {name:?} is not a float", path.display()))?
            .downcast_iter()
            .flat_map(|a| a.iter().map(|v| v.copied()))
            .collect())
    };
    let (city, poi_type, name) = (s("city")?, s("poi_type")?, s("name")?);
    let (category, category_raw, coords) = (s("category")?, s("category_raw")?, s("coords")?);
    let (lat, lng, price, popularity) = (f("lat")?, f("lng")?, f("price")?, f("popularity")?);
    let (hours, pop_source) = (s("opening_hours")?, s("popularity_source")?);
    let (source, source_id, licence) = (s("source")?, s("source_id")?, s("licence")?);
    let mut rows = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let bad = |column: &str, what: String| {
            anyhow::anyhow!("{}: row {i}, column {column}: {what}", path.display())
        };
        let req = |v: &[Option<&str>], column: &str| -> Result<String> {
            v[i].map(str::to_string)
                .ok_or_else(|| bad(column, "missing".into()))
        };
        let t = req(&poi_type, "poi_type")?;
        let opening_hours = match hours[i] {
            None => None,
            Some(h) => {
                Some(serde_json::from_str(h).map_err(|e| bad("opening_hours", e.to_string()))?)
            }
        };
        rows.push(PoiRow {
            city: req(&city, "city")?,
            poi_type: PoiType::parse(&t).ok_or_else(|| bad("poi_type", format!("{t:?}")))?,
            name: req(&name, "name")?,
            category: category[i].map(str::to_string),
            category_raw: category_raw[i].unwrap_or_default().to_string(),
            lat: lat[i],
            lng: lng[i],
            coords: match coords[i] {
                None => None,
                Some(c) => Some(Coords::parse(c).ok_or_else(|| bad("coords", format!("{c:?}")))?),
            },
            opening_hours,
            price: price[i],
            popularity: popularity[i],
            popularity_source: {
                let p = pop_source[i].unwrap_or("none");
                PopularitySource::parse(p)
                    .ok_or_else(|| bad("popularity_source", format!("{p:?}")))?
            },
            source: req(&source, "source")?,
            source_id: req(&source_id, "source_id")?,
            licence: licence[i].unwrap_or_default().to_string(),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StoreBuilder;

    fn sample() -> Vec<PoiRow> {
        let mut a = PoiRow::new(
            "北京市",
            PoiType::Attractions,
            "故宫博物院",
            "t",
            "1".into(),
        )
        .with_category("历史古迹", Some("文物古迹"));
        a.lat = Some(39.916);
        a.lng = Some(116.397);
        a.coords = Some(Coords::Wgs84);
        a.price = Some(60.0);
        a.popularity = Some(4.8);
        a.popularity_source = PopularitySource::Rating;
        a.opening_hours = gtb_resources::hours::parse("w2-7 08:30-17:00").unwrap();
        a.licence = "CC BY-NC-SA 4.0".into();
        let f = PoiRow::new("北京市", PoiType::Food, "四季民福烤鸭店", "t", "2".into())
            .with_category("北京菜", Some("北京菜"));
        vec![f, a]
    }

    #[test]
    fn a_store_reads_back_what_was_written_and_the_same_rows_give_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (d1, d2) = (dir.path().join("a"), dir.path().join("b"));
        for d in [&d1, &d2] {
            let mut b = StoreBuilder::new(None);
            for r in sample() {
                b.push(r);
            }
            b.finish(d).unwrap();
        }
        let read = |d: &Path| std::fs::read(d.join("pois.parquet")).unwrap();
        assert_eq!(read(&d1), read(&d2));
        let s = Store::open(&d1).unwrap();
        let mut want = sample();
        want.sort_by(|a, b| (&a.city, a.poi_type, &a.name).cmp(&(&b.city, b.poi_type, &b.name)));
        assert_eq!(s.rows, want);
        assert_eq!(s.manifest.counts["北京市"]["attractions"], 1);
    }

    #[test]
    fn a_changed_table_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = StoreBuilder::new(None);
        for r in sample() {
            b.push(r);
        }
        b.finish(dir.path()).unwrap();
        std::fs::write(dir.path().join("pois.parquet"), b"x").unwrap();
        let e = Store::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("differs from the manifest"), "{e}");
    }
}
