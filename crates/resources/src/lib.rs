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
mod load;
pub mod names;
pub mod parents;
pub mod table;
pub mod vocab;

use gtb_core::FastMap as HashMap;
use std::path::{Path, PathBuf};

pub use aliases::{Alias, AliasKind};
pub use archetypes::{Archetype, Slot, Strategy};
pub(crate) use load::check_city;
pub use load::load;
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
