//! One task prepared for the solver: its members, days, legs and, per destination, the
//! candidate sights, meals and hotels with what each is worth to each member under the
//! release's rules (`score::rules`), so that the search adds numbers instead of re-reading
//! preferences.
//!
//! Venues come from the scoring table (real names: the resources' or a store's attractions,
//! restaurants and hotels) and, in cities no POI store covers (or, in a store's city, for a
//! kind of venue the store names none of), from the stand-ins (`score::resolver::stand_ins`),
//! which the table does not resolve and which therefore score nothing. A destination with no
//! hotel at all, not even a stand-in, cannot be set up (an error, not a panic). Large inventories (a store lists hundreds of venues per city) are cut to the
//! venues a plan could want (`crate::shortlist`): every sight someone must see or likes, the best
//! meals and hotels of each member, the ones serving a must_eat, and the cheapest.

use super::model::{self, MealKind};
use gtb_core::task::{CityPref, Preference, Task};
use gtb_resources::hours::OpeningHours;
use gtb_resources::{CityId, Resources};
use gtb_score::resolver::{Poi, PoiDb, PoiKind, date_parts, effective_category, must_eat_kept};
use gtb_score::rules::{self, FoodLists};

/// A set of members (bit i = the i-th member in the task's order); groups have at most 6.
pub type Mask = u8;

/// Bits of a member's list items (at most 32 per list and city).
pub type Items = u32;

pub struct Member<'a> {
    pub name: &'a str,
    pub pref: &'a Preference,
    pub firm: bool,
}

impl Member<'_> {
    /// The member's list of a destination (empty when the task has no table for it).
    pub fn city(&self, name: &str) -> Option<&CityPref> {
        self.pref.city_specific_preferences.get(name)
    }
}

#[derive(Debug, Clone)]
pub struct LegOption {
    pub mode: &'static str,
    pub minutes: u32,
    pub fare: u32,
    /// transport terms per member
    pub value: Vec<i32>,
    /// members whose must list names this mode
    pub must_hit: Mask,
    /// members who reject this mode
    pub rejected: Mask,
}

pub struct Leg {
    pub from: CityId,
    pub to: CityId,
    pub options: Vec<LegOption>,
}

pub struct Sight<'a> {
    pub name: &'a str,
    pub minutes: u32,
    pub at: (f64, f64),
    /// per trip day, the opening windows in minutes as the scorer reads them (`None`: no
    /// constraint; empty: closed that day)
    pub open: Vec<Option<Vec<(u32, u32)>>>,
    /// category_pref terms per member (0 when the name is one of their must/reject items)
    pub value: Vec<i32>,
    /// per member: which of their must_visit / reject_visit items of the city it matches
    pub must: Vec<Items>,
    pub reject: Vec<Items>,
}

pub struct Meal<'a> {
    pub location: &'a str,
    pub price: u32,
    pub stand_in: bool,
    /// food terms per member
    pub value: Vec<i32>,
    /// per member: the must_eat items it keeps: scored (+2) by the release, or named by a
    /// stand-in (`score::hard`)
    pub must: Vec<Items>,
    /// members for whom it scores a reject_eat item, or whose reject_eat item its name
    /// contains (stricter than the release's first-hit rule, which a must may pre-empt)
    pub rejected: Mask,
}

pub struct Hotel<'a> {
    pub location: &'a str,
    /// per person and night: the price per room, two to a room
    pub price: u32,
    pub stand_in: bool,
    pub value: Vec<i32>,
}

pub struct Destination<'a> {
    pub id: CityId,
    pub name: &'a str,
    pub centre: (f64, f64),
    /// ride minutes between places: sights by index, then the centre (where terminals,
    /// hotels and restaurants are); `(sights + 1)²` entries
    pub rides: Vec<u16>,
    pub sights: Vec<Sight<'a>>,
    pub meals: Vec<Meal<'a>>,
    pub hotels: Vec<Hotel<'a>>,
}

