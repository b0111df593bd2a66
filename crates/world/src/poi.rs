//! `search_poi`, `get_poi_detail` and `maps_geo`: the venues of the world's table
//! (attractions with coordinates, hours, ticket and popularity; named restaurants and hotels
//! with category and price and no coordinates; modelled venues labelled as such).

use crate::names::{hours_text, venue_id};
use crate::{MAX_ANSWER_CHARS, World, no_data, param};
use gtb_resources::CityId;
use gtb_score::PoiDb;
use gtb_score::resolver::{Poi, PoiKind};
use serde_json::{Map, Value, json};

/// Words that ask for every venue of a kind rather than a name or category.
pub const GENERIC: [(&str, PoiKind); 24] = [
    ("景点", PoiKind::Attraction),
    ("景区", PoiKind::Attraction),
    ("旅游景点", PoiKind::Attraction),
    ("热门景点", PoiKind::Attraction),
    ("名胜古迹", PoiKind::Attraction),
    ("旅游", PoiKind::Attraction),
    ("游玩", PoiKind::Attraction),
    ("观光", PoiKind::Attraction),
    ("餐厅", PoiKind::Food),
    ("美食", PoiKind::Food),
    ("饭店", PoiKind::Food),
    ("餐馆", PoiKind::Food),
    ("小吃", PoiKind::Food),
    ("特色美食", PoiKind::Food),
    ("当地美食", PoiKind::Food),
    ("特色菜", PoiKind::Food),
    ("吃饭", PoiKind::Food),
    ("酒店", PoiKind::Hotel),
    ("宾馆", PoiKind::Hotel),
    ("住宿", PoiKind::Hotel),
    ("民宿", PoiKind::Hotel),
    ("旅馆", PoiKind::Hotel),
    ("客栈", PoiKind::Hotel),
    ("饭馆", PoiKind::Food),
];

const MODELLED_NOTE: &str = "名称带（城市·示意）者为gtb的示意场所（modelled）：代表该城市一家此类场所，非具体门店，类别与价格取自城市的酒店价格带或美食表；无坐标者gtb不提供坐标";

fn kind_label(k: PoiKind) -> &'static str {
    match k {
        PoiKind::Attraction => "景点",
        PoiKind::Food => "餐厅",
        PoiKind::Hotel => "酒店",
    }
}

/// Each venue's relevance to the best of the keywords, for the venues of `city` in table
/// order. A venue's relevance to a keyword: 0 no match, 4 exact name, 3 name contains it, 2 it
/// contains the name (of two characters or more), 1 category or generic word. Found through
/// the city's joined names and categories (`PoiDb::texts`) rather than venue by venue: a
/// city of the release's 338,000-POI dump has thousands.
fn relevances(db: &PoiDb, city: &str, keywords: &[&str]) -> Vec<u8> {
    let pois = db.city(city);
    let mut rel = vec![0u8; pois.len()];
    let Some(texts) = db.texts(city) else {
        return rel;
    };
    let mut raise = |i: usize, r: u8| rel[i] = rel[i].max(r);
    for &kw in keywords {
        if let Some(&(_, kind)) = GENERIC.iter().find(|(w, _)| *w == kw) {
            let of_kind = pois.iter().enumerate().filter(|(_, p)| p.kind == kind);
            of_kind.for_each(|(i, _)| raise(i, 1));
            continue;
        }
        let finder = memchr::memmem::Finder::new(kw);
        for i in texts.categories.containing(&finder) {
            raise(i, 1);
        }
        for i in texts.names.containing(&finder) {
            raise(i, if pois[i].name == kw { 4 } else { 3 });
        }
        // the names the keyword contains: its runs of two characters or more, as long as a
        // name at most
        let bounds: Vec<usize> = kw
            .char_indices()
            .map(|(b, _)| b)
            .chain([kw.len()])
            .collect();
        for (k, &from) in bounds.iter().enumerate() {
            let ends = bounds[k + 1..].iter().skip(1);
            for &to in ends.take_while(|&&to| to - from <= texts.names.longest()) {
                if let Some(i) = db.position(city, &kw[from..to]) {
                    raise(i, 2);
                }
            }
        }
    }
    rel
}

