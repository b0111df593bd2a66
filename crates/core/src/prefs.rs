//! The fields of a member's preference table, declared once. Every walk over a table (opening
//! lines, the audit's counts, atomic points, compromise paths, the checks of what a line voices)
//! reads this table instead of naming the fields by hand.
//!
//! A field has a tier (task_format.md §6: must / prefer / avoid / reject), which gives both its
//! polarity (for or against) and its strength (firm or mild), and a subject (what its values
//! are: a transport mode, a hotel category, a sight, an attraction category, a food).

use crate::task::{CityPref, GlobalConstraints, Preference};

/// The four tiers of the release's lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    Must,
    Prefer,
    Avoid,
    Reject,
}

impl Tier {
    /// Must and prefer are for the value, avoid and reject against it.
    pub fn positive(self) -> bool {
        matches!(self, Tier::Must | Tier::Prefer)
    }
    /// Must and reject are firm (worded 一定要 / 绝对不), prefer and avoid mild (最好 / 尽量别).
    pub fn strong(self) -> bool {
        matches!(self, Tier::Must | Tier::Reject)
    }
}

/// What a field's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    Mode,
    Hotel,
    Sight,
    Category,
    Food,
}

/// A list field of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ListField {
    TransportMust,
    TransportPrefer,
    TransportAvoid,
    TransportReject,
    HotelPrefer,
    HotelAvoid,
    MustVisit,
    RejectVisit,
    CategoryPositive,
    CategoryNegative,
    MustEat,
    PreferEat,
    AvoidEat,
    RejectEat,
}

/// One list field: where it is, what it holds, and how the paper's Table 9 names it.
#[derive(Debug)]
pub struct FieldSpec {
    pub field: ListField,
    /// the dotted path below `global_constraints` or below a city of
    /// `city_specific_preferences` (compromise markers use these paths)
    pub path: &'static str,
    /// the row label of paper Table 9 (`gtb audit`)
    pub label: &'static str,
    pub subject: Subject,
    pub tier: Tier,
    /// a field of each city, not of the whole trip
    pub per_city: bool,
}

const fn spec(
    field: ListField,
    path: &'static str,
    label: &'static str,
    subject: Subject,
    tier: Tier,
    per_city: bool,
) -> FieldSpec {
    FieldSpec {
        field,
        path,
        label,
        subject,
        tier,
        per_city,
    }
}

/// Every list field, in the order the release writes them (globals, then per city).
pub const LIST_FIELDS: [FieldSpec; 14] = {
    use ListField::*;
    use Subject::*;
    use Tier::*;
    [
        spec(
            TransportMust,
            "transport.must",
            "transport.must",
            Mode,
            Must,
            false,
        ),
        spec(
            TransportPrefer,
            "transport.prefer",
            "transport.prefer",
            Mode,
            Prefer,
            false,
        ),
        spec(
            TransportAvoid,
            "transport.avoid",
            "transport.avoid",
            Mode,
            Avoid,
            false,
        ),
        spec(
            TransportReject,
            "transport.reject",
            "transport.reject",
            Mode,
            Reject,
            false,
        ),
        spec(
            HotelPrefer,
            "hotel_preference.prefer",
            "hotel.prefer",
            Hotel,
            Prefer,
            false,
        ),
        spec(
            HotelAvoid,
            "hotel_preference.avoid",
            "hotel.avoid",
            Hotel,
            Avoid,
            false,
        ),
        spec(
            MustVisit,
            "attractions.must_visit",
            "must_visit",
            Sight,
            Must,
            true,
        ),
        spec(
            RejectVisit,
            "attractions.reject_visit",
            "reject_visit",
            Sight,
            Reject,
            true,
        ),
        spec(
            CategoryPositive,
            "attractions.category_pref.positive",
            "category.positive",
            Category,
            Prefer,
            true,
        ),
        spec(
            CategoryNegative,
            "attractions.category_pref.negative",
            "category.negative",
            Category,
            Avoid,
            true,
        ),
        spec(MustEat, "food.must_eat", "must_eat", Food, Must, true),
        spec(
            PreferEat,
            "food.prefer_eat",
            "prefer_eat",
            Food,
            Prefer,
            true,
        ),
        spec(AvoidEat, "food.avoid_eat", "avoid_eat", Food, Avoid, true),
        spec(
            RejectEat,
            "food.reject_eat",
            "reject_eat",
            Food,
            Reject,
            true,
        ),
    ]
};

impl ListField {
    pub fn spec(self) -> &'static FieldSpec {
        &LIST_FIELDS[self as usize]
    }
    /// The field's list in a member's globals (`city` is None) or in one city's preferences.
    pub fn get<'a>(self, g: &'a GlobalConstraints, city: Option<&'a CityPref>) -> &'a [String] {
        use ListField::*;
        match (self, city) {
            (TransportMust, _) => &g.transport.must,
            (TransportPrefer, _) => &g.transport.prefer,
            (TransportAvoid, _) => &g.transport.avoid,
            (TransportReject, _) => &g.transport.reject,
            (HotelPrefer, _) => &g.hotel_preference.prefer,
            (HotelAvoid, _) => &g.hotel_preference.avoid,
            (_, None) => &[],
            (MustVisit, Some(c)) => &c.attractions.must_visit,
            (RejectVisit, Some(c)) => &c.attractions.reject_visit,
            (CategoryPositive, Some(c)) => &c.attractions.category_pref.positive,
            (CategoryNegative, Some(c)) => &c.attractions.category_pref.negative,
            (MustEat, Some(c)) => &c.food.must_eat,
            (PreferEat, Some(c)) => &c.food.prefer_eat,
            (AvoidEat, Some(c)) => &c.food.avoid_eat,
            (RejectEat, Some(c)) => &c.food.reject_eat,
        }
    }
}

