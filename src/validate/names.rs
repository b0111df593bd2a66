//! POI name matching: exact after normalisation, then fuzzy with a threshold and an ambiguity
//! margin, against a per-city index of the inventory.

use crate::resources::Resources;
use std::collections::HashMap;
use unicode_normalization::UnicodeNormalization;

/// NFKC (full/half width), lower case, without whitespace, `·` and trailing bracketed branch
/// or status suffixes such as (东馆), （本馆）, (暂停营业).
pub fn normalize(s: &str) -> String {
    let mut t: String = s.nfkc().collect::<String>().to_lowercase();
    loop {
        let trimmed = t.trim_end();
        if trimmed.ends_with(')')
            && let Some(open) = trimmed.rfind('(')
            && open > 0
        {
            t = trimmed[..open].to_string();
            continue;
        }
        break;
    }
    t.chars()
        .filter(|c| !c.is_whitespace() && *c != '·' && *c != '•' && *c != '-')
        .collect()
}

/// Outcome of matching one name.
#[derive(Debug, Clone, PartialEq)]
pub enum Match {
    Exact,
    /// snapped to the canonical name, with its similarity
    Snapped(String, f64),
    /// no candidate close enough, or two too close to call
    Unknown {
        best: Option<(String, f64)>,
    },
}

/// Per-city index of attraction names.
pub struct NameIndex {
    /// per city: normalized -> canonical
    exact: Vec<HashMap<String, String>>,
    /// per city: (normalized, canonical, chars)
    all: Vec<Vec<(String, String)>>,
    threshold: f64,
    margin: f64,
}

impl NameIndex {
    pub fn new(res: &Resources, threshold: f64, margin: f64) -> Self {
        Self::from_names(
            res.attractions
                .iter()
                .map(|l| l.iter().map(|a| a.name.clone()).collect())
                .collect(),
            threshold,
            margin,
        )
    }

    pub fn from_names(per_city: Vec<Vec<String>>, threshold: f64, margin: f64) -> Self {
        let mut exact = Vec::new();
        let mut all = Vec::new();
        for names in per_city {
            let mut m = HashMap::with_capacity(names.len());
            let mut v = Vec::with_capacity(names.len());
            for n in names {
                let k = normalize(&n);
                m.entry(k.clone()).or_insert_with(|| n.clone());
                v.push((k, n));
            }
            exact.push(m);
            all.push(v);
        }
        NameIndex {
            exact,
            all,
            threshold,
            margin,
        }
    }

    /// Match a name in a city.
    pub fn lookup(&self, city: usize, name: &str) -> Match {
        if self.exact[city].get(name).is_some_and(|c| c == name)
            || self.all[city].iter().any(|(_, c)| c == name)
        {
            return Match::Exact;
        }
        let k = normalize(name);
        if let Some(c) = self.exact[city].get(&k) {
            return Match::Snapped(c.clone(), 1.0);
        }
        // containment, as the release's resolver matches: the longer name holds the shorter
        // (海口骑楼老街历史文化街区 ~ 骑楼老街); the closest length wins, ties are ambiguous
        let qn = k.chars().count() as f64;
        let mut contained: Vec<(&str, f64)> = self.all[city]
            .iter()
            .filter(|(nk, _)| {
                nk.chars().count() >= 2 && (k.contains(nk.as_str()) || nk.contains(k.as_str()))
            })
            .map(|(nk, c)| {
                let n = nk.chars().count() as f64;
                (c.as_str(), n.min(qn) / n.max(qn))
            })
            .collect();
        contained.sort_by(|a, b| b.1.total_cmp(&a.1));
        if let Some(&(c, ratio)) = contained.first() {
            let runner_up = contained.get(1).map_or(0.0, |x| x.1);
            if ratio >= 0.3 && ratio - runner_up >= self.margin {
                return Match::Snapped(c.to_string(), ratio);
            }
        }
        let mut best: Option<(&str, f64)> = None;
        let mut second = 0.0f64;
        for (nk, canon) in &self.all[city] {
            // cheap length filter: Jaro-Winkler cannot reach the threshold with very different lengths
            let (a, b) = (nk.chars().count() as f64, k.chars().count() as f64);
            if a.min(b) / a.max(b) < 0.5 {
                continue;
            }
            let s = strsim::jaro_winkler(nk, &k);
            match best {
                Some((_, bs)) if s <= bs => second = second.max(s),
                _ => {
                    if let Some((_, bs)) = best {
                        second = second.max(bs);
                    }
                    best = Some((canon, s));
                }
            }
        }
        match best {
            Some((c, s)) if s >= self.threshold && s - second >= self.margin => {
                Match::Snapped(c.to_string(), s)
            }
            Some((c, s)) if s >= 0.5 => Match::Unknown {
                best: Some((c.to_string(), s)),
            },
            Some(_) => Match::Unknown { best: None },
            None => Match::Unknown { best: None },
        }
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
}
