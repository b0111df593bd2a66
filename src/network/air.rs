//! Flights (飞机): only between airports with scheduled service (`airports.csv`) where a direct
//! route is plausible, with block times from a great-circle formula and typical economy fares.
//!
//! The route rule, by airport class (the CAAC 十四五 plan's 10 international hub cities; else
//! OurAirports' large / medium / small class):
//! * hub–hub and hub–trunk and trunk–trunk: at least `MIN_KM` apart;
//! * a hub to any airport: at least `MIN_KM` apart (hubs fly to every regional airport);
//! * a trunk airport to a regional one: `MIN_KM`..`TRUNK_REGIONAL_MAX_KM`, to a small one:
//!   `MIN_KM`..`TRUNK_SMALL_MAX_KM` (longer spoke routes go through a hub);
//! * two regional / small airports: only inside a province with an intra-provincial feeder
//!   network (新疆, 内蒙古, 云南, 黑龙江) and at least `FEEDER_MIN_KM` apart;
//! * and always: below `SHORT_KM` a flight exists only where the surface journey takes at least
//!   `SURFACE_MIN` minutes (no 拉萨→林芝 flight: 拉林铁路 takes 3.5 h and the airports are 330 km
//!   apart, below every rule's minimum), and never below `HOP_MIN_KM`.

use crate::geodesy::distance_km;

/// Airports of the 10 international aviation hub cities of the CAAC 十四五 plan (北京, 上海,
/// 广州, 成都, 深圳, 昆明, 西安, 重庆, 乌鲁木齐, 哈尔滨).
const HUBS: [&str; 13] = [
    "PEK", "PKX", "PVG", "SHA", "CAN", "CTU", "TFU", "SZX", "KMG", "XIY", "CKG", "URC", "HRB",
];
const FEEDER_PROVINCES: [&str; 4] = ["65", "15", "53", "23"];
const MIN_KM: f64 = 400.0;
const HUB_SPOKE_MIN_KM: f64 = 300.0;
const TRUNK_REGIONAL_MAX_KM: f64 = 2200.0;
const TRUNK_SMALL_MAX_KM: f64 = 1500.0;
const FEEDER_MIN_KM: f64 = 400.0;
/// Hub-to-spoke hops below `HUB_SPOKE_MIN_KM` inside one province (成都–九寨, 成都–康定) fly
/// only where the surface takes at least `SURFACE_MIN`; never below `HOP_MIN_KM`.
const HOP_MIN_KM: f64 = 150.0;
const SHORT_KM: f64 = 600.0;
const SURFACE_MIN: f64 = 180.0;
/// Block time: 35 min (taxi, climb, approach) + the great circle at 720 km/h (PEK–SHA 1,075 km:
/// 125 min against 130–140 scheduled; PEK–URC 2,400 km: 235 against 240).
const BLOCK_FIXED_MIN: f64 = 35.0;
const BLOCK_KMH: f64 = 720.0;
/// Typical economy fare: 0.45 CNY/km + 200 CNY, plus the 50 CNY 民航发展基金 and the fuel
/// surcharge (20 CNY below 800 km, 40 above).
const FARE_PER_KM: f64 = 0.45;
const FARE_BASE: f64 = 200.0;
const FUND: f64 = 50.0;
const FUEL_SHORT: f64 = 20.0;
const FUEL_LONG: f64 = 40.0;
/// Choosing between a city's airports: the drive to the airport at 40 km/h counts too.
const ACCESS_KMH: f64 = 40.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Small,
    Regional,
    Trunk,
    Hub,
}

#[derive(Debug, Clone)]
pub struct Airport {
    pub iata: String,
    pub class: Class,
    pub lat: f64,
    pub lng: f64,
    /// adcode of the county the airport lies in
    pub county: String,
}

impl Airport {
    pub fn class_of(iata: &str, ourairports_type: &str) -> Option<Class> {
        if HUBS.contains(&iata) {
            return Some(Class::Hub);
        }
        match ourairports_type {
            "large_airport" => Some(Class::Trunk),
            "medium_airport" => Some(Class::Regional),
            "small_airport" => Some(Class::Small),
            _ => None,
        }
    }
    fn province(&self) -> &str {
        self.county.get(..2).unwrap_or("")
    }
}