pub struct Instance<'a> {
    pub task: &'a Task,
    pub res: &'a Resources,
    pub members: Vec<Member<'a>>,
    pub all: Mask,
    pub hub: CityId,
    pub dest: Vec<Destination<'a>>,
    pub days: u32,
    /// per day: (YYYY-MM-DD, MM-DD, ISO weekday)
    pub dates: Vec<(String, String, u8)>,
    /// hub → first city → … → last city → hub
    pub legs: Vec<Leg>,
    /// per member and destination: all must_visit / must_eat items
    must_visit: Vec<Vec<Items>>,
    must_eat: Vec<Vec<Items>>,
}

/// Destinations and days the solver's fixed-size tables hold.
pub const MAX_DESTINATIONS: usize = 8;
pub const MAX_DAYS: usize = 16;
/// Members of a group the solver handles.
pub const MAX_MEMBERS: usize = 8;

/// The members of a mask in task order (`Instance::members_of`): its set bits, lowest first.
#[derive(Clone, Copy)]
pub struct Members(Mask);

impl Iterator for Members {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(i)
    }
}

/// Why a task cannot even be set up.
pub fn setup_error(task: &Task, res: &Resources) -> Option<String> {
    let m = &task.metadata;
    if res.city_id(&m.departure_city).is_none() {
        return Some(format!(
            "the departure city {} is not in the resources",
            m.departure_city
        ));
    }
    if let Some(c) = m.cities.iter().find(|c| res.city_id(c).is_none()) {
        return Some(format!("the destination {c} is not in the resources"));
    }
    if m.cities.is_empty() {
        return Some("the task has no destination".into());
    }
    let Some(days) = task.days() else {
        return Some(format!("{:?} is not a trip length", m.date));
    };
    if m.cities.len() > MAX_DESTINATIONS || days as usize > MAX_DAYS {
        return Some(format!(
            "{} cities in {days} days (the solver handles up to {MAX_DESTINATIONS} cities and {MAX_DAYS} days)",
            m.cities.len()
        ));
    }
    if (days as usize) < m.cities.len() + 1 {
        return Some(format!(
            "{days} days cannot spend a night in each of {} cities",
            m.cities.len()
        ));
    }
    if task.user_preferences.is_empty() || task.user_preferences.len() > MAX_MEMBERS {
        return Some(format!(
            "{} members (the solver handles 1 to {MAX_MEMBERS})",
            task.user_preferences.len()
        ));
    }
    if chrono::NaiveDate::parse_from_str(&task.time, "%Y-%m-%d").is_err() {
        return Some(format!("the date {:?} is not YYYY-MM-DD", task.time));
    }
    None
}

fn bits<F: Fn(&str) -> bool>(items: &[String], hit: F) -> Items {
    items
        .iter()
        .take(32)
        .enumerate()
        .filter(|(_, x)| hit(x))
        .fold(0, |b, (i, _)| b | 1 << i)
}

/// All items of a list as a mask.
fn full(len: usize) -> Items {
    if len >= 32 {
        u32::MAX
    } else {
        (1u32 << len) - 1
    }
}

/// The trip's days: (YYYY-MM-DD, MM-DD, ISO weekday) from the task's date.
fn trip_dates(task: &Task, days: u32) -> Vec<(String, String, u8)> {
    let Ok(start) = chrono::NaiveDate::parse_from_str(&task.time, "%Y-%m-%d") else {
        return Vec::new();
    };
    (0..days)
        .filter_map(|i| {
            let d = start.checked_add_days(chrono::Days::new(u64::from(i)))?;
            let d = d.format("%Y-%m-%d").to_string();
            let (mmdd, wd) = date_parts(&d)?;
            Some((d, mmdd, wd))
        })
        .collect()
}

