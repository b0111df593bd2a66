//! Raw resources: cities, attractions, food, hotels, transport, profiles, archetypes and clusters.
//!
//! Everything is loaded from plain files under the configured paths (default `raw_data/`,
//! `archetypes/`, `city_clusters/`), checked, and indexed by city. Users swap in their own
//! data by pointing the config at other files of the same format (docs/RAW_DATA_FORMAT.md).

pub mod aliases;
pub mod archetypes;
pub mod cluster_table;
pub mod geodesy;
pub mod hours;
pub mod input;
pub mod names;
pub mod parents;
pub mod table;
pub mod vocab;

use gtb_core::FastMap as HashMap;
use std::path::{Path, PathBuf};

pub use aliases::{Alias, AliasKind};
pub use archetypes::{Archetype, Slot, Strategy};
pub use table::InputError;

use gtb_core::config::{Paths, StoreSettings};
use gtb_core::digest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use table::{csv_files, read_csv};

pub type CityId = u16;

#[derive(Debug, Clone)]
pub struct City {
    pub name: String,
    pub province: String,
    pub region: String,
    pub tier: u8,
    pub hub: bool,
    pub lat: f64,
    pub lng: f64,
    pub hsr: bool,
    pub airports: Vec<String>,
    pub stations: Vec<String>,
}

impl City {
    /// The short spoken name: 长沙市 -> 长沙, 凤凰县 -> 凤凰, 西双版纳傣族自治州 -> 西双版纳.
    pub fn short_name(&self) -> &str {
        short_city_name(&self.name)
    }
}

pub fn short_city_name(name: &str) -> &str {
    const ETHNIC: [&str; 12] = [
        "土家族苗族自治州",
        "苗族侗族自治州",
        "傣族自治州",
        "白族自治州",
        "朝鲜族自治州",
        "藏族羌族自治州",
        "藏族自治州",
        "蒙古族藏族自治州",
        "哈萨克自治州",
        "自治州",
        "地区",
        "林区",
    ];
    for s in ETHNIC {
        if let Some(x) = name.strip_suffix(s)
            && !x.is_empty()
        {
            return x;
        }
    }
    for s in ["市", "县"] {
        if let Some(x) = name.strip_suffix(s)
            && x.chars().count() >= 2
        {
            return x;
        }
    }
    name
}

#[derive(Debug, Clone)]
pub struct Attraction {
    pub city: CityId,
    pub name: String,
    pub category: String,
    pub lat: f64,
    pub lng: f64,
    pub hours: Option<hours::OpeningHours>,
    pub ticket: u32,
    pub popularity: u32,
    /// the scenic area this sub-spot lies inside: an index into the same city's list
    /// (`resources::parents`)
    pub parent: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoodKind {
    Cuisine,
    Dish,
    Restaurant,
}

#[derive(Debug, Clone)]
pub struct Food {
    pub city: CityId,
    pub name: String,
    pub kind: FoodKind,
    pub category: String,
    pub price: u32,
    /// a restaurant whose name rests on the writers' general knowledge only (`basis_kind`
    /// `general_knowledge`, or a table that names no source): it may host meals but grounds no
    /// food preference value
    pub general_knowledge: bool,
}

impl Food {
    /// Whether the entry may ground a food preference value (a must_eat the plans keep at a
    /// real venue): a cuisine, a dish, or a restaurant a cited source names.
    pub fn grounds_values(&self) -> bool {
        self.kind != FoodKind::Restaurant || !self.general_knowledge
    }
}

#[derive(Debug, Clone)]
pub struct HotelBand {
    pub city: CityId,
    pub category: String,
    pub price_low: u32,
    pub price_high: u32,
}

/// A real hotel, by name (`raw_data/hotels/named_*.csv`, or a POI store's hotels).
#[derive(Debug, Clone)]
pub struct NamedHotel {
    pub city: CityId,
    pub name: String,
    /// one of the 13 hotel categories
    pub category: String,
    /// CNY per room and night (a typical price, not a quote)
    pub price: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransportOption {
    pub mode: &'static str,
    pub minutes: u32,
    pub fare: u32,
    pub distance_km: u32,
    /// changes of train on the way (0: a direct train, flight or drive)
    pub transfers: u32,
    /// where the changes are (rail stop names), one per change
    pub via: Vec<String>,
}

impl TransportOption {
    /// One train, flight or drive from door to door, no change.
    pub fn direct(&self) -> bool {
        self.transfers == 0
    }
}

#[derive(Debug, Clone)]
pub struct Profile {
    pub id: String,
    pub age: u32,
    pub gender: String,
    pub marital: String,
    pub parenting: String,
    pub home_province: String,
}

/// A destination cluster: 1..3 cities of one region, visited in this order.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    pub id: String,
    pub region: String,
    pub cities: Vec<CityId>,
}

/// What a build took from a store (recorded in the manifest and shown by `--explain`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StoreUse {
    pub store: String,
    pub pois_sha256: String,
    pub settings: StoreSettings,
    /// destination -> attractions, restaurants and hotels used
    pub used: BTreeMap<String, [usize; 3]>,
    /// city -> why it is not a destination
    pub excluded: BTreeMap<String, String>,
    /// how attractions without a popularity signal were ranked, with counts
    pub popularity: BTreeMap<String, usize>,
}

