//! POI name matching: exact after normalisation, then fuzzy with a threshold and an ambiguity
//! margin, against a per-city index of the inventory.

use gtb_core::FastMap as HashMap;
pub use gtb_resources::names::normalize;
use gtb_resources::{Alias, AliasKind, City, CityId, Resources};

/// Generic tails of official scenic-area names, longest first: 黄果树风景名胜区 and
/// 黄果树瀑布 share the core 黄果树. `scripts/check_coords.py` uses the same list.
pub const GENERIC_SUFFIXES: [&str; 18] = [
    "世界文化遗产旅游区",
    "世界遗产旅游区",
    "文化旅游景区",
    "生态旅游景区",
    "旅游度假区",
    "文化旅游区",
    "生态旅游区",
    "风景名胜区",
    "历史文化街区",
    "国家森林公园",
    "国家地质公园",
    "国家湿地公园",
    "风景旅游区",
    "旅游景区",
    "风景区",
    "旅游区",
    "景区",
    "景点",
];

/// The core of a normalised place name: without generic tails and, in such official long
/// forms, without leading place names (`prefixes`: the city and province, long and short).
/// 贵州省安顺市黄果树风景名胜区 -> 黄果树, 长沙橘子洲景区 -> 橘子洲. A name without a generic tail
/// keeps its place name (湖北省博物馆 is not a 博物馆 of any city), and at least three characters
/// stay after a place name (安顺古城历史文化街区 -> 安顺古城, not 古城).
pub fn core_name(normalized: &str, prefixes: &[String]) -> String {
    fn strip_suffixes(mut s: &str) -> &str {
        while let Some(rest) = GENERIC_SUFFIXES
            .iter()
            .find_map(|suffix| s.strip_suffix(suffix))
            .filter(|rest| rest.chars().count() >= 2)
        {
            s = rest;
        }
        s
    }
    let mut s = strip_suffixes(normalized);
    if s.len() == normalized.len() {
        return s.to_string();
    }
    while let Some(rest) = prefixes
        .iter()
        .find_map(|p| s.strip_prefix(p.as_str()))
        .filter(|rest| rest.chars().count() >= 3)
    {
        s = strip_suffixes(rest);
    }
    s.to_string()
}

/// The place-name prefixes of a city for `core_name`: 安顺市, 安顺, 贵州省, 贵州 (normalised,
/// longest first).
pub fn city_prefixes(city: &City) -> Vec<String> {
    let province_short = [
        "壮族自治区",
        "回族自治区",
        "维吾尔自治区",
        "自治区",
        "省",
        "市",
    ]
    .iter()
    .find_map(|s| city.province.strip_suffix(s))
    .unwrap_or(&city.province);
    let mut p: Vec<String> = [
        city.name.as_str(),
        city.short_name(),
        city.province.as_str(),
        province_short,
    ]
    .iter()
    .filter(|x| x.chars().count() >= 2)
    .map(|x| normalize(x))
    .collect();
    p.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    p.dedup();
    p
}

/// Outcome of matching one name.
#[derive(Debug, Clone, PartialEq)]
pub enum Match {
    Exact,
    /// snapped to the canonical name, with its similarity
    Snapped(String, f64),
    /// another name of an inventory attraction (`raw_data/aliases.csv`)
    Aliased {
        name: String,
        kind: AliasKind,
    },
    /// no candidate close enough, or two too close to call
    Unknown {
        best: Option<(String, f64)>,
    },
}

/// One inventory name with its normalised and core forms.
#[derive(Debug, Clone)]
struct Entry {
    norm: String,
    canon: String,
    core: String,
}

/// The names of one city's attractions, with the alias table, ready for matching. The LLM
/// reply parser uses `resolve` (no guessing); the validator uses `lookup` (then containment
/// and fuzzy matching).
#[derive(Debug, Clone, Default)]
pub struct CityNames {
    /// normalized -> canonical
    exact: HashMap<String, String>,
    all: Vec<Entry>,
    /// the canonical names, as a set: `resolve` asks it of every name a table holds
    canon: gtb_core::FastSet<String>,
    /// core -> canonical names with that core
    by_core: HashMap<String, Vec<String>>,
    /// normalized alias -> (canonical, kind)
    aliases: HashMap<String, (String, AliasKind)>,
    prefixes: Vec<String>,
}

