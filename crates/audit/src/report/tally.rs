//! The mergeable [`Tally`] of one pass over tasks (`add` one task, `merge` two tallies) and
//! its finishing into the [`Report`] (cross tabs, top lists, budget figures, shares).

use super::{
    ArchetypeCount, BAD_LINES_LISTED, BadLine, BudgetStats, CLASSES, CONFLICT_KINDS, ConflictStat,
    Counted, CrossRow, CrossTab, Diversity, FIELDS, FieldCount, Report, TOP, Table8, UserStats,
    cities_label, days_band, days_band_label, size_label, table8_size,
};
use crate::stats;
use gtb_core::FastMap as HashMap;
use gtb_core::prefs::ListField;
use gtb_core::task::Task;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hash;

/// Counts of one pass over tasks. `add` one task, `merge` two tallies; `report` finishes.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    tasks: u64,
    classes: BTreeMap<String, u64>,
    by_size: BTreeMap<(usize, String), u64>,
    by_paper_size: BTreeMap<(usize, String), u64>,
    by_cities: BTreeMap<(usize, String), u64>,
    by_days: BTreeMap<(u32, String), u64>,
    archetypes: BTreeMap<(String, String), u64>,
    fields: [u64; FIELDS.len()],
    users: u64,
    members: u64,
    points: u64,
    points_range: Option<(u64, u64)>,
    compromisable: u64,
    budgets: BTreeMap<u32, u64>,
    conflict_tasks: [u64; 3],
    /// per kind: (city or "", item) → tasks where that item clashes
    clashes: [HashMap<(String, String), u64>; 3],
    destinations: HashMap<String, u64>,
    departures: HashMap<String, u64>,
    /// city → POI → mentions in must_visit lists
    must_visit: HashMap<String, HashMap<String, u64>>,
    bad: Vec<BadLine>,
    bad_count: u64,
}

fn bump<K: Eq + Hash + Clone>(m: &mut HashMap<K, u64>, k: &K, by: u64) {
    match m.get_mut(k) {
        Some(c) => *c += by,
        None => {
            m.insert(k.clone(), by);
        }
    }
}

fn bump_str(m: &mut HashMap<String, u64>, k: &str) {
    match m.get_mut(k) {
        Some(c) => *c += 1,
        None => {
            m.insert(k.to_string(), 1);
        }
    }
}

fn merge_hash<K: Eq + Hash>(a: &mut HashMap<K, u64>, b: HashMap<K, u64>) {
    for (k, v) in b {
        *a.entry(k).or_insert(0) += v;
    }
}

fn merge_btree<K: Ord>(a: &mut BTreeMap<K, u64>, b: BTreeMap<K, u64>) {
    for (k, v) in b {
        *a.entry(k).or_insert(0) += v;
    }
}

