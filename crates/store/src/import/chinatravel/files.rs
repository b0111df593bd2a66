//! The database's CSV files, in import order, and the city each file name stands for
//! (pinyin or English, raw_data/city_pinyin.csv).

use super::{CITY_PINYIN, Table};
use crate::import::ImportContext;
use anyhow::{Context, Result};
use gtb_resources::City;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `attractions/x.csv` etc., sorted by folder (attractions, restaurants, hotels) then name;
/// `_tag.csv` files are read with their main file.
pub(super) fn list_files(dir: &Path) -> Result<Vec<(Table, PathBuf)>> {
    let mut out = Vec::new();
    for t in Table::ALL {
        let sub = dir.join(t.folder());
        if !sub.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        for e in std::fs::read_dir(&sub).with_context(|| format!("reading {}", sub.display()))? {
            let p = e?.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_file() && name.ends_with(".csv") && !name.ends_with("_tag.csv") {
                files.push(p);
            }
        }
        files.sort();
        out.extend(files.into_iter().map(|p| (t, p)));
    }
    Ok(out)
}

pub(super) fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .display()
        .to_string()
        .replace('\\', "/")
}

/// Lower-case letters and digits only: `Xi'an`, `xi_an` and `XIAN` all give `xian`.
pub(super) fn key(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Pinyin and English keys -> release city name.
pub(super) fn pinyin_table() -> Result<BTreeMap<String, String>> {
    let mut rd = csv::Reader::from_reader(CITY_PINYIN.as_bytes());
    let mut map = BTreeMap::new();
    for (i, rec) in rd.records().enumerate() {
        let rec = rec.with_context(|| format!("raw_data/city_pinyin.csv line {}", i + 2))?;
        let (name, pinyin, english) = (&rec[0], &rec[1], &rec[2]);
        map.insert(key(pinyin), name.to_string());
        map.insert(key(english), name.to_string());
    }
    Ok(map)
}

/// The city a file name stands for, when gtb knows it (never guessed from a prefix).
pub(super) fn city_of<'a>(
    stem: &str,
    pinyin: &BTreeMap<String, String>,
    ctx: &ImportContext<'a>,
) -> Option<&'a City> {
    let name = pinyin.get(&key(stem))?;
    ctx.cities.resolve(name)
}

pub(super) fn count_records(path: &Path) -> u64 {
    csv::Reader::from_path(path).map_or(0, |mut r| r.records().count() as u64)
}
