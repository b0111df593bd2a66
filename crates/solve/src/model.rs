//! The time model of a witness plan. Every figure here is MODELLED (documented in
//! docs/PLANS.md), not taken from timetables: how long a visit lasts, how long a transfer
//! takes, when meals are eaten, when the group leaves and arrives. Times are minutes after
//! midnight on a 5-minute grid.

use gtb_resources::Resources;

/// Leave the hotel on an ordinary day.
pub const DAY_START: u32 = 8 * 60 + 30;
/// Leave the hotel on a morning that moves on to the next city.
pub const TRAVEL_DAY_START: u32 = 8 * 60;
/// The outbound trip leaves the departure city at this time when it can arrive by
/// `LATEST_ARRIVAL`, else earlier, but not before `EARLIEST_DEPARTURE`.
pub const FIRST_DEPARTURE: u32 = 8 * 60;
pub const EARLIEST_DEPARTURE: u32 = 6 * 60 + 30;
/// An intercity trip into a destination arrives by then (there is still a hotel to reach).
pub const LATEST_ARRIVAL: u32 = 22 * 60;
/// The return trip leaves by then, and is home by `RETURN_ARRIVAL_LATEST` (same day).
pub const LAST_DEPARTURE: u32 = 18 * 60 + 30;
pub const RETURN_ARRIVAL_LATEST: u32 = 23 * 60 + 30;
/// Check-in at the hotel happens by then; check-out (the hotel's `end_time`) is at 08:00.
pub const HOTEL_CHECKIN_LATEST: u32 = 22 * 60 + 30;
pub const HOTEL_CHECKOUT: u32 = 8 * 60;
/// No sightseeing after this time, whatever the opening hours say.
pub const SIGHT_LATEST_END: u32 = 21 * 60 + 30;

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

/// Per intercity mode: minutes from the city centre to the station / airport / car, and how
/// early the group is there before departure.
pub fn access(mode: &str) -> (u32, u32) {
    match mode {
        "飞机" => (45, 60),
        "高铁" => (30, 20),
        "火车" => (30, 30),
        // self-drive: the walk to the car (parked near wherever the group is)
        _ => (10, 0),
    }
}

/// Where a leg lies in a trip: it sets the window of its travel day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegPlace {
    /// from the departure city to the first destination
    Outbound,
    /// from one destination to the next (a morning that moves on)
    Between,
    /// back to the departure city on the last day
    Return,
}

impl LegPlace {
    /// The place of leg `leg` of `legs` (a trip has at least two).
    pub fn of(leg: usize, legs: usize) -> LegPlace {
        if leg == 0 {
            LegPlace::Outbound
        } else if leg + 1 < legs {
            LegPlace::Between
        } else {
            LegPlace::Return
        }
    }
}

/// Whether a trip of `minutes` by `mode` fits into its travel day: the outbound trip leaves
/// from `EARLIEST_DEPARTURE` and a move from the morning's start, both arriving by
/// `LATEST_ARRIVAL`; the return leaves after the last morning's start and is home by
/// `RETURN_ARRIVAL_LATEST`. The release's format cannot hold a longer one (every night but the
/// last ends at a hotel).
pub fn fits_travel_day(mode: &str, minutes: u32, place: LegPlace) -> bool {
    let (acc, buffer) = access(mode);
    let (earliest, latest) = match place {
        LegPlace::Outbound => (EARLIEST_DEPARTURE, LATEST_ARRIVAL),
        LegPlace::Between => (up5(TRAVEL_DAY_START + acc + buffer), LATEST_ARRIVAL),
        LegPlace::Return => (up5(DAY_START + acc + buffer), RETURN_ARRIVAL_LATEST),
    };
    earliest + minutes <= latest
}

/// Geodesic km (WGS-84 ellipsoid).
pub use gtb_resources::geodesy::distance_km as km;

/// Up to the next multiple of 5.
pub fn up5(m: u32) -> u32 {
    m.div_ceil(5) * 5
}

/// A ride across town: 12 minutes plus 2.4 per km (about 25 km/h door to door), at most 90
/// minutes, rounded up to the 5-minute grid (so never under 15).
pub fn ride_minutes(a: (f64, f64), b: (f64, f64)) -> u32 {
    up5((12.0 + 2.4 * km(a, b)).min(90.0) as u32)
}

/// How a transfer is made: on foot within 1.5 km, else by car when the group travels by car,
/// else by taxi.
pub fn ride_mode(a: (f64, f64), b: (f64, f64), driving: bool) -> &'static str {
    if km(a, b) <= 1.5 {
        "步行"
    } else if driving {
        "自驾"
    } else {
        "打车"
    }
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
