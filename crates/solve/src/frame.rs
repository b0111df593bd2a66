//! The frame of a plan: how the nights are shared among the destinations and which mode each
//! leg takes. It fixes the intercity trips (times, fares, transport terms) and cuts the days
//! into pieces: stretches of time in one city between a start place (hotel or arrival
//! terminal) and an end place (hotel or departure terminal).

use super::instance::{Instance, Mask};
use super::model::{self, MealKind, up5};

/// Where a piece starts or ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Anchor {
    Hotel,
    /// the terminal of a leg (arrival or departure)
    Terminal(usize),
}

/// Whether a meal belongs in a piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Need {
    /// the piece spans the meal's whole window: the plan has it
    Required,
    /// it may fit
    Optional,
    No,
}

#[derive(Debug, Clone)]
pub struct Piece {
    pub day: usize,
    /// destination index
    pub dest: usize,
    pub start: u32,
    pub start_at: Anchor,
    pub end_at: Anchor,
    /// the latest arrival at the end place (hotel check-in, or the terminal before departure)
    pub end_limit: u32,
    pub lunch: Need,
    pub dinner: Need,
}

impl Piece {
    pub fn need(&self, kind: MealKind) -> Need {
        match kind {
            MealKind::Lunch => self.lunch,
            MealKind::Dinner => self.dinner,
        }
    }
}

/// An intercity trip of the frame.
#[derive(Debug, Clone, Copy)]
pub struct Trip {
    pub leg: usize,
    pub option: usize,
    pub depart: u32,
    pub arrive: u32,
}

/// What happens on a day, in order.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    Trip(usize),
    Piece(usize),
}

#[derive(Debug, Clone)]
pub struct Frame {
    /// which allocation and mode combination of the solver's lists it is
    pub alloc: usize,
    pub combo: usize,
    /// nights per destination
    pub nights: Vec<u32>,
    pub trips: Vec<Trip>,
    pub pieces: Vec<Piece>,
    pub days: Vec<Vec<Step>>,
    /// the destination where each night is spent
    pub night_dest: Vec<usize>,
    /// per member: transport terms, fares
    pub transport_value: Vec<i32>,
    pub fare: u32,
    /// members with a transport must list that no leg uses (the must holds when at least
    /// one intercity trip is by one of its modes)
    pub must_unmet: Mask,
    /// per member: legs by a mode they reject
    pub rejected: Vec<u32>,
}

/// Whether a leg's option fits into its travel day (`model::fits_travel_day`).
pub fn leg_fits(inst: &Instance, leg: usize, option: usize) -> bool {
    let o = &inst.legs[leg].options[option];
    model::fits_travel_day(o.mode, o.minutes, model::LegPlace::of(leg, inst.legs.len()))
}

