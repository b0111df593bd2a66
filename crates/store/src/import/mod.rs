//! `gtb import <adapter> INPUT --out STORE`: one module per source format, each turning its
//! input into [`PoiRow`]s and reported drops in a [`StoreBuilder`]. The shared parts live
//! here: options, the city directory (release city names and where they are), input digests
//! and the progress bar.

pub mod chinatravel;
pub mod osm;
pub mod release;
pub mod table;

use super::{SourceInfo, StoreBuilder, StoreSummary};
use anyhow::{Context, Result, bail};
use gtb_resources::{City, short_city_name};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source formats `gtb import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Adapter {
    /// the release's poi2category/all_poi_by_city.json (streamed)
    Release,
    /// the ChinaTravel database folder (attractions/, restaurants/, hotels/ CSV per city)
    Chinatravel,
    /// an OpenStreetMap .osm.pbf extract
    Osm,
    /// a CSV, TSV, JSONL or Parquet table with a column mapping (--map)
    Table,
}

impl Adapter {
    pub fn name(self) -> &'static str {
        match self {
            Adapter::Release => "release",
            Adapter::Chinatravel => "chinatravel",
            Adapter::Osm => "osm",
            Adapter::Table => "table",
        }
    }
    /// The licence recorded when `--licence` is not given.
    fn default_licence(self) -> &'static str {
        match self {
            Adapter::Release => "CC BY-NC 4.0 (GroupTravelBench release)",
            Adapter::Chinatravel => "CC BY-NC-SA 4.0 (ChinaTravel)",
            Adapter::Osm => "ODbL 1.0 (© OpenStreetMap contributors)",
            Adapter::Table => "unknown (pass --licence)",
        }
    }
}

/// What `gtb import` was asked to do, validated once.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    pub adapter: Adapter,
    pub input: PathBuf,
    pub out: PathBuf,
    /// keep only these cities (release names; short names are resolved)
    pub cities: Option<BTreeSet<String>>,
    pub licence: Option<String>,
    /// `table`: store column -> input column
    pub map: BTreeMap<String, String>,
    /// `osm`: POIs with no administrative boundary go to the nearest city within this radius
    pub radius_km: f64,
    /// show a progress bar (hidden anyway when stderr is not a terminal)
    pub progress: bool,
}

impl ImportOptions {
    pub fn licence(&self) -> String {
        self.licence
            .clone()
            .unwrap_or_else(|| self.adapter.default_licence().to_string())
    }
}

/// What an adapter reads besides its input: the options and the known cities.
pub struct ImportContext<'a> {
    pub opts: &'a ImportOptions,
    pub cities: CityDirectory<'a>,
}

impl ImportContext<'_> {
    /// A progress bar over `len` units (bytes, rows or blobs), hidden unless asked for.
    pub fn bar(&self, len: u64, what: &str) -> ProgressBar {
        if !self.opts.progress {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        pb.set_style(
            ProgressStyle::with_template("{msg:>12} [{bar:30}] {percent}% {elapsed} eta {eta}")
                .expect("template")
                .progress_chars("=> "),
        );
        pb.set_message(what.to_string());
        pb
    }
    /// The source record of the input, with its sha256 (per file for a folder).
    pub fn source_info(&self) -> Result<SourceInfo> {
        source_info(self.opts)
    }
}

/// The cities gtb knows (cities.csv): release names, short names and centres.
pub struct CityDirectory<'a> {
    pub cities: &'a [City],
}

impl<'a> CityDirectory<'a> {
    /// The release name of a city written as `北京市`, `北京` or `西双版纳`; `None` when
    /// gtb does not know it.
    pub fn resolve(&self, name: &str) -> Option<&'a City> {
        let name = name.trim();
        self.cities
            .iter()
            .find(|c| c.name == name)
            .or_else(|| self.cities.iter().find(|c| c.short_name() == name))
            .or_else(|| {
                let short = short_city_name(name);
                self.cities.iter().find(|c| c.short_name() == short)
            })
    }
    /// The nearest city centre to a point and its distance in km.
    pub fn nearest(&self, lat: f64, lng: f64) -> Option<(&'a City, f64)> {
        self.cities
            .iter()
            .map(|c| {
                (
                    c,
                    gtb_resources::geodesy::distance_km((lat, lng), (c.lat, c.lng)),
                )
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// sha256 of the input: of the file, or of the sorted list of `path sha256` lines of every
/// file under a folder (each also listed).
fn source_info(opts: &ImportOptions) -> Result<SourceInfo> {
    let input = &opts.input;
    let mut files = BTreeMap::new();
    let sha256 = if input.is_dir() {
        let mut list = Vec::new();
        walk(input, &mut list)?;
        list.sort();
        let mut all = String::new();
        for f in list {
            let rel = f.strip_prefix(input).unwrap_or(&f).display().to_string();
            let sha = gtb_core::digest::sha256_file(&f)?;
            all.push_str(&format!("{rel} {sha}\n"));
            files.insert(rel, sha);
        }
        gtb_core::digest::sha256_bytes(all.as_bytes())
    } else {
        gtb_core::digest::sha256_file(input)?
    };
    Ok(SourceInfo {
        adapter: opts.adapter.name().to_string(),
        input: input.display().to_string(),
        sha256,
        licence: opts.licence(),
        files,
        notes: BTreeMap::new(),
    })
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let p = e?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

/// Run an import: read the input with its adapter and publish the store.
pub fn run(opts: &ImportOptions, cities: &[City]) -> Result<StoreSummary> {
    if !opts.input.exists() {
        bail!("{}: no such file or folder", opts.input.display());
    }
    let ctx = ImportContext {
        opts,
        cities: CityDirectory { cities },
    };
    let mut wanted = None;
    if let Some(list) = &opts.cities {
        let mut set = BTreeSet::new();
        for c in list {
            let name = ctx.cities.resolve(c).map_or(c.clone(), |x| x.name.clone());
            set.insert(name);
        }
        wanted = Some(set);
    }
    let mut builder = StoreBuilder::new(wanted);
    match opts.adapter {
        Adapter::Release => release::import(&ctx, &mut builder)?,
        Adapter::Chinatravel => chinatravel::import(&ctx, &mut builder)?,
        Adapter::Osm => osm::import(&ctx, &mut builder)?,
        Adapter::Table => table::import(&ctx, &mut builder)?,
    }
    builder.finish(&opts.out)
}

/// A row's position for drop reports.
pub fn at_line(line: u64) -> String {
    format!("line {line}")
}
