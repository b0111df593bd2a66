//! Names in the world: the forms a city is asked by, the id of a venue, opening hours as text.

use gtb_core::FastMap as HashMap;
use gtb_resources::hours::OpeningHours;
use gtb_resources::{CityId, Resources, short_city_name};

/// The forms of a city name that gtb pre-populates: the name as `cities.csv` writes it and,
/// for a name ending in 市, the name without it (`杭州市`, `杭州`). Both pass the release's
/// administrative-name check; shorter forms of other names (`延边` for 延边朝鲜族自治州) do not,
/// so they are answered (`CityNames::resolve`) but never pre-populated.
pub fn city_forms(name: &str) -> Vec<String> {
    let mut out = vec![name.to_string()];
    if let Some(short) = name.strip_suffix('市')
        && short.chars().count() >= 2
    {
        out.push(short.to_string());
    }
    out
}

/// City name (any form an agent may send) → city.
#[derive(Debug, Default)]
pub struct CityNames {
    by_form: HashMap<String, CityId>,
}

impl CityNames {
    pub fn new(res: &Resources) -> CityNames {
        let mut by_form = HashMap::default();
        for (i, c) in res.cities.iter().enumerate() {
            let id = i as CityId;
            for f in city_forms(&c.name) {
                by_form.entry(f).or_insert(id);
            }
            by_form
                .entry(short_city_name(&c.name).to_string())
                .or_insert(id);
        }
        CityNames { by_form }
    }

    /// The city a name means: a form of `city_forms`, or the short name (`大理`, `延边`).
    pub fn resolve(&self, name: &str) -> Option<CityId> {
        self.by_form.get(name.trim()).copied()
    }
}

/// The id `search_poi` gives a venue and `get_poi_detail` takes: `gtb` and 12 hex digits of
/// the blake3 of city and name, the same in every split built over the same resources.
pub fn venue_id(city: &str, name: &str) -> String {
    let h = blake3::hash(format!("{city}\u{0}{name}").as_bytes());
    format!("gtb{}", &h.to_hex()[..12])
}

/// A stable small number of a text (modelled train and flight numbers, schedule offsets).
pub fn small_hash(text: &str, modulo: u32) -> u32 {
    small_hash_of(&[text], modulo)
}

/// `n` in decimal, written into `buf` (no allocation).
pub fn decimal(n: u32, buf: &mut [u8; 10]) -> &str {
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).expect("ASCII digits")
}

/// [`small_hash`] of the text `parts` make one after another, without building it (a world
/// numbers millions of services).
pub fn small_hash_of(parts: &[&str], modulo: u32) -> u32 {
    let mut hasher = blake3::Hasher::new();
    for p in parts {
        hasher.update(p.as_bytes());
    }
    let h = hasher.finalize();
    let b = h.as_bytes();
    u32::from_le_bytes([b[0], b[1], b[2], b[3]]) % modulo
}

/// Opening hours as text in the resources' compact grammar: `always`, or rules separated by
/// `; `, each `[MM-DD~MM-DD ][wA,B,.. ]HH:MM-HH:MM[,HH:MM-HH:MM]` (w1 = Monday).
pub fn hours_text(h: &OpeningHours) -> String {
    if h.always_open {
        return "always".to_string();
    }
    let rules: Vec<String> = h
        .rules
        .iter()
        .map(|r| {
            let mut s = String::new();
            if let Some(d) = &r.date_range {
                s.push_str(&format!("{}~{} ", d.start, d.end));
            }
            if let Some(w) = &r.weekdays {
                let days: Vec<String> = w.iter().map(u8::to_string).collect();
                s.push_str(&format!("w{} ", days.join(",")));
            }
            let windows: Vec<String> = r
                .time_windows
                .iter()
                .map(|t| format!("{}-{}", t.open, t.close))
                .collect();
            s.push_str(&windows.join(","));
            s
        })
        .collect();
    rules.join("; ")
}

/// Minutes after midnight of `HH:MM`.
pub fn minutes(hhmm: &str) -> Option<u32> {
    gtb_resources::hours::clock_minutes(hhmm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_and_hashes_in_parts_are_the_formatted_ones() {
        let mut buf = [0; 10];
        for n in [0, 7, 10, 99, 1234, 86_399, u32::MAX] {
            assert_eq!(decimal(n, &mut buf), n.to_string());
        }
        let whole = small_hash("北京市>上海市>高铁>485", 9000);
        assert_eq!(
            small_hash_of(&["北京市", ">", "上海市>高铁", ">485"], 9000),
            whole
        );
    }

    #[test]
    fn issue28_forms_ids_hours() {
        assert_eq!(city_forms("杭州市"), vec!["杭州市", "杭州"]);
        assert_eq!(city_forms("延边朝鲜族自治州"), vec!["延边朝鲜族自治州"]);
        assert_eq!(venue_id("杭州市", "西湖"), venue_id("杭州市", "西湖"));
        assert_ne!(venue_id("杭州市", "西湖"), venue_id("杭州市", "灵隐寺"));
        assert_eq!(venue_id("杭州市", "西湖").len(), 15);
        let h = gtb_resources::hours::parse("04-01~10-31 w2-7 08:00-17:00; 09:00-16:30")
            .unwrap()
            .unwrap();
        assert_eq!(
            hours_text(&h),
            "04-01~10-31 w2,3,4,5,6,7 08:00-17:00; 09:00-16:30"
        );
        assert_eq!(minutes("08:05"), Some(485));
    }
}
