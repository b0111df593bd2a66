//! The time model of a witness plan. Every figure here is MODELLED (documented in
//! docs/PLANS.md), not taken from timetables: how long a visit lasts, how long a transfer
//! takes, when meals are eaten, when the group leaves and arrives. Times are minutes after
//! midnight on a 5-minute grid. The travel day (when trips leave and arrive, terminal access)
//! is `plan::day`, which the validator's stage-4 rule and the generator read too.

use gtb_resources::Resources;

pub use gtb_plan::day::{
    DAY_START, EARLIEST_DEPARTURE, FIRST_DEPARTURE, HOTEL_CHECKIN_LATEST, HOTEL_CHECKOUT,
    LAST_DEPARTURE, LATEST_ARRIVAL, LegPlace, RETURN_ARRIVAL_LATEST, SIGHT_LATEST_END,
    TRAVEL_DAY_START, access, fits_travel_day, up5,
};

/// A meal: earliest start, latest start, duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MealKind {
    Lunch,
    Dinner,
}

impl MealKind {
    pub fn window(self) -> (u32, u32, u32) {
        match self {
            MealKind::Lunch => (11 * 60, 13 * 60 + 30, 60),
            MealKind::Dinner => (17 * 60 + 30, 20 * 60, 75),
        }
    }
}

/// Minutes of a visit by attraction category: large sites two and a half hours, museums and
/// gardens two hours, temples, squares and streets an hour and a half.
pub fn visit_minutes(category: &str) -> u32 {
    const LONG: [&str; 27] = [
        "5A景区",
        "4A景区",
        "3A景区",
        "自然风光",
        "名山大川",
        "名山丘陵",
        "大峡谷",
        "主题公园",
        "游乐园",
        "古镇",
        "古镇古村",
        "古村落",
        "森林公园",
        "森林草原",
        "冰川瀑布",
        "动物园",
        "湿地",
        "湿地公园",
        "漂流",
        "温泉",
        "户外拓展",
        "溶洞",
        "海滨沙滩",
        "海滨浴场",
        "海滩",
        "步道",
        "热带植物园",
    ];
    const SHORT: [&str; 10] = [
        "公园",
        "寺庙",
        "道观",
        "清真寺",
        "天主教堂",
        "教堂",
        "广场",
        "观景点",
        "特色街区",
        "购物相关场所",
    ];
    if LONG.contains(&category) {
        150
    } else if SHORT.contains(&category) {
        90
    } else {
        120
    }
}

/// A brief visit, for a sight that does not fit its full time.
pub const BRIEF_VISIT: u32 = 60;

/// Geodesic km (WGS-84 ellipsoid), remembered per thread: the tasks of a city ask for the
/// same pairs of its sights over and over (a destination's ride table is every pair of its
/// shortlisted sights), and a geodesic costs about a microsecond. The memo holds at most
/// `KM_MEMO` pairs and starts over when full; it changes no figure (the same function of the
/// same coordinates).
pub fn km(a: (f64, f64), b: (f64, f64)) -> f64 {
    use std::cell::RefCell;
    const KM_MEMO: usize = 1 << 18;
    thread_local! {
        static MEMO: RefCell<rustc_hash::FxHashMap<[u64; 4], f64>> = RefCell::default();
    }
    let key = [a.0, a.1, b.0, b.1].map(f64::to_bits);
    MEMO.with_borrow_mut(|memo| {
        if let Some(&d) = memo.get(&key) {
            return d;
        }
        if memo.len() >= KM_MEMO {
            memo.clear();
        }
        let d = gtb_resources::geodesy::distance_km(a, b);
        memo.insert(key, d);
        d
    })
}

/// A ride across town between two positions (`gtb_plan::day::ride_minutes_km`).
pub fn ride_minutes(a: (f64, f64), b: (f64, f64)) -> u32 {
    gtb_plan::day::ride_minutes_km(km(a, b))
}

/// How a transfer between two positions is made (`gtb_plan::day::ride_mode_km`).
pub fn ride_mode(a: (f64, f64), b: (f64, f64), driving: bool) -> &'static str {
    gtb_plan::day::ride_mode_km(km(a, b), driving)
}

/// Where an intercity trip starts or ends in a city: a real station of the city (12306 name)
/// for trains, an airport by its IATA code, a stand-in car park for self-drive.
pub fn terminal(res: &Resources, city: gtb_resources::CityId, mode: &str) -> String {
    let c = res.city(city);
    let short = c.short_name();
    match mode {
        "高铁" | "火车" => {
            let prefs: [String; 5] = if mode == "高铁" {
                [
                    format!("{short}南"),
                    format!("{short}东"),
                    format!("{short}西"),
                    format!("{short}北"),
                    short.to_string(),
                ]
            } else {
                [
                    short.to_string(),
                    format!("{short}东"),
                    format!("{short}西"),
                    format!("{short}南"),
                    format!("{short}北"),
                ]
            };
            let st = prefs
                .iter()
                .find(|p| c.stations.contains(p))
                .or_else(|| c.stations.first())
                .map_or_else(|| short.to_string(), String::clone);
            format!("{st}站")
        }
        "飞机" => match c.airports.first() {
            Some(code) => format!("{}·{code}机场", c.name),
            None => format!("{}机场", c.name),
        },
        _ => gtb_plan::stand_in("停车场", &c.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_figures() {
        assert_eq!(up5(61), 65);
        assert_eq!(ride_minutes((39.9, 116.4), (39.9, 116.4)), 15);
        assert!(ride_minutes((39.9, 116.4), (40.36, 116.02)) >= 90 - 5);
        assert_eq!(visit_minutes("博物馆"), 120);
        assert_eq!(visit_minutes("5A景区"), 150);
        assert_eq!(ride_mode((39.9, 116.4), (39.905, 116.4), false), "步行");
    }
}