impl<'a> Instance<'a> {
    /// Prepare a task; `Err` with the reason when it cannot be set up (see `setup_error`).
    pub fn new(task: &'a Task, res: &'a Resources, db: &'a PoiDb) -> Result<Self, String> {
        if let Some(e) = setup_error(task, res) {
            return Err(e);
        }
        let members: Vec<Member> = task
            .user_preferences
            .iter()
            .map(|(u, e)| Member {
                name: u,
                pref: &e.preference,
                firm: !e.compromisable,
            })
            .collect();
        let hub = res
            .city_id(&task.metadata.departure_city)
            .ok_or("the departure city is not in the resources")?;
        let days = task.days().ok_or("no trip length")?;
        let dates = trip_dates(task, days);
        if dates.len() != days as usize {
            return Err(format!("the trip from {} runs off the calendar", task.time));
        }
        let mut inst = Instance {
            task,
            res,
            all: ((1u16 << members.len()) - 1) as Mask,
            members,
            hub,
            dest: Vec::new(),
            days,
            dates,
            legs: Vec::new(),
            must_visit: Vec::new(),
            must_eat: Vec::new(),
        };
        for c in &task.metadata.cities {
            let id = res
                .city_id(c)
                .ok_or("a destination is not in the resources")?;
            let d = inst.destination(id, db);
            if d.hotels.is_empty() {
                return Err(format!(
                    "no hotel in {c}: the POI table names none and the resources have no hotel band (price) for the city"
                ));
            }
            inst.dest.push(d);
        }
        let stops: Vec<CityId> = std::iter::once(hub)
            .chain(inst.dest.iter().map(|d| d.id))
            .chain(std::iter::once(hub))
            .collect();
        inst.legs = stops.windows(2).map(|w| inst.leg(w[0], w[1])).collect();
        for m in &inst.members {
            let cps: Vec<Option<&CityPref>> = inst.dest.iter().map(|d| m.city(d.name)).collect();
            inst.must_visit.push(
                cps.iter()
                    .map(|c| full(c.map_or(0, |c| c.attractions.must_visit.len())))
                    .collect(),
            );
            inst.must_eat.push(
                cps.iter()
                    .map(|c| full(c.map_or(0, |c| c.food.must_eat.len())))
                    .collect(),
            );
        }
        Ok(inst)
    }

    pub fn n(&self) -> usize {
        self.members.len()
    }

    /// The members of a mask (those of the group), in task order.
    pub fn members_of(&self, mask: Mask) -> Members {
        Members(mask & self.all)
    }

