//! Stand-ins: how a plan names a venue the resources do not name.
//!
//! The embedded snapshot knows hotels only as price bands per category, and food mostly as
//! cuisines and local dishes (named restaurants exist in a minority of cities). A plan still
//! needs a `location` per activity, and inventing a real-looking name is not allowed. So such a
//! venue is written `<category or dish>（<city>·示意）`, e.g. `经济型（长沙市·示意）` or
//! `热干面（武汉市·示意）`: "an unnamed place of this kind in this city, for illustration".
//! Its price comes from the band (hotels) or the food table; `gtb score`'s resolver gives it
//! the category it names, as if the POI table had an entry of that name.

/// The suffix that marks a stand-in (before it: `（<city>`).
pub const STAND_IN_MARK: &str = "·示意）";

/// The rule in one line, written beside every plan that uses a stand-in.
pub const STAND_IN_RULE: &str = "'<category or dish>（<city>·示意）' is a stand-in for an unnamed venue of that kind in that city (the resources name none); priced from the city's hotel band or food table; see docs/PLANS.md";

/// The stand-in location for a kind of venue (hotel category, cuisine or dish) in a city.
pub fn stand_in(kind: &str, city: &str) -> String {
    format!("{kind}（{city}{STAND_IN_MARK}")
}

/// `(kind, city)` of a stand-in location, `None` for any other string.
pub fn parse_stand_in(location: &str) -> Option<(&str, &str)> {
    let body = location.strip_suffix(STAND_IN_MARK)?;
    let (kind, city) = body.rsplit_once('（')?;
    (!kind.is_empty() && !city.is_empty()).then_some((kind, city))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let s = stand_in("热干面", "武汉市");
        assert_eq!(s, "热干面（武汉市·示意）");
        assert_eq!(parse_stand_in(&s), Some(("热干面", "武汉市")));
        assert_eq!(parse_stand_in("火宫殿"), None);
        assert_eq!(parse_stand_in("（长沙市·示意）"), None);
    }
}
