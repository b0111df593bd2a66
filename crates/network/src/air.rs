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
//!
//! Cities at least `CONNECT_MIN_KM` apart with no plausible direct route fly with one change at
//! a hub (`best_connection`): a regional airport's long routes go through 广州, 北京 or 成都, as
//! airlines sell them (万宁/博鳌 BAR → 长春 via 广州). Shorter pairs never connect: a traveller
//! takes the train or the road (no 拉萨→成都→林芝 flight).

use gtb_resources::geodesy::distance_km;

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
/// One-stop connections: only between cities this far apart; the minimum connecting time at
/// the hub (domestic MCT at the big hubs is 60–90 min); the through fare as a share of the two
/// legs' fares (an airline's connecting fare is below the sum of its local fares); at most
/// this detour over the great circle.
const CONNECT_MIN_KM: f64 = 1000.0;
const CONNECT_MIN: f64 = 90.0;
const CONNECT_FARE: f64 = 0.8;
const CONNECT_MAX_DETOUR: f64 = 1.5;

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

/// A modelled one-stop connection: the journey as one flight (both legs' km, block times plus
/// the connecting time, the through fare) and the hub airport.
#[derive(Debug, Clone, PartialEq)]
pub struct Connection {
    pub flight: Flight,
    pub hub: String,
}

/// The best one-stop connection through a hub between two cities' airports, for pairs at
/// least `CONNECT_MIN_KM` apart (callers ask only when no direct flight exists).
pub fn best_connection(
    from: &[&Airport],
    from_centre: (f64, f64),
    to: &[&Airport],
    to_centre: (f64, f64),
    hubs: &[&Airport],
) -> Option<Connection> {
    let direct = distance_km(from_centre, to_centre);
    if direct < CONNECT_MIN_KM {
        return None;
    }
    let access = |a: &Airport, c: (f64, f64)| distance_km(c, (a.lat, a.lng)) / ACCESS_KMH * 60.0;
    let km = |a: &Airport, b: &Airport| distance_km((a.lat, a.lng), (b.lat, b.lng));
    let mut best: Option<(f64, Connection)> = None;
    for a in from {
        for b in to {
            for h in hubs {
                let (k1, k2) = (km(a, h), km(h, b));
                // legs are long: no surface journey rules them out
                if h.iata == a.iata
                    || h.iata == b.iata
                    || k1 + k2 > CONNECT_MAX_DETOUR * km(a, b)
                    || !plausible(a, h, k1, None)
                    || !plausible(h, b, k2, None)
                {
                    continue;
                }
                let (f1, f2) = (flight(a, h, k1), flight(h, b, k2));
                let f = Flight {
                    from: a.iata.clone(),
                    to: b.iata.clone(),
                    km: k1 + k2,
                    minutes: f1.minutes + CONNECT_MIN + f2.minutes,
                    fare: CONNECT_FARE * (f1.fare + f2.fare),
                };
                let score = f.minutes + access(a, from_centre) + access(b, to_centre);
                if best.as_ref().is_none_or(|(s, _)| score < *s) {
                    let hub = h.iata.clone();
                    best = Some((score, Connection { flight: f, hub }));
                }
            }
        }
    }
    best.map(|(_, c)| c)
}

/// The hub airports among `all`, in IATA order (a deterministic search order).
pub fn hubs<'a>(all: impl Iterator<Item = &'a Airport>) -> Vec<&'a Airport> {
    let mut h: Vec<&Airport> = all.filter(|a| a.class == Class::Hub).collect();
    h.sort_by(|a, b| a.iata.cmp(&b.iata));
    h
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
    fn a_regional_airport_connects_through_a_hub_only_on_long_journeys() {
        let bar = ap("BAR", Class::Regional, 19.1406, 110.4589, "469002");
        let cgq = ap("CGQ", Class::Trunk, 43.9962, 125.6850, "220173");
        let can = ap("CAN", Class::Hub, 23.3924, 113.2988, "440111");
        let km = distance_km((bar.lat, bar.lng), (cgq.lat, cgq.lng));
        assert!(!plausible(&bar, &cgq, km, None));
        let c = best_connection(
            &[&bar],
            (18.7951, 110.3911),
            &[&cgq],
            (43.8171, 125.3235),
            &[&can],
        )
        .expect("BAR-CAN-CGQ");
        assert_eq!(c.hub, "CAN");
        assert!(
            c.flight.minutes > 300.0 && c.flight.minutes < 480.0,
            "{c:?}"
        );
        // 拉萨 and 林芝 are too close to connect
        let lxa = ap("LXA", Class::Regional, 29.2978, 90.9119, "540522");
        let lzy = ap("LZY", Class::Regional, 29.3033, 94.3353, "540422");
        let ctu = ap("CTU", Class::Hub, 30.5785, 103.9471, "510116");
        let c = best_connection(&[&lxa], (29.65, 91.13), &[&lzy], (29.65, 94.36), &[&ctu]);
        assert_eq!(c, None);
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