    /// The names of a mask's members, in task order.
    pub fn names(&self, mask: Mask) -> Vec<&'a str> {
        let members = self.members_of(mask);
        members.map(|i| self.members[i].name).collect()
    }

    /// The members who cannot yield.
    pub fn firm(&self) -> Mask {
        self.members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.firm)
            .fold(0, |a, (i, _)| a | 1 << i)
    }

    /// The members with a transport must list (it holds when one trip uses one of its modes).
    pub fn must_travellers(&self) -> Mask {
        self.members
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.pref.global_constraints.transport.must.is_empty())
            .fold(0, |a, (i, _)| a | 1 << i)
    }

    fn leg(&self, from: CityId, to: CityId) -> Leg {
        let options = self
            .res
            .transport(from, to)
            .iter()
            .map(|o| {
                let mut value = Vec::new();
                let (mut must_hit, mut rejected) = (0, 0);
                for (i, m) in self.members.iter().enumerate() {
                    let t = &m.pref.global_constraints.transport;
                    value.push(rules::total(&rules::transport_terms(
                        &t.must, &t.prefer, &t.avoid, &t.reject, o.mode,
                    )));
                    if t.must.iter().any(|x| x == o.mode) {
                        must_hit |= 1 << i;
                    }
                    if t.reject.iter().any(|x| x == o.mode) {
                        rejected |= 1 << i;
                    }
                }
                LegOption {
                    mode: o.mode,
                    minutes: o.minutes,
                    fare: o.fare,
                    value,
                    must_hit,
                    rejected,
                }
            })
            .collect();
        Leg { from, to, options }
    }

    /// The venues of a destination: the scoring table's, and stand-ins where no store covers
    /// the city, or where the store names no venue of their kind (a store of attractions and
    /// restaurants only, or one whose hotels carry no price: its city sleeps in stand-ins
    /// priced from the hotel bands).
    fn destination(&self, id: CityId, db: &'a PoiDb) -> Destination<'a> {
        let city = self.res.city(id);
        let name = city.name.as_str();
        let mut d = Destination {
            id,
            name,
            centre: (city.lat, city.lng),
            rides: Vec::new(),
            sights: Vec::new(),
            meals: Vec::new(),
            hotels: Vec::new(),
        };
        for poi in db.venues(self.res, name) {
            match poi.kind {
                PoiKind::Attraction => {
                    if let Some(s) = self.sight(id, name, poi, db) {
                        d.sights.push(s);
                    }
                }
                PoiKind::Food => d.meals.push(self.meal(name, poi, db)),
                PoiKind::Hotel => d.hotels.push(self.hotel(name, poi, db)),
            }
        }
        super::shortlist::shortlist(&mut d, self.n());
        let places: Vec<(f64, f64)> = d
            .sights
            .iter()
            .map(|s| s.at)
            .chain(std::iter::once(d.centre))
            .collect();
        d.rides = places
            .iter()
            .flat_map(|&a| {
                places
                    .iter()
                    .map(move |&b| model::ride_minutes(a, b) as u16)
            })
            .collect();
        d
    }

    /// An attraction of the table as a sight, with what it is worth to each member.
    fn sight(&self, id: CityId, city: &str, poi: &'a Poi, db: &'a PoiDb) -> Option<Sight<'a>> {
        let a = &self.res.attractions[id as usize][poi.attraction?];
        // what the scorer resolves the name to (a duplicate name may shadow it)
        let cat = db.category(&poi.name, city)?;
        let hours = db.find(&poi.name, city).and_then(|p| p.hours.as_ref());
        let mut s = Sight {
            name: &poi.name,
            minutes: model::visit_minutes(&a.category),
            at: (a.lat, a.lng),
            open: self.dates.iter().map(|d| windows_on(hours, d)).collect(),
            value: Vec::new(),
            must: Vec::new(),
            reject: Vec::new(),
        };
        for m in &self.members {
            let (v, mu, re) = match m.city(city) {
                Some(cp) => {
                    let at = &cp.attractions;
                    let strong = rules::strong_match(&at.must_visit, &at.reject_visit, &poi.name);
                    let v = if strong {
                        0
                    } else {
                        let (pos, neg) = (&at.category_pref.positive, &at.category_pref.negative);
                        rules::total(&rules::category_terms(pos, neg, &poi.name, cat))
                    };
                    (
                        v,
                        bits(&at.must_visit, |x| poi.name.contains(x)),
                        bits(&at.reject_visit, |x| poi.name.contains(x)),
                    )
                }
                None => (0, 0, 0),
            };
            s.value.push(v);
            s.must.push(mu);
            s.reject.push(re);
        }
        Some(s)
    }

    /// A restaurant (or food stand-in) with its food terms per member, as the scorer reads
    /// them: a location the table does not resolve gets none.
    fn meal(&self, city: &str, poi: &'a Poi, db: &PoiDb) -> Meal<'a> {
        let cat = db.category(&poi.name, city);
        let mut m = Meal {
            location: &poi.name,
            price: poi.price,
            stand_in: poi.stand_in,
            value: Vec::new(),
            must: Vec::new(),
            rejected: 0,
        };
        for (i, member) in self.members.iter().enumerate() {
            let Some(cp) = member.city(city) else {
                m.value.push(0);
                m.must.push(0);
                continue;
            };
            let f = &cp.food;
            let lists = FoodLists {
                must: &f.must_eat,
                reject: &f.reject_eat,
                prefer: &f.prefer_eat,
                avoid: &f.avoid_eat,
            };
            let terms = cat.map_or_else(Vec::new, |c| rules::food_terms(&lists, &poi.name, c));
            m.value.push(rules::total(&terms));
            // kept as the witness contract reads it (`must_eat_kept`)
            m.must
                .push(bits(&f.must_eat, |x| must_eat_kept(&terms, poi, x)));
            if terms.iter().any(|t| t.field == "reject_eat")
                || f.reject_eat.iter().any(|x| poi.name.contains(x.as_str()))
                || stand_in_rejected(&lists, poi, cat)
            {
                m.rejected |= 1 << i;
            }
        }
        m
    }

    /// A hotel (or hotel stand-in), priced per person (two to a room), with its hotel term per
    /// member.
    fn hotel(&self, city: &str, poi: &'a Poi, db: &PoiDb) -> Hotel<'a> {
        let cat = db.category(&poi.name, city);
        let value = self
            .members
            .iter()
            .map(|m| {
                let h = &m.pref.global_constraints.hotel_preference;
                cat.and_then(|c| rules::hotel_term(&h.prefer, &h.avoid, c))
                    .map_or(0, |t| t.score)
            })
            .collect();
        Hotel {
            location: &poi.name,
            price: poi.price.div_ceil(2),
            stand_in: poi.stand_in,
            value,
        }
    }

    /// The member's must_visit / must_eat items of a destination as a full mask.
    pub fn must_visit_all(&self, member: usize, dest: usize) -> Items {
        self.must_visit[member][dest]
    }
    pub fn must_eat_all(&self, member: usize, dest: usize) -> Items {
        self.must_eat[member][dest]
    }

    /// Ride minutes between two places of a destination (`None` = the centre).
    pub fn ride(&self, dest: usize, a: Option<u16>, b: Option<u16>) -> u32 {
        let d = &self.dest[dest];
        let n = d.sights.len() + 1;
        let ix = |p: Option<u16>| p.map_or(n - 1, usize::from);
        u32::from(d.rides[ix(a) * n + ix(b)])
    }

    /// Windows of a sight on a day of the trip, in minutes (`None`: no constraint; empty:
    /// closed).
    pub fn windows<'s>(&self, sight: &'s Sight, day: usize) -> Option<&'s [(u32, u32)]> {
        sight.open.get(day)?.as_deref()
    }

    /// Lunch and dinner are the two meals a plan schedules.
    pub fn meal_kinds() -> [MealKind; 2] {
        [MealKind::Lunch, MealKind::Dinner]
    }
}