/// The three scalars of a table (every member has all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    AvgBudget,
    MaxPoiPerDay,
    MaxActiveHours,
}

impl Scalar {
    pub const ALL: [Scalar; 3] = [
        Scalar::AvgBudget,
        Scalar::MaxPoiPerDay,
        Scalar::MaxActiveHours,
    ];
    /// The dotted path below `global_constraints`.
    pub fn path(self) -> &'static str {
        match self {
            Scalar::AvgBudget => "avg_budget",
            Scalar::MaxPoiPerDay => "intensity.max_poi_per_day",
            Scalar::MaxActiveHours => "intensity.max_active_hours",
        }
    }
    pub fn get(self, g: &GlobalConstraints) -> u32 {
        match self {
            Scalar::AvgBudget => g.avg_budget,
            Scalar::MaxPoiPerDay => g.intensity.max_poi_per_day,
            Scalar::MaxActiveHours => g.intensity.max_active_hours,
        }
    }
}

/// One value of a list field: which field, in which city (None for the globals), what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListItem<'a> {
    pub field: ListField,
    pub city: Option<&'a str>,
    pub value: &'a str,
}

impl Preference {
    /// Every list value of the table, in the release's order: the global lists, then each
    /// city's in the table's city order.
    pub fn list_items(&self) -> impl Iterator<Item = ListItem<'_>> {
        let mut out = Vec::new();
        self.list_items_into(&mut out);
        out.into_iter()
    }

    /// [`Preference::list_items`], appended to `out` (an iterator of iterators over the
    /// fields and cities cost `gtb validate` 4 % of its time).
    pub fn list_items_into<'a>(&'a self, out: &mut Vec<ListItem<'a>>) {
        self.each_list(|field, city, values| {
            out.extend(values.iter().map(|value| ListItem { field, city, value }));
        });
    }

    /// `f` of every list of the table (its field, its city or None for the globals, its
    /// values) in the release's order, in plain loops.
    fn each_list<'a>(&'a self, mut f: impl FnMut(ListField, Option<&'a str>, &'a [String])) {
        let g = &self.global_constraints;
        for s in LIST_FIELDS.iter().filter(|s| !s.per_city) {
            f(s.field, None, s.field.get(g, None));
        }
        for (name, c) in &self.city_specific_preferences {
            for s in LIST_FIELDS.iter().filter(|s| s.per_city) {
                f(s.field, Some(name.as_str()), s.field.get(g, Some(c)));
            }
        }
    }

    /// Atomic preference points: every list item plus the 3 scalars (paper Table 9's definition).
    pub fn atomic_points(&self) -> usize {
        let mut n = Scalar::ALL.len();
        self.each_list(|_, _, values| n += values.len());
        n
    }
}

/// The compound segment names of the table's paths (`global_constraints`, `must_visit`,
/// `max_poi_per_day`, ...): the release repairs a garbled marker segment such as
/// `global_constraints_xxx` back to one of these. Plain names (`must`, `food`) are not
/// repaired: `must_visit` must not be cut back to `must`.
pub fn compound_segments() -> Vec<&'static str> {
    let mut out = vec!["global_constraints", "city_specific_preferences"];
    let paths = LIST_FIELDS.iter().map(|s| s.path);
    for seg in paths
        .chain(Scalar::ALL.iter().map(|s| s.path()))
        .flat_map(|p| p.split('.'))
    {
        if seg.contains('_') && !out.contains(&seg) {
            out.push(seg);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_field_order_and_paths_are_distinct() {
        for (i, s) in LIST_FIELDS.iter().enumerate() {
            assert_eq!(s.field as usize, i, "{:?} out of place", s.field);
            assert_eq!(
                s.per_city,
                s.path.starts_with("attractions") || s.path.starts_with("food")
            );
        }
        let mut paths: Vec<&str> = LIST_FIELDS.iter().map(|s| s.path).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), LIST_FIELDS.len());
    }

    #[test]
    fn list_items_walk_globals_then_cities() {
        let mut p = Preference::default();
        p.global_constraints.transport.reject = vec!["飞机".into()];
        p.global_constraints.hotel_preference.prefer = vec!["民宿".into()];
        let mut c = CityPref::default();
        c.attractions.must_visit = vec!["岳麓山".into()];
        c.food.reject_eat = vec!["火锅".into()];
        p.city_specific_preferences.insert("长沙市".into(), c);
        let items: Vec<(ListField, Option<&str>, &str)> =
            p.list_items().map(|i| (i.field, i.city, i.value)).collect();
        assert_eq!(
            items,
            [
                (ListField::TransportReject, None, "飞机"),
                (ListField::HotelPrefer, None, "民宿"),
                (ListField::MustVisit, Some("长沙市"), "岳麓山"),
                (ListField::RejectEat, Some("长沙市"), "火锅"),
            ]
        );
        assert_eq!(p.atomic_points(), 7);
        let segs = compound_segments();
        assert!(segs.contains(&"category_pref") && segs.contains(&"max_active_hours"));
        assert!(!segs.contains(&"must"));
    }
}
