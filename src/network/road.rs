//! Self-drive (自驾): road distance from the geodesic by a detour factor, driving time at
//! expressway speeds, and the cost per traveller (fuel and tolls shared by the car's occupants).
//! Constants are calibrated on published road distances and driving times (see
//! tests/transport_calibration.rs); they are a model, not a route planner.

/// Road km per geodesic km between city centres (北京–上海 G2: 1,213 km / 1,067 km = 1.14;
/// 成都–重庆 G85: 310 / 266 = 1.17).
const DETOUR: f64 = 1.15;
/// Extra detour below 150 km (ring roads, the way out of town: 北京–天津 137 / 114 = 1.20).
const DETOUR_SHORT: f64 = 0.10;
/// Extra detour per mountain end (valleys and passes: 昆明–丽江 520 / 417 = 1.25 with two ends,
/// 成都–九寨沟 430 / 296 = 1.45 with one end in the gorges of 阿坝).
const DETOUR_MOUNTAIN: f64 = 0.15;
/// Average speed incl. short rests: 100 km/h on expressways of the plains (北京–上海 ≈ 12.5 h),
/// 70 km/h where an end lies in the mountains.
const KMH_PLAIN: f64 = 100.0;
const KMH_MOUNTAIN: f64 = 70.0;
/// Minutes to leave and enter town.
const ACCESS_MIN: f64 = 20.0;
/// Cost per car km: fuel 0.60 CNY (7.5 L/100 km at 8 CNY/L) and expressway toll 0.50 CNY
/// (passenger car, most provinces 0.45–0.55 CNY/km), shared by 4 occupants.
const FUEL_PER_KM: f64 = 0.60;
const TOLL_PER_KM: f64 = 0.50;
const OCCUPANTS: f64 = 4.0;
/// Nobody plans a self-drive leg beyond this many road km.
pub const MAX_KM: f64 = 1500.0;

/// Where the roads climb: provinces (adcode prefix 2) and prefectures (prefix 4) whose roads
/// wind through mountains: 西藏, 青海, 云南, 贵州; 甘孜 5133, 阿坝 5132, 凉山 5134, 恩施 4228,
/// 神农架 4290, 湘西 4331, 张家界 4308, 甘南 6230.
const MOUNTAIN: [&str; 12] = [
    "54", "63", "53", "52", "5133", "5132", "5134", "4228", "4290", "4331", "4308", "6230",
];

pub fn is_mountain(adcode: &str) -> bool {
    MOUNTAIN.iter().any(|p| adcode.starts_with(p))
}

/// A modelled drive.
#[derive(Debug, Clone, PartialEq)]
pub struct Drive {
    pub km: f64,
    pub minutes: f64,
    pub fare: f64,
}

/// The drive between two centres `geodesic_km` apart, `mountain_ends` (0..=2) of them in the
/// mountains; None beyond `MAX_KM`.
pub fn drive(geodesic_km: f64, mountain_ends: u32) -> Option<Drive> {
    let short = if geodesic_km < 150.0 {
        DETOUR_SHORT
    } else {
        0.0
    };
    let km = geodesic_km * (DETOUR + short + DETOUR_MOUNTAIN * mountain_ends as f64);
    if km > MAX_KM {
        return None;
    }
    // time: the mountain share of the road at mountain speed
    let mountain_share = mountain_ends as f64 / 2.0;
    let hours = km * (1.0 - mountain_share) / KMH_PLAIN + km * mountain_share / KMH_MOUNTAIN;
    Some(Drive {
        km,
        minutes: hours * 60.0 + ACCESS_MIN,
        fare: km * (FUEL_PER_KM + TOLL_PER_KM) / OCCUPANTS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beijing_shanghai_is_a_long_day_not_seventeen_hours() {
        let d = drive(1067.0, 0).unwrap();
        assert!((12.0 * 60.0..=13.0 * 60.0).contains(&d.minutes), "{d:?}");
        assert!(drive(1400.0, 0).is_none());
        assert!(is_mountain("540100") && !is_mountain("110000"));
    }
}