impl CityNames {
    pub fn new(names: Vec<String>, aliases: &[Alias], prefixes: Vec<String>) -> Self {
        let mut exact = HashMap::with_capacity_and_hasher(names.len(), Default::default());
        let mut all = Vec::with_capacity(names.len());
        let mut by_core: HashMap<String, Vec<String>> = HashMap::default();
        let canon_set = names.iter().cloned().collect();
        for canon in names {
            let norm = normalize(&canon);
            let core = core_name(&norm, &prefixes);
            exact.entry(norm.clone()).or_insert_with(|| canon.clone());
            by_core.entry(core.clone()).or_default().push(canon.clone());
            all.push(Entry { norm, canon, core });
        }
        let aliases = aliases
            .iter()
            .map(|a| (normalize(&a.alias), (a.name.clone(), a.kind)))
            .collect();
        CityNames {
            exact,
            all,
            canon: canon_set,
            by_core,
            aliases,
            prefixes,
        }
    }

    /// The attractions and aliases of one city of the inventory.
    pub fn of_city(res: &Resources, city: CityId) -> Self {
        Self::new(
            res.attractions[city as usize]
                .iter()
                .map(|a| a.name.clone())
                .collect(),
            &res.aliases[city as usize],
            city_prefixes(res.city(city)),
        )
    }

    /// Certain matches only: the name itself, its normalised form, an alias, or the one
    /// inventory name with the same core (黄果树风景名胜区 ~ 黄果树瀑布 needs `lookup`; 长沙橘子洲景区
    /// ~ 橘子洲 resolves here).
    pub fn resolve(&self, name: &str) -> Option<Match> {
        // a name `exact` maps to itself is a canonical name: the set answers both
        if self.canon.contains(name) {
            return Some(Match::Exact);
        }
        let k = normalize(name);
        if let Some(c) = self.exact.get(&k) {
            return Some(Match::Snapped(c.clone(), 1.0));
        }
        let core = core_name(&k, &self.prefixes);
        for key in [&k, &core] {
            if let Some((c, kind)) = self.aliases.get(key.as_str()) {
                return Some(Match::Aliased {
                    name: c.clone(),
                    kind: *kind,
                });
            }
        }
        match self.by_core.get(&core).map(Vec::as_slice) {
            Some([one]) => Some(Match::Snapped(one.clone(), 1.0)),
            _ => None,
        }
    }

    /// `resolve`, then containment of cores (the longer name holds the shorter, as the
    /// release's resolver matches: 海口骑楼老街历史文化街区 ~ 骑楼老街; the closest length wins,
    /// ties are ambiguous), then Jaro-Winkler with a threshold and a margin.
    pub fn lookup(&self, name: &str, threshold: f64, margin: f64) -> Match {
        if let Some(m) = self.resolve(name) {
            return m;
        }
        let k = normalize(name);
        let kc = core_name(&k, &self.prefixes);
        let qn = kc.chars().count() as f64;
        let mut contained: Vec<(&str, f64)> = self
            .all
            .iter()
            .filter(|e| {
                e.core.chars().count() >= 2
                    && (kc.contains(e.core.as_str()) || e.core.contains(kc.as_str()))
            })
            .map(|e| {
                let n = e.core.chars().count() as f64;
                (e.canon.as_str(), n.min(qn) / n.max(qn))
            })
            .collect();
        contained.sort_by(|a, b| b.1.total_cmp(&a.1));
        if let Some(&(c, ratio)) = contained.first() {
            let runner_up = contained.get(1).map_or(0.0, |x| x.1);
            if ratio >= 0.3 && ratio - runner_up >= margin {
                return Match::Snapped(c.to_string(), ratio);
            }
        }
        let mut best: Option<(&str, f64)> = None;
        let mut second = 0.0f64;
        for e in &self.all {
            // cheap length filter: Jaro-Winkler cannot reach the threshold with very different lengths
            let (a, b) = (e.norm.chars().count() as f64, k.chars().count() as f64);
            if a.min(b) / a.max(b) < 0.5 {
                continue;
            }
            let s = strsim::jaro_winkler(&e.norm, &k);
            match best {
                Some((_, bs)) if s <= bs => second = second.max(s),
                _ => {
                    if let Some((_, bs)) = best {
                        second = second.max(bs);
                    }
                    best = Some((&e.canon, s));
                }
            }
        }
        match best {
            Some((c, s)) if s >= threshold && s - second >= margin => {
                Match::Snapped(c.to_string(), s)
            }
            Some((c, s)) if s >= 0.5 => Match::Unknown {
                best: Some((c.to_string(), s)),
            },
            _ => Match::Unknown { best: None },
        }
    }
}

impl Match {
    /// The inventory name a resolved match stands for, and how it was found (for the report).
    pub fn resolved(&self) -> Option<(&str, String)> {
        match self {
            Match::Snapped(c, sim) => Some((
                c,
                format!("snapped to inventory name {c:?} (similarity {sim:.2})"),
            )),
            Match::Aliased { name, kind } => {
                let what = match kind {
                    AliasKind::Official => "the official name of",
                    AliasKind::Common => "another name of",
                    AliasKind::PartOf => "a place inside",
                };
                Some((
                    name,
                    format!("{what} inventory attraction {name:?} (alias table)"),
                ))
            }
            Match::Exact | Match::Unknown { .. } => None,
        }
    }
}

