//! The travel day of a plan (MODELLED figures, docs/PLANS.md): when the group leaves and
//! arrives, how long it takes to reach a station, airport or car, and so which intercity trips
//! fit into one day. The release's format cannot hold a longer trip (every night but the last
//! ends at a hotel). The solver plans with it; the validator's stage-4 rule and the generator's
//! budget floor read it, so that all three agree on what is feasible. Times are minutes after
//! midnight.

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

/// Up to the next multiple of 5.
pub fn up5(m: u32) -> u32 {
    m.div_ceil(5) * 5
}

/// A ride across town of `km` (geodesic): 12 minutes plus 2.4 per km (about 25 km/h door to
/// door), at most 90 minutes, rounded up to the 5-minute grid (so never under 15). The
/// witness plans' transfers and the split's route answers (`gtb-world`) both take it.
pub fn ride_minutes_km(km: f64) -> u32 {
    up5((12.0 + 2.4 * km).min(90.0) as u32)
}

/// How a transfer of `km` is made: on foot within 1.5 km, else by car when the group travels
/// by car, else by taxi.
pub fn ride_mode_km(km: f64, driving: bool) -> &'static str {
    if km <= 1.5 {
        "步行"
    } else if driving {
        "自驾"
    } else {
        "打车"
    }
}
