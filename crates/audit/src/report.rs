//! The audit report: one pass over the tasks fills a mergeable [`Tally`] (so that lines can be
//! parsed and counted in parallel), which is turned once into the [`Report`] the renderers read.
//! Every group-by is a `BTreeMap` (sorted, deterministic) or a `HashMap` that is sorted on output.

use super::stats;
use gtb_core::FastMap as HashMap;
use gtb_core::prefs::{LIST_FIELDS, ListField};
use gtb_core::task::Task;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hash;

/// Difficulty classes in display order; any other value found in a file is appended.
pub const CLASSES: [&str; 3] = ["easy", "medium", "hard"];

/// The preference list fields of paper Table 9 (their labels), summed over users and cities.
pub const FIELDS: [&str; 14] = {
    let mut out = [""; 14];
    let mut i = 0;
    while i < out.len() {
        out[i] = LIST_FIELDS[i].label;
        i += 1;
    }
    out
};

/// The three must-vs-reject conflict kinds (paper A.6).
pub const CONFLICT_KINDS: [&str; 3] = ["attractions", "food", "transport"];

/// How many items the "top" lists keep.
pub const TOP: usize = 20;
/// How many malformed lines a report or an error lists (all are counted).
pub const BAD_LINES_LISTED: usize = 20;

pub fn size_label(n: usize) -> String {
    format!("N={n}")
}

pub fn cities_label(c: usize) -> String {
    if c == 1 {
        "1 city".to_string()
    } else {
        format!("{c} cities")
    }
}

/// Days band of Table 8: 2-3, 4-5, 6-7 (keyed by the band's first day so that it sorts).
fn days_band(days: Option<u32>) -> u32 {
    match days {
        Some(d @ 2..=7) => d - (d % 2),
        Some(d) => d,
        None => u32::MAX,
    }
}

pub fn days_band_label(band: u32) -> String {
    match band {
        u32::MAX => "unknown days".to_string(),
        2 | 4 | 6 => format!("{}-{} days", band, band + 1),
        d => format!("{d} days"),
    }
}

