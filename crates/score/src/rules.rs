//! The release's scoring rules for one item (`evaluation/group_utility.py`), shared by the
//! plan scorer and the solver: strong tier ±2 (must/reject, and the budget and intensity caps),
//! weak tier ±1 (prefer/avoid, category_pref, hotel_preference); positive items score only when
//! planned, negative ones only when planned.

/// One scored preference item.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Term {
    pub field: &'static str,
    pub item: String,
    pub score: i32,
}

fn term(field: &'static str, item: &str, score: i32) -> Term {
    Term {
        field,
        item: item.to_string(),
        score,
    }
}

/// The four food lists of one member and city.
pub struct FoodLists<'a, T> {
    pub must: &'a [T],
    pub reject: &'a [T],
    pub prefer: &'a [T],
    pub avoid: &'a [T],
}

/// One restaurant activity: the first list item (must, reject, prefer, avoid) that is a
/// substring of the location decides; otherwise the resolved category is compared, where
/// must and reject may both apply and prefer / avoid only when neither did.
pub fn food_terms<T: AsRef<str>>(f: &FoodLists<T>, location: &str, category: &str) -> Vec<Term> {
    for (list, field, score) in [
        (f.must, "must_eat", 2),
        (f.reject, "reject_eat", -2),
        (f.prefer, "prefer_eat", 1),
        (f.avoid, "avoid_eat", -1),
    ] {
        if let Some(x) = list.iter().find(|x| location.contains(x.as_ref())) {
            return vec![term(field, x.as_ref(), score)];
        }
    }
    let has = |l: &[T]| l.iter().any(|x| x.as_ref() == category);
    let mut out = Vec::new();
    if has(f.must) {
        out.push(term("must_eat", category, 2));
    }
    if has(f.reject) {
        out.push(term("reject_eat", category, -2));
    }
    if out.is_empty() {
        if has(f.prefer) {
            out.push(term("prefer_eat", category, 1));
        } else if has(f.avoid) {
            out.push(term("avoid_eat", category, -1));
        }
    }
    out
}

/// Whether a member's must_visit or reject_visit names (part of) the location: such an
/// attraction is scored by those lists and not by category.
pub fn strong_match<T: AsRef<str>>(must: &[T], reject: &[T], location: &str) -> bool {
    must.iter()
        .chain(reject)
        .any(|x| location.contains(x.as_ref()))
}

/// category_pref of one resolved attraction: +1 for a positive keyword in the name or the
/// category in the positive list; likewise −1 for the negative list (both may apply).
pub fn category_terms<T: AsRef<str>>(
    positive: &[T],
    negative: &[T],
    location: &str,
    category: &str,
) -> Vec<Term> {
    let mut out = Vec::new();
    for (list, field, score) in [
        (positive, "category_pref.positive", 1),
        (negative, "category_pref.negative", -1),
    ] {
        if let Some(x) = list.iter().find(|x| location.contains(x.as_ref())) {
            out.push(term(field, x.as_ref(), score));
        } else if list.iter().any(|x| x.as_ref() == category) {
            out.push(term(field, category, score));
        }
    }
    out
}

/// One intercity trip: must +2 and reject −2 may both fire; prefer +1, else avoid −1, only
/// when neither did.
pub fn transport_terms<T: AsRef<str>>(
    must: &[T],
    prefer: &[T],
    avoid: &[T],
    reject: &[T],
    mode: &str,
) -> Vec<Term> {
    let has = |l: &[T]| l.iter().any(|x| x.as_ref() == mode);
    let mut out = Vec::new();
    if has(must) {
        out.push(term("transport.must", mode, 2));
    }
    if has(reject) {
        out.push(term("transport.reject", mode, -2));
    }
    if out.is_empty() {
        if has(prefer) {
            out.push(term("transport.prefer", mode, 1));
        } else if has(avoid) {
            out.push(term("transport.avoid", mode, -1));
        }
    }
    out
}

/// One night's hotel, by its resolved category: prefer +1, else avoid −1.
pub fn hotel_term<T: AsRef<str>>(prefer: &[T], avoid: &[T], category: &str) -> Option<Term> {
    if prefer.iter().any(|x| x.as_ref() == category) {
        Some(term("hotel_preference.prefer", category, 1))
    } else if avoid.iter().any(|x| x.as_ref() == category) {
        Some(term("hotel_preference.avoid", category, -1))
    } else {
        None
    }
}

/// Sum of a term list.
pub fn total(terms: &[Term]) -> i32 {
    terms.iter().map(|t| t.score).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn food_name_beats_category_and_first_hit_wins() {
        let f = FoodLists {
            must: &["热干面"][..],
            reject: &["面馆"][..],
            prefer: &[][..],
            avoid: &[][..],
        };
        // the name names a must: +2 and the rejected category is not looked at
        assert_eq!(total(&food_terms(&f, "热干面（武汉市·示意）", "面馆")), 2);
        // by category: reject fires
        assert_eq!(total(&food_terms(&f, "蔡林记", "面馆")), -2);
        let g = FoodLists {
            must: &["湘菜"][..],
            reject: &["湘菜"][..],
            prefer: &["湘菜"][..],
            avoid: &[][..],
        };
        assert_eq!(total(&food_terms(&g, "火宫殿", "湘菜")), 0);
        assert_eq!(food_terms(&g, "火宫殿", "湘菜").len(), 2);
    }

    #[test]
    fn transport_category_hotel() {
        let e: [&str; 0] = [];
        assert_eq!(
            total(&transport_terms(&["高铁"], &e, &e, &["高铁"], "高铁")),
            0
        );
        assert_eq!(
            total(&transport_terms(&e, &["飞机"], &["飞机"], &e, "飞机")),
            1
        );
        assert_eq!(
            total(&category_terms(
                &["古镇"],
                &["5A景区"],
                "周庄古镇",
                "5A景区"
            )),
            0
        );
        assert!(strong_match(&["西湖"], &e, "西湖风景名胜区"));
        assert_eq!(
            hotel_term(&["民宿"], &["民宿"], "民宿").map(|t| t.score),
            Some(1)
        );
    }
}