impl StoreUse {
    /// Lines for `--explain` and the build log: the destinations used, and the excluded
    /// cities grouped by reason (the manifest lists every one).
    pub fn describe(&self) -> Vec<String> {
        let used: Vec<&str> = self.used.keys().map(String::as_str).collect();
        const SHOWN: usize = 30;
        let more = used.len().saturating_sub(SHOWN);
        let more = if more > 0 {
            format!(" and {more} more (manifest.json: store.used)")
        } else {
            String::new()
        };
        let shown: Vec<&str> = used.iter().take(SHOWN).copied().collect();
        let mut out = vec![format!(
            "store {}: {} destinations: {}{more}",
            self.store,
            used.len(),
            shown.join("、")
        )];
        let mut why: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for (city, reason) in &self.excluded {
            // group "12 attractions ..., below ..." by the rule, not the count
            let rule = reason
                .split_once(", below ")
                .map_or(reason.as_str(), |x| x.1);
            why.entry(rule.to_string()).or_default().push(city);
        }
        for (rule, cities) in why {
            let shown: Vec<&str> = cities.iter().take(8).copied().collect();
            let more = cities.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            out.push(format!(
                "  excluded {} ({rule}): {}{more}",
                cities.len(),
                shown.join("、")
            ));
        }
        out
    }
}

/// Everything the sampler, generators and validators read.
pub struct Resources {
    pub cities: Vec<City>,
    pub city_index: HashMap<String, CityId>,
    /// attractions per city, sorted by popularity (desc) then name
    pub attractions: Vec<Vec<Attraction>>,
    /// per city: other names of its attractions (`raw_data/aliases.csv`)
    pub aliases: Vec<Vec<Alias>>,
    pub food: Vec<Vec<Food>>,
    pub hotels: Vec<Vec<HotelBand>>,
    /// real hotels by name, per city (the snapshot's named tables, or a store's hotels)
    pub named_hotels: Vec<Vec<NamedHotel>>,
    transport: HashMap<(CityId, CityId), Vec<TransportOption>>,
    pub profiles: Vec<Profile>,
    profile_index: HashMap<String, usize>,
    pub archetypes: Vec<Archetype>,
    pub clusters: Vec<Cluster>,
    /// file path (relative to the project when possible) -> blake3 of its bytes, sorted
    pub input_digests: Vec<(String, String)>,
    /// the share of food values that name a restaurant (`[store] named_restaurants`; 0
    /// without a store)
    pub named_restaurants: f64,
    /// what a build over a POI store took from it (`store::overlay`)
    pub store: Option<StoreUse>,
    /// per city: attraction name -> position (`index_names`); a store city has hundreds, and
    /// the generator and the contradiction checks look names up per member
    name_index: Vec<HashMap<String, u32>>,
}