impl World<'_> {
    /// (lat, lng) of a venue with real coordinates (attractions only).
    pub(crate) fn coords(&self, c: CityId, p: &Poi) -> Option<(f64, f64)> {
        let a = &self.res.attractions[c as usize][p.attraction?];
        Some((a.lat, a.lng))
    }

    fn popularity(&self, c: CityId, p: &Poi) -> u32 {
        p.attraction
            .map_or(0, |i| self.res.attractions[c as usize][i].popularity)
    }

    /// A venue as a search result or detail: id, name, kind, category, prices, hours, place.
    pub(crate) fn venue_json(&self, c: CityId, p: &Poi, detail: bool) -> Value {
        let city = &self.res.cities[c as usize].name;
        let mut m = Map::new();
        m.insert("id".into(), venue_id(city, &p.name).into());
        m.insert("name".into(), p.name.clone().into());
        m.insert("type".into(), kind_label(p.kind).into());
        m.insert("category".into(), p.category.clone().into());
        match p.kind {
            PoiKind::Attraction => {
                m.insert("ticket".into(), p.price.into());
                let hours = p.hours.as_ref().map_or("unknown".to_string(), hours_text);
                m.insert("opening_hours".into(), hours.into());
                m.insert("popularity".into(), self.popularity(c, p).into());
            }
            PoiKind::Food => {
                m.insert("avg_cost_per_person".into(), p.price.into());
            }
            PoiKind::Hotel => {
                m.insert("price_per_room_night".into(), p.price.into());
                m.insert("avg_cost_per_person".into(), p.price.div_ceil(2).into());
                if p.stand_in
                    && let Some(b) = self.res.hotels[c as usize]
                        .iter()
                        .find(|b| b.category == p.category)
                {
                    m.insert(
                        "price_band".into(),
                        format!("{}-{}", b.price_low, b.price_high).into(),
                    );
                }
            }
        }
        if let Some((lat, lng)) = self.coords(c, p) {
            m.insert("location".into(), format!("{lng},{lat}").into());
        }
        if p.stand_in {
            m.insert("modelled".into(), true.into());
        }
        if detail {
            m.insert("city".into(), city.clone().into());
        }
        Value::Object(m)
    }

    pub(crate) fn search_poi(&self, p: &Map<String, Value>) -> Answer {
        let (kw, city_name) = (
            param(p, "keywords").unwrap_or(""),
            param(p, "city").unwrap_or(""),
        );
        let Some(c) = self.city(city_name) else {
            return no_data(
                &[("city", city_name.into()), ("keywords", kw.into())],
                "该城市不在本数据集的世界中（gtb只有目的地和出发城市的数据）",
            )
            .into();
        };
        let city = &self.res.cities[c as usize].name;
        let parts: Vec<&str> = kw
            .split(|ch: char| ch.is_whitespace() || "|,，、/".contains(ch))
            .filter(|s| !s.is_empty())
            .collect();
        let pois = self.db.city(city).iter();
        let mut hits: Vec<(u8, &Poi)> = relevances(&self.db, city, &parts)
            .into_iter()
            .zip(pois)
            .filter(|&(r, _)| r > 0)
            .collect();
        let num = |k: &str| crate::get(p, k).and_then(Value::as_f64);
        if let Some(lo) = num("price_min") {
            hits.retain(|(_, x)| x.price as f64 >= lo);
        }
        if let Some(hi) = num("price_max") {
            hits.retain(|(_, x)| x.price as f64 <= hi);
        }
        let centre = self.near(c, p);
        if let Some((at, radius)) = centre {
            hits.retain(|(_, x)| {
                self.coords(c, x)
                    .is_some_and(|xy| gtb_resources::geodesy::distance_km(at, xy) <= radius)
            });
        }
        let sort = param(p, "sort_by").unwrap_or("relevance");
        self.sort_hits(c, &mut hits, sort, centre.map(|x| x.0));
        let page = crate::get(p, "page")
            .and_then(Value::as_u64)
            .unwrap_or(1)
            .max(1) as usize;
        let size = p
            .get("page_size")
            .and_then(Value::as_u64)
            .unwrap_or(10)
            .clamp(1, 20) as usize;
        let shown: Vec<&Poi> = hits
            .iter()
            .skip((page - 1) * size)
            .take(size)
            .map(|x| x.1)
            .collect();
        let status = if hits.is_empty() { "no_data" } else { "ok" };
        let mut head = json!({
            "status": status,
            "city": city,
            "keywords": kw,
            "total": hits.len(),
            "page": page,
            "page_size": size,
        });
        if hits.is_empty() {
            head["note"] = "本城市没有符合该关键词的场所（gtb的数据：真实景点、有名的餐厅和酒店，以及按类别的示意场所）".into();
        } else if shown.iter().any(|x| x.stand_in) {
            head["note"] = MODELLED_NOTE.into();
        }
        if param(p, "region").is_some() {
            head["region_note"] = "gtb没有区县数据：结果覆盖全市".into();
        }
        let items: Vec<Value> = shown.iter().map(|x| self.venue_json(c, x, false)).collect();
        fit(head, "pois", items)
    }

    /// The centre and radius of a nearby search: `location` as `lng,lat`, a venue with
    /// coordinates, or the city itself.
    fn near(&self, c: CityId, p: &Map<String, Value>) -> Option<((f64, f64), f64)> {
        let loc = param(p, "location")?;
        let radius = crate::get(p, "radius_km")
            .and_then(Value::as_f64)
            .unwrap_or(5.0);
        self.position(c, loc).map(|(at, _)| (at, radius))
    }

    /// A place's (lat, lng) in a city and whether it is real (a coordinate pair or an
    /// attraction) rather than the city centre (the city's own name).
    pub(crate) fn position(&self, c: CityId, place: &str) -> Option<((f64, f64), bool)> {
        if let Some((lng, lat)) = place.split_once(',')
            && let (Ok(lng), Ok(lat)) = (lng.trim().parse::<f64>(), lat.trim().parse::<f64>())
        {
            return Some(((lat, lng), true));
        }
        let city = &self.res.cities[c as usize];
        if self.city(place) == Some(c) {
            return Some(((city.lat, city.lng), false));
        }
        let poi = self.db.find(place, &city.name)?;
        self.coords(c, poi).map(|xy| (xy, true))
    }

    fn sort_hits(&self, c: CityId, hits: &mut [(u8, &Poi)], sort: &str, at: Option<(f64, f64)>) {
        let pop = |x: &Poi| std::cmp::Reverse(self.popularity(c, x));
        match sort {
            "price_low" => hits.sort_by_key(|(r, x)| (x.price, std::cmp::Reverse(*r))),
            "price_high" => {
                hits.sort_by_key(|(r, x)| (std::cmp::Reverse(x.price), std::cmp::Reverse(*r)))
            }
            "rating" => hits.sort_by_key(|(r, x)| (pop(x), std::cmp::Reverse(*r))),
            "distance" => {
                let city = &self.res.cities[c as usize];
                let from = at.unwrap_or((city.lat, city.lng));
                let d = |x: &Poi| {
                    self.coords(c, x).map_or(u64::MAX, |xy| {
                        (gtb_resources::geodesy::distance_km(from, xy) * 1000.0) as u64
                    })
                };
                hits.sort_by_key(|(_, x)| d(x));
            }
            _ => hits.sort_by_key(|(r, x)| (std::cmp::Reverse(*r), pop(x))),
        }
    }

    pub(crate) fn poi_detail(&self, p: &Map<String, Value>) -> Value {
        let id = param(p, "id").unwrap_or("");
        match self.ids.get(id) {
            Some(&(c, i)) => {
                let poi = &self.db.city(&self.res.cities[c as usize].name)[i];
                let mut v = self.venue_json(c, poi, true);
                v["status"] = "ok".into();
                if poi.stand_in {
                    v["note"] = MODELLED_NOTE.into();
                } else if poi.attraction.is_none() {
                    v["note"] = "gtb没有该场所的坐标、电话和营业时间".into();
                }
                v
            }
            None => no_data(
                &[("id", id.into())],
                "没有这个POI ID（ID来自本数据集的search_poi结果）",
            ),
        }
    }

    pub(crate) fn geo(&self, p: &Map<String, Value>) -> Value {
        let address = param(p, "address").unwrap_or("");
        let scope = param(p, "city").and_then(|c| self.city(c));
        if let Some(c) = self.city(address).filter(|c| scope.is_none_or(|s| s == *c)) {
            let city = &self.res.cities[c as usize];
            return json!({"status": "ok", "address": address, "name": city.name, "type": "城市",
                "location": format!("{},{}", city.lng, city.lat), "precision": "城市中心"});
        }
        let cities: Vec<CityId> = match scope {
            Some(c) => vec![c],
            // the cities with a venue of exactly this name first, then every city
            None => {
                let exact = self.cities_named(address);
                let all = 0..self.res.cities.len() as CityId;
                exact
                    .iter()
                    .copied()
                    .chain(all.filter(|c| !exact.contains(c)))
                    .collect()
            }
        };
        for c in cities {
            let city = &self.res.cities[c as usize].name;
            let Some(poi) = self.db.find(address, city) else {
                continue;
            };
            let mut v = json!({"status": "ok", "address": address, "name": poi.name, "city": city,
                "type": kind_label(poi.kind), "category": poi.category});
            match self.coords(c, poi) {
                Some((lat, lng)) => {
                    v["location"] = format!("{lng},{lat}").into();
                    v["precision"] = "约数公里".into();
                }
                None => {
                    v["status"] = "no_data".into();
                    v["note"] = "gtb没有该场所的坐标（不编造坐标）".into();
                }
            }
            return v;
        }
        no_data(&[("address", address.into())], "gtb的世界中没有这个地点")
    }
}