/// Every way to share `nights` among `n` destinations with at least one each.
pub fn allocations(nights: u32, n: usize) -> Vec<Vec<u32>> {
    if n == 1 {
        return if nights >= 1 {
            vec![vec![nights]]
        } else {
            vec![]
        };
    }
    let mut out = Vec::new();
    for first in 1..=nights.saturating_sub(n as u32 - 1) {
        for mut rest in allocations(nights - first, n - 1) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

fn meal_need(start: u32, end: u32, kind: MealKind) -> Need {
    let (earliest, latest, dur) = kind.window();
    if start <= earliest && end >= latest + dur + 30 {
        Need::Required
    } else if start <= latest && end >= earliest + dur {
        Need::Optional
    } else {
        Need::No
    }
}

/// Where the walk through the days stands: the day, the destination, and when and where the
/// next piece starts.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    day: usize,
    dest: usize,
    start: u32,
    start_at: Anchor,
}

/// The outbound trip's departure: the first departure when it arrives in time, else the
/// latest one that does (on the 5-minute grid, not before the earliest departure); `None`
/// when even that arrives too late.
fn outbound_departure(minutes: u32) -> Option<u32> {
    let depart = if model::FIRST_DEPARTURE + minutes <= model::LATEST_ARRIVAL {
        model::FIRST_DEPARTURE
    } else {
        model::LATEST_ARRIVAL
            .checked_sub(minutes)?
            .max(model::EARLIEST_DEPARTURE)
            / 5
            * 5
    };
    (depart + minutes <= model::LATEST_ARRIVAL).then_some(depart)
}

impl Frame {
    /// The frame of an allocation and one option per leg; `None` when a trip does not fit
    /// into its travel day.
    pub fn new(inst: &Instance, nights: &[u32], options: &[usize]) -> Option<Frame> {
        let days = inst.days as usize;
        let last = days - 1;
        let mut f = Frame::empty(inst, nights);
        f.add_transport(inst, options);
        let m0 = inst.legs[0].options[options[0]].minutes;
        let depart = outbound_departure(m0)?;
        f.add_trip(0, 0, options[0], depart, m0);
        let mut at = Cursor {
            day: 0,
            dest: 0,
            start: depart + m0,
            start_at: Anchor::Terminal(0),
        };
        for day in 0..days {
            at.day = day;
            if day > 0 {
                at.start_at = Anchor::Hotel;
                at.start = model::DAY_START;
            }
            // a move to the next destination this morning?
            let moves = day > 0 && day < last && f.night_dest[day] != f.night_dest[day - 1];
            if moves {
                f.add_move(inst, options, &mut at)?;
            }
            if day < last {
                f.add_piece(Piece {
                    day,
                    dest: at.dest,
                    start: at.start,
                    start_at: at.start_at,
                    end_at: Anchor::Hotel,
                    end_limit: model::HOTEL_CHECKIN_LATEST,
                    lunch: meal_need(at.start, model::HOTEL_CHECKIN_LATEST, MealKind::Lunch),
                    dinner: meal_need(at.start, model::HOTEL_CHECKIN_LATEST, MealKind::Dinner),
                });
            } else {
                f.add_return(inst, options, &at)?;
            }
        }
        Some(f)
    }

    /// A frame with its nights placed and no trips, pieces or transport terms yet.
    fn empty(inst: &Instance, nights: &[u32]) -> Frame {
        let n = inst.n();
        let mut f = Frame {
            alloc: 0,
            combo: 0,
            nights: nights.to_vec(),
            trips: Vec::new(),
            pieces: Vec::new(),
            days: vec![Vec::new(); inst.days as usize],
            night_dest: Vec::new(),
            transport_value: vec![0; n],
            fare: 0,
            must_unmet: 0,
            rejected: vec![0; n],
        };
        for (d, &k) in nights.iter().enumerate() {
            f.night_dest.extend(std::iter::repeat_n(d, k as usize));
        }
        f
    }

    /// Sum the chosen options' fares and members' transport terms, and note the legs each
    /// member rejects and the must lists no leg meets.
    fn add_transport(&mut self, inst: &Instance, options: &[usize]) {
        let mut must_hit: Mask = 0;
        for (leg, &o) in options.iter().enumerate() {
            let opt = &inst.legs[leg].options[o];
            self.fare += opt.fare;
            must_hit |= opt.must_hit;
            for i in 0..inst.n() {
                self.transport_value[i] += opt.value[i];
                if opt.rejected >> i & 1 == 1 {
                    self.rejected[i] |= 1 << leg;
                }
            }
        }
        self.must_unmet = inst.must_travellers() & !must_hit;
    }

    /// A morning move to the next destination: the stretch from the hotel to the terminal,
    /// then the trip; the cursor moves to the arrival. `None` when the trip arrives too late.
    fn add_move(&mut self, inst: &Instance, options: &[usize], at: &mut Cursor) -> Option<()> {
        let leg = at.dest + 1;
        let opt = &inst.legs[leg].options[options[leg]];
        let (acc, buffer) = model::access(opt.mode);
        let depart = up5(model::TRAVEL_DAY_START + acc + buffer);
        if depart + opt.minutes > model::LATEST_ARRIVAL {
            return None;
        }
        self.add_piece(Piece {
            day: at.day,
            dest: at.dest,
            start: model::TRAVEL_DAY_START,
            start_at: Anchor::Hotel,
            end_at: Anchor::Terminal(leg),
            end_limit: depart - buffer,
            lunch: Need::No,
            dinner: Need::No,
        });
        self.add_trip(at.day, leg, options[leg], depart, opt.minutes);
        at.dest += 1;
        at.start = depart + opt.minutes;
        at.start_at = Anchor::Terminal(leg);
        Some(())
    }

    /// The last day: the stretch up to the home terminal, then the trip back. `None` when the
    /// return leaves no time to reach the terminal.
    fn add_return(&mut self, inst: &Instance, options: &[usize], at: &Cursor) -> Option<()> {
        let leg = inst.legs.len() - 1;
        let opt = &inst.legs[leg].options[options[leg]];
        let m = opt.minutes;
        let (acc, buffer) = model::access(opt.mode);
        let depart =
            model::LAST_DEPARTURE.min(model::RETURN_ARRIVAL_LATEST.checked_sub(m)?) / 5 * 5;
        let end_limit = depart.checked_sub(buffer)?;
        if end_limit < at.start + acc {
            return None;
        }
        self.add_piece(Piece {
            day: at.day,
            dest: at.dest,
            start: at.start,
            start_at: at.start_at,
            end_at: Anchor::Terminal(leg),
            end_limit,
            lunch: meal_need(at.start, end_limit, MealKind::Lunch),
            dinner: meal_need(at.start, end_limit, MealKind::Dinner),
        });
        self.add_trip(at.day, leg, options[leg], depart, m);
        Some(())
    }

    fn add_trip(&mut self, day: usize, leg: usize, option: usize, depart: u32, minutes: u32) {
        self.days[day].push(Step::Trip(self.trips.len()));
        self.trips.push(Trip {
            leg,
            option,
            depart,
            arrive: depart + minutes,
        });
    }

    fn add_piece(&mut self, p: Piece) {
        self.days[p.day].push(Step::Piece(self.pieces.len()));
        self.pieces.push(p);
    }

    /// The mode of a leg in this frame.
    pub fn mode(&self, inst: &Instance, leg: usize) -> &'static str {
        let t = self
            .trips
            .iter()
            .find(|t| t.leg == leg)
            .expect("every leg has a trip");
        inst.legs[leg].options[t.option].mode
    }

    /// Whether any leg is driven (transfers are then by car too).
    pub fn driving(&self, inst: &Instance) -> bool {
        self.trips
            .iter()
            .any(|t| inst.legs[t.leg].options[t.option].mode == "自驾")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_cover_every_split() {
        assert_eq!(allocations(4, 2), vec![vec![1, 3], vec![2, 2], vec![3, 1]]);
        assert_eq!(allocations(6, 3).len(), 10);
        assert_eq!(allocations(1, 1), vec![vec![1]]);
        assert!(allocations(1, 2).is_empty());
    }

    #[test]
    fn meal_needs() {
        assert_eq!(meal_need(8 * 60, 22 * 60, MealKind::Lunch), Need::Required);
        assert_eq!(meal_need(12 * 60, 22 * 60, MealKind::Lunch), Need::Optional);
        assert_eq!(meal_need(15 * 60, 22 * 60, MealKind::Lunch), Need::No);
    }
}