impl Resources {
    pub fn city(&self, id: CityId) -> &City {
        &self.cities[id as usize]
    }
    pub fn city_id(&self, name: &str) -> Option<CityId> {
        self.city_index.get(name).copied()
    }
    /// Served modes from one city to another (empty when none).
    pub fn transport(&self, from: CityId, to: CityId) -> &[TransportOption] {
        self.transport
            .get(&(from, to))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
    /// The position of an attraction in its city's list, by inventory name.
    pub fn attraction_index(&self, city: CityId, name: &str) -> Option<usize> {
        let list = &self.attractions[city as usize];
        match self.name_index.get(city as usize) {
            // the index is current unless the list was changed after loading (benchmarks)
            Some(ix) if ix.len() == list.len() => ix
                .get(name)
                .map(|&i| i as usize)
                .filter(|&i| list[i].name == name),
            _ => list.iter().position(|a| a.name == name),
        }
    }
    /// Index the attraction names of every city (after loading or laying a store over).
    pub fn index_names(&mut self) {
        self.name_index = self
            .attractions
            .iter()
            .map(|list| {
                list.iter()
                    .enumerate()
                    .map(|(i, a)| (a.name.clone(), i as u32))
                    .collect()
            })
            .collect();
    }
    /// Whether rejecting attraction `area` of a city rejects `spot` too: the same place, or
    /// `spot` lies inside `area` (`parents::covers`). Unknown names cover only themselves.
    pub fn covers(&self, city: CityId, area: &str, spot: &str) -> bool {
        match (
            self.attraction_index(city, area),
            self.attraction_index(city, spot),
        ) {
            (Some(a), Some(s)) => parents::covers(&self.attractions[city as usize], a, s),
            _ => area == spot,
        }
    }
    /// Whether two attractions of a city are one place for preferences (the same, or one
    /// inside the other): a member never asks for both.
    pub fn same_place(&self, city: CityId, a: &str, b: &str) -> bool {
        self.covers(city, a, b) || self.covers(city, b, a)
    }
    pub fn profile(&self, id: &str) -> Option<&Profile> {
        self.profile_index.get(id).map(|&i| &self.profiles[i])
    }
    pub fn hubs(&self) -> impl Iterator<Item = CityId> + '_ {
        self.cities
            .iter()
            .enumerate()
            .filter(|(_, c)| c.hub)
            .map(|(i, _)| i as CityId)
    }
    pub fn destinations(&self) -> impl Iterator<Item = CityId> + '_ {
        (0..self.cities.len() as CityId).filter(|&i| !self.attractions[i as usize].is_empty())
    }
    pub fn archetype(&self, group_id: &str) -> Option<&Archetype> {
        self.archetypes.iter().find(|a| a.group_id == group_id)
    }
    /// The legs of a trip: hub -> c1 -> .. -> cn -> hub.
    pub fn route_legs(&self, hub: CityId, cities: &[CityId]) -> Vec<(CityId, CityId)> {
        let mut stops = vec![hub];
        stops.extend_from_slice(cities);
        stops.push(hub);
        stops.windows(2).map(|w| (w[0], w[1])).collect()
    }
    /// Modes served on every leg of a route (the modes a whole group can share end to end).
    pub fn modes_on_all_legs(&self, hub: CityId, cities: &[CityId]) -> Vec<&'static str> {
        vocab::TRANSPORT_MODES
            .iter()
            .copied()
            .filter(|m| {
                self.route_legs(hub, cities)
                    .iter()
                    .all(|&(a, b)| self.transport(a, b).iter().any(|o| o.mode == *m))
            })
            .collect()
    }
    /// Modes served on at least one leg with at most `max_transfers` changes.
    pub fn modes_on_some_leg(
        &self,
        hub: CityId,
        cities: &[CityId],
        max_transfers: u32,
    ) -> Vec<&'static str> {
        vocab::TRANSPORT_MODES
            .iter()
            .copied()
            .filter(|m| {
                self.route_legs(hub, cities).iter().any(|&(a, b)| {
                    self.transport(a, b)
                        .iter()
                        .any(|o| o.mode == *m && o.transfers <= max_transfers)
                })
            })
            .collect()
    }
    /// One option per leg of a route (among those `usable(leg index, option)` admits): per
    /// set of must lists met (bit i: some leg uses a mode of `musts[i]`), the cheapest total
    /// fare. A group whose firm members' musts can all be met has the full set as a key.
    pub fn fares_by_musts(
        &self,
        hub: CityId,
        cities: &[CityId],
        usable: impl Fn(usize, &TransportOption) -> bool,
        musts: &[&[String]],
    ) -> BTreeMap<u64, u32> {
        let legs = self.route_legs(hub, cities).into_iter().enumerate();
        let options = legs.map(|(l, (a, b))| {
            let usable = &usable;
            self.transport(a, b)
                .iter()
                .filter(move |o| usable(l, o))
                .map(|o| (o.mode, o.fare))
        });
        fares_by_musts(options, musts)
    }
    /// Cheapest fare of a leg, optionally restricted to a mode.
    pub fn cheapest_fare(&self, a: CityId, b: CityId, mode: Option<&str>) -> Option<u32> {
        self.transport(a, b)
            .iter()
            .filter(|o| mode.is_none_or(|m| o.mode == m))
            .map(|o| o.fare)
            .min()
    }
}