/// Items that one member must have and another member (not the same one) rejects.
fn clashing<'a, I, F>(members: I, lists: F) -> BTreeSet<&'a str>
where
    I: Iterator<Item = &'a gtb_core::task::UserEntry>,
    F: Fn(&'a gtb_core::task::UserEntry) -> Option<(&'a [String], &'a [String])>,
{
    // each member's lists looked up once, not once per pair
    let lists: Vec<Option<(&[String], &[String])>> = members.map(lists).collect();
    let mut out = BTreeSet::new();
    for (i, own) in lists.iter().enumerate() {
        let Some((must, _)) = own else { continue };
        for (j, other) in lists.iter().enumerate() {
            let Some((_, reject)) = other.filter(|_| i != j) else {
                continue;
            };
            for m in must.iter().filter(|m| reject.contains(m)) {
                out.insert(m.as_str());
            }
        }
    }
    out
}

impl Tally {
    pub fn add(&mut self, t: &Task) {
        let md = &t.metadata;
        self.tasks += 1;
        let class = t.difficulty_type.clone();
        *self.classes.entry(class.clone()).or_insert(0) += 1;
        let n = t.group_size();
        *self.by_size.entry((n, class.clone())).or_insert(0) += 1;
        *self
            .by_paper_size
            .entry((table8_size(&md.group_id, n), class.clone()))
            .or_insert(0) += 1;
        *self
            .by_cities
            .entry((md.cities.len(), class.clone()))
            .or_insert(0) += 1;
        *self
            .by_days
            .entry((days_band(t.days()), class))
            .or_insert(0) += 1;
        *self
            .archetypes
            .entry((md.group_id.clone(), md.group_name.clone()))
            .or_insert(0) += 1;
        self.members += n as u64;
        self.users += t.user_preferences.len() as u64;
        for city in &md.cities {
            bump_str(&mut self.destinations, city);
        }
        bump_str(&mut self.departures, &md.departure_city);

        for u in t.user_preferences.values() {
            let p = &u.preference;
            for item in p.list_items() {
                self.fields[item.field as usize] += 1;
                if let (ListField::MustVisit, Some(city)) = (item.field, item.city) {
                    let per_city = match self.must_visit.get_mut(city) {
                        Some(m) => m,
                        None => self.must_visit.entry(city.to_string()).or_default(),
                    };
                    bump_str(per_city, item.value);
                }
            }
            let pts = p.atomic_points() as u64;
            self.points += pts;
            self.points_range = Some(match self.points_range {
                None => (pts, pts),
                Some((lo, hi)) => (lo.min(pts), hi.max(pts)),
            });
            self.compromisable += u.compromisable as u64;
            *self
                .budgets
                .entry(p.global_constraints.avg_budget)
                .or_insert(0) += 1;
        }

        // conflicts: per city for attractions and food, global for transport
        let members = t.user_preferences.values();
        let mut cities: Vec<&String> = md.cities.iter().collect();
        for u in t.user_preferences.values() {
            for c in u.preference.city_specific_preferences.keys() {
                if !cities.contains(&c) {
                    cities.push(c);
                }
            }
        }
        let mut found = [false; 3];
        for city in cities {
            let a = clashing(members.clone(), |u| {
                u.preference.city_specific_preferences.get(city).map(|c| {
                    (
                        &c.attractions.must_visit[..],
                        &c.attractions.reject_visit[..],
                    )
                })
            });
            let f = clashing(members.clone(), |u| {
                u.preference
                    .city_specific_preferences
                    .get(city)
                    .map(|c| (&c.food.must_eat[..], &c.food.reject_eat[..]))
            });
            for (k, items) in [(0, a), (1, f)] {
                found[k] |= !items.is_empty();
                for item in items {
                    bump(&mut self.clashes[k], &(city.clone(), item.to_string()), 1);
                }
            }
        }
        let tr = clashing(members, |u| {
            let t = &u.preference.global_constraints.transport;
            Some((&t.must[..], &t.reject[..]))
        });
        found[2] = !tr.is_empty();
        for item in tr {
            bump(&mut self.clashes[2], &(String::new(), item.to_string()), 1);
        }
        for (k, f) in found.iter().enumerate() {
            self.conflict_tasks[k] += *f as u64;
        }
    }

    pub fn add_bad(&mut self, bad: BadLine) {
        self.bad_count += 1;
        self.bad.push(bad);
    }

    /// Malformed lines seen so far, in line order.
    pub fn bad_lines(&mut self) -> &[BadLine] {
        self.bad.sort_by_key(|b| b.line);
        &self.bad
    }

    pub fn merge(mut self, o: Tally) -> Tally {
        self.tasks += o.tasks;
        merge_btree(&mut self.classes, o.classes);
        merge_btree(&mut self.by_size, o.by_size);
        merge_btree(&mut self.by_paper_size, o.by_paper_size);
        merge_btree(&mut self.by_cities, o.by_cities);
        merge_btree(&mut self.by_days, o.by_days);
        merge_btree(&mut self.archetypes, o.archetypes);
        for (a, b) in self.fields.iter_mut().zip(o.fields) {
            *a += b;
        }
        self.users += o.users;
        self.members += o.members;
        self.points += o.points;
        self.points_range = match (self.points_range, o.points_range) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, None) | (None, x) => x,
        };
        self.compromisable += o.compromisable;
        merge_btree(&mut self.budgets, o.budgets);
        for k in 0..3 {
            self.conflict_tasks[k] += o.conflict_tasks[k];
        }
        for (a, b) in self.clashes.iter_mut().zip(o.clashes) {
            merge_hash(a, b);
        }
        merge_hash(&mut self.destinations, o.destinations);
        merge_hash(&mut self.departures, o.departures);
        for (city, m) in o.must_visit {
            merge_hash(self.must_visit.entry(city).or_default(), m);
        }
        self.bad.extend(o.bad);
        self.bad_count += o.bad_count;
        self
    }

    /// The finished report. `source` names the file.
    pub fn report(mut self, source: &str) -> Report {
        self.bad.sort_by_key(|b| b.line);
        self.bad.truncate(BAD_LINES_LISTED);
        let mut classes: Vec<String> = CLASSES.iter().map(|s| s.to_string()).collect();
        classes.extend(
            self.classes
                .keys()
                .filter(|c| !CLASSES.contains(&c.as_str()))
                .cloned(),
        );
        let difficulty = classes
            .iter()
            .map(|c| Counted::new(c, self.classes.get(c).copied().unwrap_or(0)))
            .collect();
        let archetypes = self
            .archetypes
            .iter()
            .map(|((id, name), &n)| ArchetypeCount {
                group_id: id.clone(),
                group_name: name.clone(),
                tasks: n,
            })
            .collect();
        Report {
            source: source.to_string(),
            sha256: None,
            tasks: self.tasks,
            skipped_lines: self.bad_count,
            skipped: std::mem::take(&mut self.bad),
            difficulty,
            table8: self.table8(&classes),
            archetypes,
            fields: self.field_counts(),
            users: self.user_stats(),
            budget: budget_stats(&self.budgets),
            conflicts: self.conflict_stats(),
            diversity: self.diversity(),
        }
    }

    fn table8(&self, classes: &[String]) -> Table8 {
        Table8 {
            by_size: cross_tab(
                "group size N (members incl. skipped children)",
                classes,
                &self.by_size,
                |n| size_label(*n),
            ),
            by_paper_size: cross_tab(
                "group size as the paper's Table 8 prints it (6-3 under N=5)",
                classes,
                &self.by_paper_size,
                |n| size_label(*n),
            ),
            by_cities: cross_tab("cities", classes, &self.by_cities, |c| cities_label(*c)),
            by_days: cross_tab("days", classes, &self.by_days, |d| days_band_label(*d)),
        }
    }

    fn field_counts(&self) -> Vec<FieldCount> {
        FIELDS
            .iter()
            .zip(self.fields)
            .map(|(f, n)| FieldCount {
                field: f.to_string(),
                count: n,
                per_user: share(n, self.users),
            })
            .collect()
    }

    fn user_stats(&self) -> UserStats {
        UserStats {
            users: self.users,
            users_per_task: share(self.users, self.tasks),
            members_per_task: share(self.members, self.tasks),
            atomic_points: self.points,
            points_per_user: share(self.points, self.users),
            points_min: self.points_range.map(|r| r.0),
            points_max: self.points_range.map(|r| r.1),
            compromisable: self.compromisable,
            compromisable_share: share(self.compromisable, self.users),
        }
    }

    fn conflict_stats(&self) -> Vec<ConflictStat> {
        CONFLICT_KINDS
            .iter()
            .enumerate()
            .map(|(k, kind)| ConflictStat {
                kind: kind.to_string(),
                tasks: self.conflict_tasks[k],
                share: share(self.conflict_tasks[k], self.tasks),
                top: top(&self.clashes[k], TOP)
                    .into_iter()
                    .map(|((city, item), n)| Counted {
                        item,
                        city: (!city.is_empty()).then_some(city),
                        count: n,
                    })
                    .collect(),
            })
            .collect()
    }

    /// Destinations, departures and the must-visit POIs (the tally's must-visit counts are
    /// taken).
    fn diversity(&mut self) -> Diversity {
        let dest_counts: Vec<u64> = self.destinations.values().copied().collect();
        let must_visit: HashMap<(String, String), u64> = std::mem::take(&mut self.must_visit)
            .into_iter()
            .flat_map(|(city, m)| m.into_iter().map(move |(poi, n)| ((city.clone(), poi), n)))
            .collect();
        let must_total: u64 = must_visit.values().sum();
        let top_pois: Vec<Counted> = top(&must_visit, TOP)
            .into_iter()
            .map(|((city, poi), n)| Counted {
                item: poi,
                city: Some(city),
                count: n,
            })
            .collect();
        let top10: u64 = top_pois.iter().take(10).map(|c| c.count).sum();
        let counted = |m: &HashMap<String, u64>| -> Vec<Counted> {
            top(m, usize::MAX)
                .into_iter()
                .map(|(c, n)| Counted::new(&c, n))
                .collect()
        };
        Diversity {
            destination_cities: self.destinations.len() as u64,
            departure_cities: self.departures.len() as u64,
            destination_visits: dest_counts.iter().sum(),
            destination_gini: stats::gini(&dest_counts),
            destination_entropy: stats::normalized_entropy(&dest_counts),
            destinations: counted(&self.destinations),
            departures: counted(&self.departures),
            must_visit_mentions: must_total,
            must_visit_distinct: must_visit.len() as u64,
            top_must_visit: top_pois,
            top10_must_visit_share: share(top10, must_total),
        }
    }
}

