//! The venue tables: attractions (with their parent links), food and hotels, each row checked
//! and named by file, line and field.

use super::*;

/// A row of `food/<region>.csv` or `food/named_<region>.csv`, with the error to give should
/// it repeat a restaurant of its city.
pub(super) fn food_row(r: &table::Row, city: CityId) -> Result<(Food, InputError), InputError> {
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
pub(super) fn repeated_name(r: &table::Row, name: &str) -> InputError {
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
pub(super) fn basis(r: &table::Row) -> Result<bool, InputError> {
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
pub(super) enum HotelRow {
    Band(HotelBand),
    Named(NamedHotel),
}

/// The bands and the named hotels of the hotels folder, per city.
pub(super) type HotelTables = (Vec<Vec<HotelBand>>, Vec<Vec<NamedHotel>>);

pub(super) fn split_hotels(rows: Vec<Vec<HotelRow>>) -> HotelTables {
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
pub(super) fn one_venue_per_name(
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
pub(super) fn without_errors<T>(rows: Vec<Vec<(T, InputError)>>) -> Vec<Vec<T>> {
    rows.into_iter()
        .map(|city| city.into_iter().map(|(row, _)| row).collect())
        .collect()
}

/// A row of `hotels/<region>.csv` (a band) or `hotels/named_<region>.csv` (a named hotel),
/// with the error to give should it repeat a hotel of its city.
pub(super) fn hotel_row(
    r: &table::Row,
    city: CityId,
) -> Result<(HotelRow, InputError), InputError> {
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

/// The attraction tables, per city sorted by popularity (desc) then name, parent links
/// resolved (`parents::link`).
pub(super) fn load_attractions(
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
