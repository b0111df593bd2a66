//! One task prepared for the solver: its members, days, legs and, per destination, the
//! candidate sights, meals and hotels with what each is worth to each member under the
//! release's rules (`score::rules`), so that the search adds numbers instead of re-reading
//! preferences.

use super::model::{self, MealKind};
use gtb_core::task::{Preference, Task};
use gtb_resources::hours::OpeningHours;
use gtb_resources::{CityId, Resources};
use gtb_score::resolver::{PoiDb, PoiKind, date_parts};
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

#[derive(Debug, Clone)]
pub struct LegOption {
    pub mode: &'static str,
    pub minutes: u32,
    pub fare: u32,
    /// transport terms per member
    pub value: Vec<i32>,
    /// members whose must list is non-empty and lacks this mode
    pub must_missed: Mask,
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
    pub hours: Option<&'a OpeningHours>,
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
    /// per member: the must_eat items it serves: scored +2 *and* named in the location, so
    /// that the plan shows it without the POI table
    pub must: Vec<Items>,
    /// members for whom it scores a reject_eat item, or whose reject_eat item its name
    /// contains (stricter than the release's first-hit rule, which a must may pre-empt)
    pub rejected: Mask,
}

pub struct Hotel<'a> {
    pub location: &'a str,
    /// per person and night: the band's lower price, two to a room
    pub price: u32,
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
    if task.user_preferences.is_empty() || task.user_preferences.len() > 8 {
        return Some(format!(
            "{} members (the solver handles 1 to 8)",
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

impl<'a> Instance<'a> {
    /// Prepare a task; `None` with the reason when it cannot be set up (see `setup_error`).
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
        let hub = res.city_id(&task.metadata.departure_city).expect("checked");
        let days = task.days().expect("checked");
        let start = chrono::NaiveDate::parse_from_str(&task.time, "%Y-%m-%d").expect("checked");
        let dates = (0..days)
            .map(|i| {
                let d = (start + chrono::Duration::days(i as i64))
                    .format("%Y-%m-%d")
                    .to_string();
                let (mmdd, wd) = date_parts(&d).expect("a formatted date parses");
                (d, mmdd, wd)
            })
            .collect();
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
            let d = inst.destination(res.city_id(c).expect("checked"), db);
            inst.dest.push(d);
        }
        let stops: Vec<CityId> = std::iter::once(hub)
            .chain(inst.dest.iter().map(|d| d.id))
            .chain(std::iter::once(hub))
            .collect();
        inst.legs = stops.windows(2).map(|w| inst.leg(w[0], w[1])).collect();
        let full = |len: usize| {
            if len >= 32 {
                u32::MAX
            } else {
                (1u32 << len) - 1
            }
        };
        for m in &inst.members {
            let cps: Vec<Option<&gtb_core::task::CityPref>> = inst
                .dest
                .iter()
                .map(|d| m.pref.city_specific_preferences.get(d.name))
                .collect();
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

    /// The members of a mask, in task order.
    pub fn names(&self, mask: Mask) -> Vec<&'a str> {
        (0..self.n())
            .filter(|i| mask >> i & 1 == 1)
            .map(|i| self.members[i].name)
            .collect()
    }

    fn leg(&self, from: CityId, to: CityId) -> Leg {
        let options = self
            .res
            .transport(from, to)
            .iter()
            .map(|o| {
                let mut value = Vec::new();
                let (mut must_missed, mut rejected) = (0, 0);
                for (i, m) in self.members.iter().enumerate() {
                    let t = &m.pref.global_constraints.transport;
                    value.push(rules::total(&rules::transport_terms(
                        &t.must, &t.prefer, &t.avoid, &t.reject, o.mode,
                    )));
                    if !t.must.is_empty() && !t.must.iter().any(|x| x == o.mode) {
                        must_missed |= 1 << i;
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
                    must_missed,
                    rejected,
                }
            })
            .collect();
        Leg { from, to, options }
    }

    fn destination(&self, id: CityId, db: &'a PoiDb) -> Destination<'a> {
        let city = self.res.city(id);
        let name = city.name.as_str();
        let prefs: Vec<Option<&gtb_core::task::CityPref>> = self
            .members
            .iter()
            .map(|m| m.pref.city_specific_preferences.get(name))
            .collect();
        let mut d = Destination {
            id,
            name,
            centre: (city.lat, city.lng),
            rides: Vec::new(),
            sights: Vec::new(),
            meals: Vec::new(),
            hotels: Vec::new(),
        };
        for poi in db.city(name) {
            let category = gtb_score::resolver::effective_category(&poi.category, poi.kind);
            match poi.kind {
                PoiKind::Attraction => {
                    let Some(a) = poi
                        .attraction
                        .map(|i| &self.res.attractions[id as usize][i])
                    else {
                        continue;
                    };
                    // what the scorer resolves the name to (a duplicate name may shadow it)
                    let cat = db.category(&poi.name, name).unwrap_or(category);
                    let mut s = Sight {
                        name: &poi.name,
                        minutes: model::visit_minutes(&a.category),
                        at: (a.lat, a.lng),
                        hours: db.find(&poi.name, name).and_then(|p| p.hours.as_ref()),
                        value: Vec::new(),
                        must: Vec::new(),
                        reject: Vec::new(),
                    };
                    for p in &prefs {
                        let (v, mu, re) = match p {
                            Some(cp) => {
                                let at = &cp.attractions;
                                let strong = rules::strong_match(
                                    &at.must_visit,
                                    &at.reject_visit,
                                    &poi.name,
                                );
                                let v = if strong {
                                    0
                                } else {
                                    rules::total(&rules::category_terms(
                                        &at.category_pref.positive,
                                        &at.category_pref.negative,
                                        &poi.name,
                                        cat,
                                    ))
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
                    d.sights.push(s);
                }
                PoiKind::Food => {
                    let cat = db.category(&poi.name, name).unwrap_or(category);
                    let mut m = Meal {
                        location: &poi.name,
                        price: poi.price,
                        stand_in: poi.stand_in,
                        value: Vec::new(),
                        must: Vec::new(),
                        rejected: 0,
                    };
                    for (i, p) in prefs.iter().enumerate() {
                        let Some(cp) = p else {
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
                        let terms = rules::food_terms(&lists, &poi.name, cat);
                        m.value.push(rules::total(&terms));
                        let scored =
                            |x: &str| terms.iter().any(|t| t.field == "must_eat" && t.item == x);
                        m.must
                            .push(bits(&f.must_eat, |x| scored(x) && poi.name.contains(x)));
                        if terms.iter().any(|t| t.field == "reject_eat")
                            || f.reject_eat.iter().any(|x| poi.name.contains(x.as_str()))
                        {
                            m.rejected |= 1 << i;
                        }
                    }
                    d.meals.push(m);
                }
                PoiKind::Hotel => {
                    let cat = db.category(&poi.name, name).unwrap_or(category);
                    let value = self
                        .members
                        .iter()
                        .map(|m| {
                            let h = &m.pref.global_constraints.hotel_preference;
                            rules::hotel_term(&h.prefer, &h.avoid, cat).map_or(0, |t| t.score)
                        })
                        .collect();
                    d.hotels.push(Hotel {
                        location: &poi.name,
                        price: poi.price.div_ceil(2),
                        value,
                    });
                }
            }
        }
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

    /// Windows of a sight on a day (`None`: no constraint; empty: closed).
    pub fn windows<'s>(
        &self,
        sight: &Sight<'s>,
        day: usize,
    ) -> Option<&'s [gtb_resources::hours::TimeWindow]> {
        let (_, mmdd, wd) = &self.dates[day];
        sight.hours?.windows_on(mmdd, *wd)
    }

    /// Lunch and dinner are the two meals a plan schedules.
    pub fn meal_kinds() -> [MealKind; 2] {
        [MealKind::Lunch, MealKind::Dinner]
    }
}