/// A line of the input that is not a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BadLine {
    pub line: usize,
    pub message: String,
}

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
    I: Iterator<Item = &'a gtb_core::task::UserEntry> + Clone,
    F: Fn(&'a gtb_core::task::UserEntry) -> Option<(&'a [String], &'a [String])>,
{
    let mut out = BTreeSet::new();
    for (i, u) in members.clone().enumerate() {
        let Some((must, _)) = lists(u) else { continue };
        if must.is_empty() {
            continue;
        }
        for (j, v) in members.clone().enumerate() {
            if i == j {
                continue;
            }
            let Some((_, reject)) = lists(v) else {
                continue;
            };
            for m in must {
                if reject.contains(m) {
                    out.insert(m.as_str());
                }
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

/// A labelled count; `city` qualifies POIs and city-level clashes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counted {
    pub item: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    pub count: u64,
}

impl Counted {
    pub fn new(item: &str, count: u64) -> Self {
        Counted {
            item: item.to_string(),
            city: None,
            count,
        }
    }
    /// "item" or "item (city)".
    pub fn label(&self) -> String {
        match &self.city {
            Some(c) => format!("{} ({c})", self.item),
            None => self.item.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossRow {
    pub label: String,
    /// one count per class of the table
    pub counts: Vec<u64>,
    pub total: u64,
}

/// Rows × difficulty classes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossTab {
    pub title: String,
    pub classes: Vec<String>,
    pub rows: Vec<CrossRow>,
}

impl CrossTab {
    pub fn class_totals(&self) -> Vec<u64> {
        (0..self.classes.len())
            .map(|i| self.rows.iter().map(|r| r.counts[i]).sum())
            .collect()
    }
    /// Flattened "row · class" cells, in row order, for comparisons.
    pub fn cells(&self) -> Vec<(String, u64)> {
        self.rows
            .iter()
            .flat_map(|r| {
                self.classes
                    .iter()
                    .zip(&r.counts)
                    .map(move |(c, &n)| (format!("{} · {c}", r.label), n))
            })
            .collect()
    }
}

/// Paper Table 8: difficulty class by group size, city count and days band.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table8 {
    pub by_size: CrossTab,
    /// the paper's grouping: Table 8 prints the three-generation family (6-3, six members, one
    /// a skipped child) under N=5, with the five-member groups
    pub by_paper_size: CrossTab,
    pub by_cities: CrossTab,
    pub by_days: CrossTab,
}

impl Table8 {
    pub fn tabs(&self) -> [(&'static str, &CrossTab); 4] {
        [
            ("table8_size", &self.by_size),
            ("table8_size_paper", &self.by_paper_size),
            ("table8_cities", &self.by_cities),
            ("table8_days", &self.by_days),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchetypeCount {
    pub group_id: String,
    pub group_name: String,
    pub tasks: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldCount {
    pub field: String,
    pub count: u64,
    pub per_user: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserStats {
    /// members with a preference table
    pub users: u64,
    pub users_per_task: Option<f64>,
    /// members including skipped children (the N of the query)
    pub members_per_task: Option<f64>,
    /// every list item plus 3 scalars per user
    pub atomic_points: u64,
    pub points_per_user: Option<f64>,
    pub points_min: Option<u64>,
    pub points_max: Option<u64>,
    pub compromisable: u64,
    pub compromisable_share: Option<f64>,
}

/// `avg_budget` over users.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetStats {
    pub users: u64,
    pub min: u32,
    pub max: u32,
    pub mean: f64,
    pub median: f64,
}

/// Tasks with at least one must-vs-reject clash between two different members.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConflictStat {
    pub kind: String,
    pub tasks: u64,
    pub share: Option<f64>,
    /// clashing items, by the number of tasks they clash in
    pub top: Vec<Counted>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diversity {
    pub destination_cities: u64,
    pub departure_cities: u64,
    /// sum over tasks of the number of destination cities
    pub destination_visits: u64,
    /// Gini coefficient of the tasks-per-destination counts (observed cities)
    pub destination_gini: Option<f64>,
    /// Shannon entropy of the destination frequencies / ln(distinct cities)
    pub destination_entropy: Option<f64>,
    /// tasks per destination city, most frequent first (all cities)
    pub destinations: Vec<Counted>,
    /// tasks per departure city, most frequent first
    pub departures: Vec<Counted>,
    pub must_visit_mentions: u64,
    pub must_visit_distinct: u64,
    pub top_must_visit: Vec<Counted>,
    /// share of all must_visit mentions taken by the 10 most frequent POIs
    pub top10_must_visit_share: Option<f64>,
}

/// Everything `gtb audit` measures on one task file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub source: String,
    /// sha256 of the file, when known (a build's published audit records the file it describes)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    pub tasks: u64,
    /// malformed lines skipped with --skip-bad (the first few are listed in `skipped`)
    pub skipped_lines: u64,
    pub skipped: Vec<BadLine>,
    pub difficulty: Vec<Counted>,
    pub table8: Table8,
    pub archetypes: Vec<ArchetypeCount>,
    pub fields: Vec<FieldCount>,
    pub users: UserStats,
    pub budget: Option<BudgetStats>,
    pub conflicts: Vec<ConflictStat>,
    pub diversity: Diversity,
}

impl Report {
    /// Build a report from tasks in memory (the file loader does the same in parallel).
    pub fn from_tasks<'a>(source: &str, tasks: impl IntoIterator<Item = &'a Task>) -> Report {
        let mut t = Tally::default();
        for task in tasks {
            t.add(task);
        }
        t.report(source)
    }

    pub fn field(&self, name: &str) -> Option<u64> {
        self.fields
            .iter()
            .find(|f| f.field == name)
            .map(|f| f.count)
    }

    pub fn conflict(&self, kind: &str) -> Option<&ConflictStat> {
        self.conflicts.iter().find(|c| c.kind == kind)
    }
}

/// `x` of `of` as a share, none of nothing.
fn share(x: u64, of: u64) -> Option<f64> {
    (of > 0).then(|| x as f64 / of as f64)
}

/// The group-size row of Table 8 for a task of `group_id` with `n` members: the paper prints
/// group 6-3 (three generations, six members, one a skipped child) under N=5. (A fact of the
/// paper, not of gtb's archetype file, whose `table8_size` tells the sampler the same.)
pub fn table8_size(group_id: &str, n: usize) -> usize {
    if group_id == "6-3" { 5 } else { n }
}
