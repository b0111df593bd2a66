//! Which food values a city accepts. One rule for the validator and the LLM reply parser (the
//! prompt states it to the model): a name or category of one of the city's food rows (dish,
//! cuisine, restaurant), or a category found in every city (`vocab::FOOD_ANYWHERE`). A global
//! category outside that list (重庆火锅, 肠粉, 小龙虾, ...) is accepted only where the city's
//! rows list it; the excluded categories (食堂, 米粉) never.

use gtb_resources::names::normalize;
use gtb_resources::{Food, vocab};

/// The accepted spelling of `v` in a city with these food rows: `v` itself, or the row name it
/// matches once normalised (width, spaces, punctuation); None when the city does not accept it.
pub fn canonical<'a>(foods: &'a [Food], v: &'a str) -> Option<&'a str> {
    if vocab::EXCLUDED_FOOD_CATEGORIES.contains(&v) {
        return None;
    }
    if vocab::is_food_anywhere(v) || foods.iter().any(|f| f.name == v || f.category == v) {
        return Some(v);
    }
    let n = normalize(v);
    foods
        .iter()
        .find(|f| normalize(&f.name) == n)
        .map(|f| f.name.as_str())
}

/// Whether a city with these food rows accepts `v` as a food preference.
pub fn allowed(foods: &[Food], v: &str) -> bool {
    canonical(foods, v).is_some()
}

/// The names and categories of a city's food rows, for asking [`allowed_in`] of many values.
pub fn spelled(foods: &[Food]) -> gtb_core::FastSet<&str> {
    foods
        .iter()
        .flat_map(|f| [f.name.as_str(), f.category.as_str()])
        .collect()
}

/// [`allowed`], with the rows' [`spelled`] set: a value in it (and not excluded) is accepted as
/// itself without a scan of the rows.
pub fn allowed_in(spelled: &gtb_core::FastSet<&str>, foods: &[Food], v: &str) -> bool {
    let listed = spelled.contains(v) && !vocab::EXCLUDED_FOOD_CATEGORIES.contains(&v);
    listed || allowed(foods, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gtb_resources::FoodKind;

    fn row(name: &str, kind: FoodKind, category: &str) -> Food {
        Food {
            city: 0,
            name: name.into(),
            kind,
            category: category.into(),
            price: 10,
            general_knowledge: false,
        }
    }

    #[test]
    fn issue13_11_food_values_are_scoped_to_the_city() {
        let wuhan = [
            row("热干面", FoodKind::Dish, "面馆"),
            row("湖北菜", FoodKind::Cuisine, "湖北菜"),
        ];
        assert!(allowed(&wuhan, "热干面") && allowed(&wuhan, "湖北菜"));
        // a category available everywhere, and a category of one of the city's rows
        assert!(allowed(&wuhan, "火锅") && allowed(&wuhan, "面馆"));
        // specialities of other cities
        for v in ["肠粉", "重庆火锅", "小龙虾", "过桥米线"] {
            assert!(!allowed(&wuhan, v), "{v}");
        }
        assert!(!allowed(&wuhan, "米粉") && !allowed(&wuhan, "食堂"));
        assert_eq!(canonical(&wuhan, " 热干面 "), Some("热干面"));
    }

    /// The validator asks with the rows' set; it must answer as `allowed` for any value.
    #[test]
    fn allowed_in_agrees_with_allowed() {
        let rows = [
            row("热干面", FoodKind::Dish, "面馆"),
            row("湖北菜", FoodKind::Cuisine, "湖北菜"),
            row("蔡林记", FoodKind::Restaurant, "米粉"),
            row("老通城", FoodKind::Restaurant, "食堂"),
        ];
        let set = spelled(&rows);
        for v in [
            "热干面",
            "面馆",
            "湖北菜",
            "米粉",
            "食堂",
            "蔡林记",
            "老通城",
            "火锅",
            "肠粉",
            " 热干面 ",
            "",
        ] {
            assert_eq!(allowed_in(&set, &rows, v), allowed(&rows, v), "{v:?}");
        }
    }
}