/// Whether a direct route between two airports `d` km apart is plausible; `surface_min` is the
/// fastest rail or road journey between the cities (None: no surface journey).
pub fn plausible(a: &Airport, b: &Airport, d: f64, surface_min: Option<f64>) -> bool {
    let (lo, hi) = if a.class >= b.class { (b, a) } else { (a, b) };
    let same_province = a.province() == b.province();
    let slow_surface = surface_min.is_none_or(|m| m >= SURFACE_MIN);
    if d < HOP_MIN_KM || (d < SHORT_KM && !slow_surface) {
        return false;
    }
    match (hi.class, lo.class) {
        (Class::Hub, _) => d >= HUB_SPOKE_MIN_KM || same_province,
        (Class::Trunk, Class::Trunk) => d >= MIN_KM,
        (Class::Trunk, Class::Regional) => (MIN_KM..=TRUNK_REGIONAL_MAX_KM).contains(&d),
        (Class::Trunk, Class::Small) => (MIN_KM..=TRUNK_SMALL_MAX_KM).contains(&d),
        _ => same_province && FEEDER_PROVINCES.contains(&a.province()) && d >= FEEDER_MIN_KM,
    }
}

/// A modelled direct flight.
#[derive(Debug, Clone, PartialEq)]
pub struct Flight {
    pub from: String,
    pub to: String,
    pub km: f64,
    pub minutes: f64,
    pub fare: f64,
}

/// The flight between two airports `km` apart.
pub fn flight(a: &Airport, b: &Airport, km: f64) -> Flight {
    let fuel = if km < 800.0 { FUEL_SHORT } else { FUEL_LONG };
    Flight {
        from: a.iata.clone(),
        to: b.iata.clone(),
        km,
        minutes: BLOCK_FIXED_MIN + km / BLOCK_KMH * 60.0,
        fare: FARE_PER_KM * km + FARE_BASE + FUND + fuel,
    }
}

/// The best plausible flight between two cities' airports (the shortest block time plus the
/// drives to the airports), if any.
pub fn best_flight(
    from: &[&Airport],
    from_centre: (f64, f64),
    to: &[&Airport],
    to_centre: (f64, f64),
    surface_min: Option<f64>,
) -> Option<Flight> {
    let access = |a: &Airport, c: (f64, f64)| distance_km(c, (a.lat, a.lng)) / ACCESS_KMH * 60.0;
    let mut best: Option<(f64, Flight)> = None;
    for a in from {
        for b in to {
            let km = distance_km((a.lat, a.lng), (b.lat, b.lng));
            if !plausible(a, b, km, surface_min) {
                continue;
            }
            let f = flight(a, b, km);
            let score = f.minutes + access(a, from_centre) + access(b, to_centre);
            if best.as_ref().is_none_or(|(s, _)| score < *s) {
                best = Some((score, f));
            }
        }
    }
    best.map(|(_, f)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ap(iata: &str, class: Class, lat: f64, lng: f64, county: &str) -> Airport {
        Airport {
            iata: iata.into(),
            class,
            lat,
            lng,
            county: county.into(),
        }
    }

    #[test]
    fn no_flight_between_lhasa_and_nyingchi() {
        let lxa = ap("LXA", Class::Regional, 29.2978, 90.9119, "540522");
        let lzy = ap("LZY", Class::Regional, 29.3033, 94.3353, "540422");
        let km = |a: &Airport, b: &Airport| distance_km((a.lat, a.lng), (b.lat, b.lng));
        assert!(!plausible(&lxa, &lzy, km(&lxa, &lzy), Some(210.0)));
        assert!(!plausible(&lxa, &lzy, km(&lxa, &lzy), None));
        // a hub flies to both
        let ctu = ap("CTU", Class::Hub, 30.5785, 103.9471, "510116");
        assert!(plausible(&ctu, &lxa, km(&ctu, &lxa), Some(2000.0)));
        assert!(plausible(&ctu, &lzy, km(&ctu, &lzy), None));
    }

    #[test]
    fn short_hub_hops_need_a_slow_surface() {
        let ctu = ap("CTU", Class::Hub, 30.5785, 103.9471, "510116");
        let jzh = ap("JZH", Class::Regional, 32.8533, 103.6822, "513224");
        let km = distance_km((ctu.lat, ctu.lng), (jzh.lat, jzh.lng));
        assert!(plausible(&ctu, &jzh, km, Some(420.0)));
        assert!(!plausible(&ctu, &jzh, km, Some(120.0)));
        let f = flight(&ctu, &jzh, km);
        assert!(f.minutes > 45.0 && f.minutes < 70.0, "{f:?}");
    }
}