/// `Resources::fares_by_musts` over legs given as their usable options (mode, fare): per set of
/// must lists met (bit i: some leg uses a mode of `musts[i]`), the cheapest total fare of one
/// option per leg.
pub fn fares_by_musts<'m, L, O>(legs: L, musts: &[&[String]]) -> BTreeMap<u64, u32>
where
    L: IntoIterator<Item = O>,
    O: IntoIterator<Item = (&'m str, u32)>,
{
    let mut states: BTreeMap<u64, u32> = BTreeMap::from([(0, 0)]);
    for options in legs {
        let mut next: BTreeMap<u64, u32> = BTreeMap::new();
        for (mode, fare) in options {
            let hit = musts
                .iter()
                .enumerate()
                .filter(|(_, m)| m.iter().any(|x| x == mode))
                .fold(0u64, |h, (i, _)| h | 1 << i);
            for (&h, &f) in &states {
                let e = next.entry(h | hit).or_insert(u32::MAX);
                *e = (*e).min(f + fare);
            }
        }
        states = next;
    }
    states
}

/// A path as messages and input digests name it: relative to the working folder when under it.
pub fn rel(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    cwd.and_then(|c| path.strip_prefix(&c).ok().map(|p| p.display().to_string()))
        .unwrap_or_else(|| path.display().to_string())
}

/// The `lat` and `lng` columns of a row: finite WGS-84 degrees within China's bounding box.
fn china_coords(row: &table::Row) -> Result<(f64, f64), InputError> {
    Ok((
        row.number_in("lat", 3.0..=54.0)?,
        row.number_in("lng", 73.0..=136.0)?,
    ))
}

pub(crate) fn check_city(
    row: &table::Row,
    index: &HashMap<String, CityId>,
) -> Result<CityId, InputError> {
    let name = row.text("city")?;
    index
        .get(&name)
        .copied()
        .ok_or_else(|| row.err("city", format!("unknown city {name:?} (not in cities.csv)")))
}

/// Every destination (a city with attractions) needs food and hotel rows: tasks there would
/// carry empty food lists and no hotel price, and still pass every check. A missing region is
/// an input error that names the cities, not a silent gap.
fn check_destinations_eat_and_sleep(
    paths: &Paths,
    cities: &[City],
    attractions: &[Vec<Attraction>],
    food: &[Vec<Food>],
    hotels: &[Vec<HotelBand>],
    empty_files: &[PathBuf],
) -> Result<(), InputError> {
    for (dir, what, has) in [
        (
            &paths.food,
            "food",
            food.iter().map(|f| !f.is_empty()).collect::<Vec<_>>(),
        ),
        (
            &paths.hotels,
            "hotel",
            hotels.iter().map(|h| !h.is_empty()).collect(),
        ),
    ] {
        let lacking: Vec<&str> = (0..cities.len())
            .filter(|&c| !attractions[c].is_empty() && !has[c])
            .map(|c| cities[c].name.as_str())
            .collect();
        if lacking.is_empty() {
            continue;
        }
        const SHOWN: usize = 50;
        let shown = lacking
            .iter()
            .take(SHOWN)
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let more = if lacking.len() > SHOWN {
            format!(" and {} more", lacking.len() - SHOWN)
        } else {
            String::new()
        };
        let empty: Vec<String> = empty_files
            .iter()
            .filter(|f| f.starts_with(dir))
            .map(|f| f.display().to_string())
            .collect();
        let hint = if empty.is_empty() {
            String::new()
        } else {
            format!("; these files have no rows: {}", empty.join(", "))
        };
        return Err(InputError {
            file: dir.clone(),
            line: 0,
            field: String::new(),
            message: format!(
                "{} destination(s) with attractions have no {what} rows: {shown}{more} (every destination needs food and hotel rows{hint})",
                lacking.len()
            ),
        });
    }
    Ok(())
}

/// The optional `direct,transfers,via` columns of transport.csv (absent: a direct service),
/// checked against each other.
fn transfer_columns(r: &table::Row) -> Result<(u32, Vec<String>), InputError> {
    if !r.has("transfers") {
        return Ok((0, Vec::new()));
    }
    let transfers: u32 = r.parse("transfers")?;
    let direct = match r.str("direct")? {
        "1" => true,
        "0" => false,
        other => return Err(r.err("direct", format!("must be 0 or 1, got {other:?}"))),
    };
    if direct != (transfers == 0) {
        return Err(r.err(
            "direct",
            format!(
                "direct={} contradicts transfers={transfers}",
                u8::from(direct)
            ),
        ));
    }
    let via = r.list("via")?;
    if via.len() != transfers as usize {
        return Err(r.err(
            "via",
            format!("{} places for {transfers} transfers", via.len()),
        ));
    }
    Ok((transfers, via))
}

/// Load every resource from the configured paths: each table is read and checked by its own
/// reader below, then indexed.
pub fn load(paths: &Paths) -> Result<Resources, InputError> {
    let mut files: Vec<PathBuf> = Vec::new();
    let cities = load_cities(&paths.cities)?;
    files.push(paths.cities.clone());
    let city_index: HashMap<String, CityId> =
        unique_index(&cities, |c| &c.name, &paths.cities, "name", "city")?
            .into_iter()
            .map(|(name, i)| (name, i as CityId))
            .collect();
    let attractions = load_attractions(paths, &cities, &city_index, &mut files)?;
    let aliases = if input::exists(&paths.aliases) {
        files.push(paths.aliases.clone());
        aliases::load(&paths.aliases, &city_index, &attractions)?
    } else {
        vec![Vec::new(); cities.len()]
    };
    let mut empty_files: Vec<PathBuf> = Vec::new();
    let food_rows = per_city_tables(
        &paths.food,
        &city_index,
        &mut files,
        &mut empty_files,
        food_row,
    )?;
    let hotel_rows = per_city_tables(
        &paths.hotels,
        &city_index,
        &mut files,
        &mut empty_files,
        hotel_row,
    )?;
    one_venue_per_name(&attractions, &food_rows, &hotel_rows)?;
    let food = without_errors(food_rows);
    let (hotels, named_hotels) = split_hotels(without_errors(hotel_rows));
    check_destinations_eat_and_sleep(paths, &cities, &attractions, &food, &hotels, &empty_files)?;
    let transport = load_transport(&paths.transport, &city_index)?;
    files.push(paths.transport.clone());
    let profiles = load_profiles(&paths.profiles)?;
    files.push(paths.profiles.clone());
    let profile_index = unique_index(&profiles, |p| &p.id, &paths.profiles, "id", "profile id")?;
    let archetypes = archetypes::load(&paths.archetypes)?;
    files.push(paths.archetypes.clone());
    let mut res = Resources {
        cities,
        city_index,
        attractions,
        aliases,
        food,
        hotels,
        named_hotels,
        transport,
        profiles,
        profile_index,
        archetypes,
        clusters: Vec::new(),
        input_digests: Vec::new(),
        named_restaurants: 0.0,
        store: None,
        name_index: Vec::new(),
    };
    if input::exists(&paths.clusters) {
        res.clusters = cluster_table::load(&paths.clusters, &res)?;
        files.push(paths.clusters.clone());
    }
    res.input_digests = input_digests(files)?;
    res.index_names();
    Ok(res)
}

/// Position by key, refusing a key given twice (the row of the second names it).
fn unique_index<T>(
    rows: &[T],
    key: impl Fn(&T) -> &String,
    file: &Path,
    field: &str,
    what: &str,
) -> Result<HashMap<String, usize>, InputError> {
    let mut index = HashMap::with_capacity_and_hasher(rows.len(), Default::default());
    for (i, row) in rows.iter().enumerate() {
        if index.insert(key(row).clone(), i).is_some() {
            return Err(InputError {
                file: file.to_path_buf(),
                line: i as u64 + 2,
                field: field.into(),
                message: format!("duplicate {what} {:?}", key(row)),
            });
        }
    }
    Ok(index)
}

/// blake3 of every input file, by path, sorted: the prepare stage's fingerprint.
fn input_digests(files: Vec<PathBuf>) -> Result<Vec<(String, String)>, InputError> {
    let mut digests = Vec::with_capacity(files.len());
    for f in files {
        let d = input::read(&f)
            .map(|b| digest::digest_bytes(&b))
            .map_err(|e| InputError {
                file: f.clone(),
                line: 0,
                field: String::new(),
                message: format!("cannot read: {e}"),
            })?;
        digests.push((rel(&f), d));
    }
    digests.sort();
    Ok(digests)
}

/// `cities.csv`.
fn load_cities(path: &Path) -> Result<Vec<City>, InputError> {
    let cities = read_csv(path, |r| {
        let tier: u8 = r.number_in("tier", 1..=3)?;
        let flag = |f: &str| -> Result<bool, InputError> {
            match r.str(f)? {
                "1" => Ok(true),
                "0" => Ok(false),
                other => Err(r.err(f, format!("must be 0 or 1, got {other:?}"))),
            }
        };
        let (lat, lng) = china_coords(r)?;
        Ok(City {
            name: r.text("name")?,
            province: r.text("province")?,
            region: r.text("region")?,
            tier,
            hub: flag("hub")?,
            lat,
            lng,
            hsr: flag("hsr")?,
            airports: r.list("airports")?,
            stations: r.list("stations")?,
        })
    })?;
    if cities.is_empty() {
        return Err(table::no_rows(path, "every task needs its cities"));
    }
    Ok(cities)
}

/// A folder of region files of one table, rows gathered per city; a file without rows is
/// noted in `empty_files` (the destination check names the cities it leaves bare).
fn per_city_tables<T>(
    folder: &Path,
    city_index: &HashMap<String, CityId>,
    files: &mut Vec<PathBuf>,
    empty_files: &mut Vec<PathBuf>,
    row: impl Fn(&table::Row, CityId) -> Result<T, InputError>,
) -> Result<Vec<Vec<T>>, InputError> {
    let mut per_city: Vec<Vec<T>> = (0..city_index.len()).map(|_| Vec::new()).collect();
    for file in csv_files(folder)? {
        let rows = read_csv(&file, |r| {
            let city = check_city(r, city_index)?;
            Ok((city, row(r, city)?))
        })?;
        if rows.is_empty() {
            empty_files.push(file.clone());
        }
        for (city, t) in rows {
            per_city[city as usize].push(t);
        }
        files.push(file);
    }
    Ok(per_city)
}

/// A row of `food/<region>.csv` or `food/named_<region>.csv`, with the error to give should
/// it repeat a restaurant of its city.
fn food_row(r: &table::Row, city: CityId) -> Result<(Food, InputError), InputError> {
    let kind = match r.str("kind")? {
        "cuisine" => FoodKind::Cuisine,
        "dish" => FoodKind::Dish,
        "restaurant" => FoodKind::Restaurant,
        other => {
            return Err(r.err(
                "kind",
                format!("must be cuisine, dish or restaurant, got {other:?}"),
            ));
        }
    };
    let category = r.text("category")?;
    if !vocab::is_food_category(&category) {
        return Err(r.err(
            "category",
            format!("{category:?} is not in the food vocabulary"),
        ));
    }
    // only a restaurant is a venue with a basis: cuisines and dishes leave the columns empty
    let general_knowledge = kind == FoodKind::Restaurant && basis(r)?;
    let name = r.text("name")?;
    let repeat = repeated_name(r, &name);
    let f = Food {
        city,
        name,
        kind,
        category,
        price: r.parse("price")?,
        general_knowledge,
    };
    Ok((f, repeat))
}

/// The error of a row whose name another venue of its city has already.
fn repeated_name(r: &table::Row, name: &str) -> InputError {
    r.err(
        "name",
        format!(
            "{name:?} is already an attraction, restaurant or hotel of its city (the release's POI table keeps one entry per name and city)"
        ),
    )
}

/// A named venue's `basis` (the guide, list, registry or page that names it) and `basis_kind`,
/// both required when the table has a `basis` column: reviewers check every named row against
/// them. Whether the name rests on general knowledge only: `basis_kind` `general_knowledge`
/// (the basis then says what is known), or a table with no `basis` column (it names no source);
/// `cited` when the basis names a source that names the venue.
fn basis(r: &table::Row) -> Result<bool, InputError> {
    match r.optional("basis") {
        None => Ok(true),
        Some("") => Err(r.err("basis", "empty: say where the name is confirmed")),
        Some(_) => match r.optional("basis_kind").unwrap_or("") {
            "cited" => Ok(false),
            "general_knowledge" => Ok(true),
            other => Err(r.err(
                "basis_kind",
                format!("must be cited or general_knowledge, got {other:?}"),
            )),
        },
    }
}

/// A row of the hotels folder: a price band, or (in a table with a `name` column) a named
/// hotel.
enum HotelRow {
    Band(HotelBand),
    Named(NamedHotel),
}

/// The bands and the named hotels of the hotels folder, per city.
type HotelTables = (Vec<Vec<HotelBand>>, Vec<Vec<NamedHotel>>);

fn split_hotels(rows: Vec<Vec<HotelRow>>) -> HotelTables {
    rows.into_iter()
        .map(|city| {
            let (mut bands, mut named) = (Vec::new(), Vec::new());
            for row in city {
                match row {
                    HotelRow::Band(b) => bands.push(b),
                    HotelRow::Named(h) => named.push(h),
                }
            }
            (bands, named)
        })
        .unzip()
}

/// Per city, no name for two venues (the release's POI table keeps one entry per name and
/// city, so a restaurant or hotel named like an attraction, or like each other, would hide
/// one of them): the error of the row that repeats a name (its file and line).
fn one_venue_per_name(
    attractions: &[Vec<Attraction>],
    food: &[Vec<(Food, InputError)>],
    hotels: &[Vec<(HotelRow, InputError)>],
) -> Result<(), InputError> {
    for ((atts, food), hotels) in attractions.iter().zip(food).zip(hotels) {
        let mut seen: Vec<&String> = atts.iter().map(|a| &a.name).collect();
        let restaurants = food
            .iter()
            .filter(|(f, _)| f.kind == FoodKind::Restaurant)
            .map(|(f, e)| (&f.name, e));
        let named = hotels.iter().filter_map(|(h, e)| match h {
            HotelRow::Named(n) => Some((&n.name, e)),
            HotelRow::Band(_) => None,
        });
        for (name, repeat) in restaurants.chain(named) {
            if seen.contains(&name) {
                return Err(repeat.clone());
            }
            seen.push(name);
        }
    }
    Ok(())
}

/// The rows without the errors they would give.
fn without_errors<T>(rows: Vec<Vec<(T, InputError)>>) -> Vec<Vec<T>> {
    rows.into_iter()
        .map(|city| city.into_iter().map(|(row, _)| row).collect())
        .collect()
}

/// A row of `hotels/<region>.csv` (a band) or `hotels/named_<region>.csv` (a named hotel),
/// with the error to give should it repeat a hotel of its city.
fn hotel_row(r: &table::Row, city: CityId) -> Result<(HotelRow, InputError), InputError> {
    let category = r.text("category")?;
    if !vocab::is_hotel_category(&category) {
        return Err(r.err(
            "category",
            format!("{category:?} is not one of the 13 hotel categories"),
        ));
    }
    if r.has("name") {
        basis(r)?;
        let name = r.text("name")?;
        let repeat = repeated_name(r, &name);
        let h = NamedHotel {
            city,
            name,
            category,
            price: r.number_in("price", 1..=100_000)?,
        };
        return Ok((HotelRow::Named(h), repeat));
    }
    let (lo, hi): (u32, u32) = (r.parse("price_low")?, r.parse("price_high")?);
    if lo > hi {
        return Err(r.err("price_high", format!("{hi} is below price_low {lo}")));
    }
    let band = HotelBand {
        city,
        category,
        price_low: lo,
        price_high: hi,
    };
    Ok((HotelRow::Band(band), r.err("", "")))
}

/// `transport.csv`: the options of every ordered city pair.
fn load_transport(
    path: &Path,
    city_index: &HashMap<String, CityId>,
) -> Result<HashMap<(CityId, CityId), Vec<TransportOption>>, InputError> {
    let city = |r: &table::Row, field: &str| -> Result<CityId, InputError> {
        let name = r.str(field)?;
        city_index
            .get(name)
            .copied()
            .ok_or_else(|| r.err(field, format!("unknown city {name:?}")))
    };
    let rows = read_csv(path, |r| {
        let (from, to) = (city(r, "from")?, city(r, "to")?);
        let mode_s = r.str("mode")?;
        let mode = vocab::TRANSPORT_MODES
            .iter()
            .copied()
            .find(|m| *m == mode_s)
            .ok_or_else(|| {
                r.err(
                    "mode",
                    format!("{mode_s:?} is not one of 飞机/高铁/火车/自驾"),
                )
            })?;
        let (transfers, via) = transfer_columns(r)?;
        let option = TransportOption {
            mode,
            minutes: r.parse("minutes")?,
            fare: r.parse("fare")?,
            distance_km: r.parse("distance_km")?,
            transfers,
            via,
        };
        Ok(((from, to), option))
    })?;
    if rows.is_empty() {
        return Err(table::no_rows(path, "every trip needs intercity transport"));
    }
    let mut transport: HashMap<(CityId, CityId), Vec<TransportOption>> = HashMap::default();
    for (k, v) in rows {
        transport.entry(k).or_default().push(v);
    }
    Ok(transport)
}

/// `profiles.csv`.
fn load_profiles(path: &Path) -> Result<Vec<Profile>, InputError> {
    let profiles = read_csv(path, |r| {
        let one_of = |field: &str, allowed: &[&str]| -> Result<String, InputError> {
            let v = r.text(field)?;
            if !allowed.contains(&v.as_str()) {
                return Err(r.err(
                    field,
                    format!("must be one of {}, got {v:?}", allowed.join(" ")),
                ));
            }
            Ok(v)
        };
        Ok(Profile {
            id: r.text("id")?,
            age: r.number_in("age", 0..=vocab::MAX_AGE)?,
            gender: one_of("gender", &vocab::GENDERS)?,
            marital: one_of("marital", &vocab::MARITAL)?,
            parenting: one_of("parenting", &vocab::PARENTING)?,
            home_province: r.text("home_province")?,
        })
    })?;
    if profiles.is_empty() {
        return Err(table::no_rows(
            path,
            "every member is drawn from the profiles",
        ));
    }
    Ok(profiles)
}

/// The attraction tables, per city sorted by popularity (desc) then name, parent links
/// resolved (`parents::link`).
fn load_attractions(
    paths: &Paths,
    cities: &[City],
    city_index: &HashMap<String, CityId>,
    files: &mut Vec<PathBuf>,
) -> Result<Vec<Vec<Attraction>>, InputError> {
    type Pending = Vec<(Attraction, Option<parents::ParentRef>)>;
    let mut per_city: Vec<Pending> = vec![Vec::new(); cities.len()];
    for file in csv_files(&paths.attractions)? {
        let rows = read_csv(&file, |r| {
            let city = check_city(r, city_index)?;
            let category = r.text("category")?;
            if !vocab::is_attraction_category(&category) {
                return Err(r.err(
                    "category",
                    format!("{category:?} is not in the attraction category vocabulary"),
                ));
            }
            let hours = hours::parse(r.str("hours")?).map_err(|m| r.err("hours", m))?;
            let popularity: u32 = r.number_in("popularity", 1..=100)?;
            let (lat, lng) = china_coords(r)?;
            // `parent` is optional: tables without the column have no sub-spots
            let parent =
                r.optional("parent")
                    .filter(|p| !p.is_empty())
                    .map(|p| parents::ParentRef {
                        file: file.clone(),
                        line: r.line(),
                        name: p.to_string(),
                    });
            Ok((
                r.line(),
                Attraction {
                    city,
                    name: r.text("name")?,
                    category,
                    lat,
                    lng,
                    hours,
                    ticket: r.parse("ticket")?,
                    popularity,
                    parent: None,
                },
                parent,
            ))
        })?;
        for (line, a, parent) in rows {
            let list = &mut per_city[a.city as usize];
            if list.iter().any(|(x, _)| x.name == a.name) {
                return Err(InputError {
                    file: file.clone(),
                    line,
                    field: "name".into(),
                    message: format!(
                        "duplicate attraction {:?} in {}",
                        a.name, cities[a.city as usize].name
                    ),
                });
            }
            list.push((a, parent));
        }
        files.push(file);
    }
    if per_city.iter().all(Vec::is_empty) {
        return Err(table::no_rows(
            &paths.attractions,
            "no attraction in any of its files, so no city can be a destination",
        ));
    }
    let mut out = Vec::with_capacity(cities.len());
    for (city, mut list) in cities.iter().zip(per_city) {
        list.sort_by(|(a, _), (b, _)| {
            b.popularity
                .cmp(&a.popularity)
                .then_with(|| a.name.cmp(&b.name))
        });
        let (mut atts, refs): (Vec<Attraction>, Vec<_>) = list.into_iter().unzip();
        parents::link(&city.name, &mut atts, &refs)?;
        out.push(atts);
    }
    Ok(out)
}