/// A tool's answer: a JSON value, or the text of one already serialised (`fit`).
pub(crate) enum Answer {
    Value(Value),
    Text(String),
}

impl From<Value> for Answer {
    fn from(v: Value) -> Self {
        Answer::Value(v)
    }
}

impl Answer {
    /// The answer as the cache stores it.
    pub(crate) fn text(self) -> String {
        match self {
            Answer::Value(v) => serde_json::to_string(&v).expect("a JSON value serialises"),
            Answer::Text(t) => t,
        }
    }
}

/// `head` with `items` under `key`, dropping items from the end while the JSON is longer than
/// `MAX_ANSWER_CHARS` (then `shown` says how many are left): the answer's text (`fit_texts`).
pub(crate) fn fit(head: Value, key: &str, items: Vec<Value>) -> Answer {
    let items = items
        .iter()
        .map(|v| serde_json::to_string(v).expect("a JSON value serialises"));
    fit_texts(head, key, items.collect())
}

/// `fit` over items already serialised (compact JSON): the text is what serde_json writes for
/// `head` with `key` (a key `head` lacks) added last, then `shown` when items were dropped.
/// Each item's length is counted once; the text is written once, for the count that fits.
pub(crate) fn fit_texts(head: Value, key: &str, items: Vec<String>) -> Answer {
    debug_assert!(head.get(key).is_none() && head.get("shown").is_none());
    let head = serde_json::to_string(&head).expect("a JSON value serialises");
    let head = head.strip_suffix('}').expect("an object");
    let open = format!(",{}:[", Value::from(key));
    let full = items.len();
    // the characters of the answer with the first `k` items
    let fixed = head.chars().count() + open.chars().count() + "]}".len();
    let shown_chars = |k: usize| match k == full {
        true => 0,
        false => ",\"shown\":".len() + k.to_string().len(),
    };
    let mut sum: usize = items.iter().map(|t| t.chars().count()).sum::<usize>();
    let mut k = full;
    while k > 0 && fixed + sum + (k - 1) + shown_chars(k) > MAX_ANSWER_CHARS {
        k -= 1;
        sum -= items[k].chars().count();
    }
    let mut text = String::with_capacity(head.len() + open.len() + sum + k + 16);
    text.push_str(head);
    text.push_str(&open);
    for (i, item) in items[..k].iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(item);
    }
    text.push(']');
    if k != full {
        text.push_str(&format!(",\"shown\":{k}"));
    }
    text.push('}');
    Answer::Text(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `fit` as first written: serialise the whole answer, drop the last item, again.
    fn fit_by_popping(mut head: Value, key: &str, items: Vec<Value>) -> String {
        let full = items.len();
        head[key] = Value::Array(items);
        loop {
            let shown = head[key].as_array().map_or(0, Vec::len);
            if full != shown {
                head["shown"] = shown.into();
            }
            let text = serde_json::to_string(&head).unwrap();
            if text.chars().count() <= MAX_ANSWER_CHARS || shown == 0 {
                return text;
            }
            head[key].as_array_mut().unwrap().pop();
        }
    }

    #[test]
    fn fit_counts_each_item_once_and_writes_what_popping_wrote() {
        // items of Chinese text (three bytes a character: the cap counts characters), with
        // lengths that cross the cap at every count from none to all
        for n in [0usize, 1, 5, 40, 120] {
            for width in [1usize, 7, 30, 2500] {
                let items: Vec<Value> = (0..n)
                    .map(|i| json!({"name": "景".repeat(width + i % 3), "n": i, "ok": i % 2 == 0}))
                    .collect();
                let head = json!({"status": "ok", "city": "西安市", "total": n});
                let Answer::Text(got) = fit(head.clone(), "pois", items.clone()) else {
                    panic!("fit writes text");
                };
                assert_eq!(
                    got,
                    fit_by_popping(head, "pois", items),
                    "n {n} width {width}"
                );
            }
        }
    }

    /// A venue's relevance as first written, venue by venue.
    fn relevance_of(p: &Poi, kw: &str) -> u8 {
        if let Some((_, kind)) = GENERIC.iter().find(|(w, _)| *w == kw) {
            return u8::from(p.kind == *kind);
        }
        if p.name == kw {
            4
        } else if p.name.contains(kw) {
            3
        } else if p.name.chars().count() >= 2 && kw.contains(p.name.as_str()) {
            2
        } else {
            u8::from(p.category.contains(kw))
        }
    }

    /// `relevances` (the joined names and categories) gives each venue what the venue-by-venue
    /// rule gives, for exact names, parts of names, names inside keywords, one-character
    /// names, categories, generic words and several keywords at once.
    #[test]
    fn relevances_are_the_venue_by_venue_rule() {
        let venue = |name: &str, category: &str, kind| Poi {
            name: name.into(),
            category: category.into(),
            kind,
            hours: None,
            price: 50,
            attraction: None,
            stand_in: false,
        };
        let mut db = PoiDb::default();
        let city = "杭州市";
        for p in [
            venue("西湖", "湖泊", PoiKind::Attraction),
            venue("西湖醋鱼馆", "杭帮菜", PoiKind::Food),
            venue("湖", "湖泊", PoiKind::Attraction),
            venue("楼外楼", "杭帮菜", PoiKind::Food),
            venue("外楼", "小吃", PoiKind::Food),
            venue("西湖国宾馆", "豪华型", PoiKind::Hotel),
            venue("", "小吃", PoiKind::Food),
        ] {
            db.add(city, p);
        }
        let queries: [&[&str]; 9] = [
            &["西湖"],
            &["湖"],
            &["楼外楼西湖醋鱼馆"],
            &["杭帮菜"],
            &["美食"],
            &["酒店", "西湖"],
            &["不在"],
            &["外楼", "湖泊"],
            &["西湖国宾馆附近"],
        ];
        for kws in queries {
            let want: Vec<u8> = db
                .city(city)
                .iter()
                .map(|p| kws.iter().map(|k| relevance_of(p, k)).max().unwrap_or(0))
                .collect();
            assert_eq!(relevances(&db, city, kws), want, "{kws:?}");
        }
        assert!(relevances(&db, "无此城", &["西湖"]).is_empty());
    }
}