/// Per-city index of attraction names.
pub struct NameIndex {
    cities: Vec<CityNames>,
    threshold: f64,
    margin: f64,
}

impl NameIndex {
    pub fn new(res: &Resources, threshold: f64, margin: f64) -> Self {
        NameIndex {
            cities: (0..res.cities.len() as CityId)
                .map(|c| CityNames::of_city(res, c))
                .collect(),
            threshold,
            margin,
        }
    }

    /// An index over plain name lists (no aliases, no place-name prefixes).
    pub fn from_names(per_city: Vec<Vec<String>>, threshold: f64, margin: f64) -> Self {
        NameIndex {
            cities: per_city
                .into_iter()
                .map(|names| CityNames::new(names, &[], Vec::new()))
                .collect(),
            threshold,
            margin,
        }
    }

    /// Match a name in a city.
    pub fn lookup(&self, city: usize, name: &str) -> Match {
        self.cities[city].lookup(name, self.threshold, self.margin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_strips_suffixes_and_width() {
        assert_eq!(normalize("湖南省博物馆(东馆)"), "湖南省博物馆");
        assert_eq!(normalize("湖南省博物馆（暂停营业）"), "湖南省博物馆");
        assert_eq!(normalize("ＡＢＣ乐园"), "abc乐园");
        assert_eq!(normalize("天涯·海角"), "天涯海角");
    }

    #[test]
    fn exact_snap_fuzzy_and_ambiguity() {
        let idx = NameIndex::from_names(
            vec![vec![
                "橘子洲".into(),
                "岳麓山".into(),
                "湖南省博物馆".into(),
                "长沙世界之窗".into(),
                "长沙海底世界".into(),
            ]],
            0.88,
            0.03,
        );
        assert_eq!(idx.lookup(0, "岳麓山"), Match::Exact);
        assert_eq!(
            idx.lookup(0, "湖南省博物馆(东馆)"),
            Match::Snapped("湖南省博物馆".into(), 1.0)
        );
        assert!(
            matches!(idx.lookup(0, "湖南博物馆"), Match::Snapped(ref c, _) if c == "湖南省博物馆")
        );
        assert!(matches!(idx.lookup(0, "故宫博物院"), Match::Unknown { .. }));
        // containment: a longer official name holds the inventory's short one
        assert!(
            matches!(idx.lookup(0, "长沙橘子洲景区"), Match::Snapped(ref c, _) if c == "橘子洲")
        );
        // two candidates held equally: ambiguous, not snapped
        let idx2 = NameIndex::from_names(vec![vec!["东湖".into(), "西湖".into()]], 0.88, 0.03);
        assert!(matches!(idx2.lookup(0, "湖"), Match::Unknown { .. }));
    }

    #[test]
    fn issue12_official_long_names_aliases_and_parts_resolve() {
        let pre = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let prefixes = pre(&["贵州省", "安顺市", "贵州", "安顺"]);
        assert_eq!(
            core_name("贵州省安顺市黄果树风景名胜区", &prefixes),
            "黄果树"
        );
        // a place name goes only in official long forms, and never down to a bare noun
        assert_eq!(core_name("安顺市博物馆", &prefixes), "安顺市博物馆");
        assert_eq!(core_name("安顺古城历史文化街区", &prefixes), "安顺古城");
        let names = CityNames::new(
            vec![
                "黄果树瀑布".into(),
                "安顺古城".into(),
                "贵州省博物馆".into(),
                "龙宫".into(),
            ],
            &[Alias {
                alias: "黄果树风景名胜区".into(),
                name: "黄果树瀑布".into(),
                kind: AliasKind::Official,
            }],
            prefixes,
        );
        let look = |n: &str| names.lookup(n, 0.88, 0.03);
        assert_eq!(
            look("黄果树风景名胜区"),
            Match::Aliased {
                name: "黄果树瀑布".into(),
                kind: AliasKind::Official
            }
        );
        assert_eq!(
            look("安顺古城历史文化街区"),
            Match::Snapped("安顺古城".into(), 1.0)
        );
        // two characters stay after the city name: 安顺市龙宫 holds 龙宫 (containment)
        assert!(matches!(look("安顺市龙宫景区"), Match::Snapped(ref c, _) if c == "龙宫"));
        // 安顺市博物馆 is another museum than 贵州省博物馆
        assert!(matches!(look("安顺市博物馆"), Match::Unknown { .. }));
        let (canon, why) = look("黄果树风景名胜区")
            .resolved()
            .map(|(c, w)| (c.to_string(), w))
            .unwrap();
        assert_eq!(canon, "黄果树瀑布");
        assert!(why.contains("official name"), "{why}");
    }
}