fn cross_tab<K: Clone + Ord>(
    title: &str,
    classes: &[String],
    m: &BTreeMap<(K, String), u64>,
    label: impl Fn(&K) -> String,
) -> CrossTab {
    let keys: BTreeSet<&K> = m.keys().map(|(k, _)| k).collect();
    let rows = keys
        .into_iter()
        .map(|k| {
            let counts: Vec<u64> = classes
                .iter()
                .map(|c| m.get(&(k.clone(), c.clone())).copied().unwrap_or(0))
                .collect();
            CrossRow {
                label: label(k),
                total: counts.iter().sum(),
                counts,
            }
        })
        .collect();
    CrossTab {
        title: title.to_string(),
        classes: classes.to_vec(),
        rows,
    }
}

/// The `n` most frequent keys, count descending then key ascending.
fn top<K: Ord + Clone>(m: &HashMap<K, u64>, n: usize) -> Vec<(K, u64)> {
    let mut v: Vec<(&K, u64)> = m.iter().map(|(k, &c)| (k, c)).collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    v.into_iter().take(n).map(|(k, c)| (k.clone(), c)).collect()
}

fn budget_stats(h: &BTreeMap<u32, u64>) -> Option<BudgetStats> {
    let n: u64 = h.values().sum();
    if n == 0 {
        return None;
    }
    let sum: f64 = h.iter().map(|(&b, &c)| b as f64 * c as f64).sum();
    // the k-th smallest value (0-based)
    let kth = |k: u64| {
        let mut seen = 0;
        for (&b, &c) in h {
            seen += c;
            if seen > k {
                return b as f64;
            }
        }
        unreachable!("k < n")
    };
    let median = if n % 2 == 1 {
        kth(n / 2)
    } else {
        (kth(n / 2 - 1) + kth(n / 2)) / 2.0
    };
    Some(BudgetStats {
        users: n,
        min: *h.keys().next().unwrap(),
        max: *h.keys().next_back().unwrap(),
        mean: sum / n as f64,
        median,
    })
}
/// `x` of `of` as a share, none of nothing.
fn share(x: u64, of: u64) -> Option<f64> {
    (of > 0).then(|| x as f64 / of as f64)
}
