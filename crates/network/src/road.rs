//! Self-drive (自驾): road distance from the geodesic by a detour factor, driving time at
//! expressway speeds, and the cost per traveller (fuel and tolls shared by the car's occupants).
//! Constants are calibrated on published road distances and driving times (see
//! tests/transport_calibration.rs); they are a model, not a route planner.

/// Road km per geodesic km between city centres (北京–上海 G2: 1,213 km / 1,067 km = 1.14;
/// 成都–重庆 G85: 310 / 266 = 1.17).
const DETOUR: f64 = 1.15;
/// Extra detour below 150 km (ring roads, the way out of town: 北京–天津 137 / 114 = 1.20).
const DETOUR_SHORT: f64 = 0.10;
/// Average speed incl. short rests on expressways of the plains: 100 km/h (北京–上海 ≈ 12.5 h).
const KMH_PLAIN: f64 = 100.0;
/// Minutes to leave and enter town.
const ACCESS_MIN: f64 = 20.0;
/// Cost per car km: fuel 0.60 CNY (7.5 L/100 km at 8 CNY/L) and expressway toll 0.50 CNY
/// (passenger car, most provinces 0.45–0.55 CNY/km), shared by 4 occupants.
const FUEL_PER_KM: f64 = 0.60;
const TOLL_PER_KM: f64 = 0.50;
const OCCUPANTS: f64 = 4.0;
/// Nobody plans a self-drive leg beyond this many road km.
pub const MAX_KM: f64 = 1500.0;

/// Where the roads climb, by adcode prefix (province: 2 digits, prefecture: 4): each end of a
/// drive in such a place adds to the detour and drives half the road at a lower speed.
/// * hilly: expressways through mountains (云南, 贵州, 西藏, 青海; 恩施 4228, 神农架 4290,
///   湘西 4331, 张家界 4308, 甘南 6230): +0.10 detour, 85 km/h (昆明–丽江 about 500 road km
///   for 341 geodesic, 6 h; 拉萨–林芝 about 400 km, 5 h);
/// * alpine: national roads over high passes (甘孜 5133, 阿坝 5132): +0.30, 55 km/h (成都–九寨沟
///   about 430 road km for 298 geodesic, 6–8 h).
const HILLY: [&str; 9] = [
    "53", "52", "54", "63", "4228", "4290", "4331", "4308", "6230",
];
const ALPINE: [&str; 2] = ["5133", "5132"];
const HILLY_DETOUR: f64 = 0.10;
const HILLY_KMH: f64 = 85.0;
const ALPINE_DETOUR: f64 = 0.30;
const ALPINE_KMH: f64 = 55.0;

/// The terrain at one end of a drive: (extra detour, speed).
pub fn terrain(adcode: &str) -> (f64, f64) {
    let within = |set: &[&str]| set.iter().any(|p| adcode.starts_with(p));
    if within(&ALPINE) {
        (ALPINE_DETOUR, ALPINE_KMH)
    } else if within(&HILLY) {
        (HILLY_DETOUR, HILLY_KMH)
    } else {
        (0.0, KMH_PLAIN)
    }
}

/// A modelled drive.
#[derive(Debug, Clone, PartialEq)]
pub struct Drive {
    pub km: f64,
    pub minutes: f64,
    pub fare: f64,
}

/// The drive between two centres `geodesic_km` apart whose ends have the terrain `from` and
/// `to` (see `terrain`); None beyond `MAX_KM`.
pub fn drive(geodesic_km: f64, from: (f64, f64), to: (f64, f64)) -> Option<Drive> {
    let short = if geodesic_km < 150.0 {
        DETOUR_SHORT
    } else {
        0.0
    };
    let km = geodesic_km * (DETOUR + short + from.0 + to.0);
    if km > MAX_KM {
        return None;
    }
    // each end's terrain sets the speed on its half of the road
    let hours = km / 2.0 / from.1 + km / 2.0 / to.1;
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
        let plain = terrain("110000");
        let d = drive(1067.0, plain, terrain("310000")).unwrap();
        assert!((12.0 * 60.0..=13.0 * 60.0).contains(&d.minutes), "{d:?}");
        assert!(drive(1400.0, plain, plain).is_none());
        assert_eq!(terrain("513233"), (ALPINE_DETOUR, ALPINE_KMH));
        assert_eq!(terrain("530100"), (HILLY_DETOUR, HILLY_KMH));
    }
}