/// The opening windows of a day (`(YYYY-MM-DD, MM-DD, weekday)`) in minutes, by the release's
/// rule (`OpeningHours::windows_on`).
fn windows_on(hours: Option<&OpeningHours>, day: &(String, String, u8)) -> Option<Vec<(u32, u32)>> {
    let (_, mmdd, wd) = day;
    let ws = hours?.windows_on(mmdd, *wd)?;
    let minutes = gtb_resources::hours::clock_minutes;
    Some(
        ws.iter()
            .filter_map(|w| Some((minutes(&w.open)?, minutes(&w.close)?)))
            .collect(),
    )
}

/// Whether a stand-in meal breaks a reject_eat item by the category the split's world lists it
/// under (`PoiDb::with_stand_ins`, issue 28's one-world rule): the release's evaluator, given
/// the world's `poi2category`, resolves `朝鲜族冷面（牡丹江市·示意）` to 面馆, so a member who
/// rejects 面馆 must not be fed it, although the table of real venues resolves it to nothing.
fn stand_in_rejected(lists: &FoodLists<String>, poi: &Poi, resolved: Option<&str>) -> bool {
    poi.stand_in
        && resolved.is_none()
        && rules::food_terms(
            lists,
            &poi.name,
            effective_category(&poi.category, poi.kind),
        )
        .iter()
        .any(|t| t.field == "reject_eat")
}
