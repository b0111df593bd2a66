//! Loading the raw tables: the cities, the transport and profile tables, the cross-checks
//! between them, and the input digests (`load`); the venue tables are in `venues`.

use super::*;

mod venues;
use venues::{
    food_row, hotel_row, load_attractions, one_venue_per_name, split_hotels, without_errors,
};

/// The `lat` and `lng` columns of a row: finite WGS-84 degrees within China's bounding box.
pub(super) fn china_coords(row: &table::Row) -> Result<(f64, f64), InputError> {
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
pub(super) fn check_destinations_eat_and_sleep(
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
pub(super) fn transfer_columns(r: &table::Row) -> Result<(u32, Vec<String>), InputError> {
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
    // the transport table, the largest, is read on a thread of its own while the venues load
    // (every command starts about 6 ms sooner, of 70); a venue's error still comes first
    let (venues, transport) = std::thread::scope(|s| {
        let transport = s.spawn(|| load_transport(&paths.transport, &city_index));
        let venues = load_venues(paths, &cities, &city_index, &mut files);
        let transport = transport.join();
        (
            venues,
            transport.unwrap_or_else(|p| std::panic::resume_unwind(p)),
        )
    });
    let Venues {
        attractions,
        aliases,
        food,
        hotels,
        named_hotels,
    } = venues?;
    let transport = transport?;
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

/// The venue tables of [`load`], checked against each other.
struct Venues {
    attractions: Vec<Vec<Attraction>>,
    aliases: Vec<Vec<Alias>>,
    food: Vec<Vec<Food>>,
    hotels: Vec<Vec<HotelBand>>,
    named_hotels: Vec<Vec<NamedHotel>>,
}

/// The attractions, their aliases, and the food and hotel tables; the files read go to `files`.
fn load_venues(
    paths: &Paths,
    cities: &[City],
    city_index: &HashMap<String, CityId>,
    files: &mut Vec<PathBuf>,
) -> Result<Venues, InputError> {
    let attractions = load_attractions(paths, cities, city_index, files)?;
    let aliases = if input::exists(&paths.aliases) {
        files.push(paths.aliases.clone());
        aliases::load(&paths.aliases, city_index, &attractions)?
    } else {
        vec![Vec::new(); cities.len()]
    };
    let mut empty_files: Vec<PathBuf> = Vec::new();
    let food_rows = per_city_tables(&paths.food, city_index, files, &mut empty_files, food_row)?;
    let hotel_rows = per_city_tables(
        &paths.hotels,
        city_index,
        files,
        &mut empty_files,
        hotel_row,
    )?;
    one_venue_per_name(&attractions, &food_rows, &hotel_rows)?;
    let food = without_errors(food_rows);
    let (hotels, named_hotels) = split_hotels(without_errors(hotel_rows));
    check_destinations_eat_and_sleep(paths, cities, &attractions, &food, &hotels, &empty_files)?;
    Ok(Venues {
        attractions,
        aliases,
        food,
        hotels,
        named_hotels,
    })
}

/// Position by key, refusing a key given twice (the row of the second names it).
pub(super) fn unique_index<T>(
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
pub(super) fn input_digests(files: Vec<PathBuf>) -> Result<Vec<(String, String)>, InputError> {
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
pub(super) fn load_cities(path: &Path) -> Result<Vec<City>, InputError> {
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
pub(super) fn per_city_tables<T>(
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

/// `transport.csv`: the options of every ordered city pair.
pub(super) fn load_transport(
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
pub(super) fn load_profiles(path: &Path) -> Result<Vec<Profile>, InputError> {
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
