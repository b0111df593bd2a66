//! The cheapest trip of a task per person, for the members who cannot yield: what a firm
//! member's budget must cover. The offline generator lifts such budgets to it (`fit_budgets`);
//! the LLM generator asks a member again whose budget or transport rejections break it. Both
//! use this one rule, which covers the witness search's budget proof (`gtb_solve::proof`):
//! the cheapest fares over options usable within a travel day and rejected by no firm member,
//! meeting every firm member's must list, and a stay (hotel nights and meals) priced by the
//! caller's rule.

use super::TaskContext;
use gtb_core::task::GlobalConstraints;
use gtb_plan::day::{LegPlace, fits_travel_day};
use gtb_resources::CityId;

/// A task's route priced once: each leg's options usable within a travel day, and the stay.
#[derive(Debug, Clone, Default)]
pub struct TripFloor {
    /// per leg (the outbound, between destinations, the return): (mode, fare, changes of
    /// train) of each option
    legs: Vec<Vec<(&'static str, u32, u32)>>,
    /// hotel nights and meals per person
    stay: u32,
}

impl TripFloor {
    /// The route priced with `stay` per person for the hotel nights and meals (the offline
    /// generator's is `offline_stay`; the LLM generator's the validator's `stay_floor`).
    pub fn new(ctx: &TaskContext, stay: u32) -> TripFloor {
        let res = ctx.res;
        let route = res.route_legs(ctx.hub, &ctx.cities);
        let n = route.len();
        let legs = route
            .iter()
            .enumerate()
            .map(|(l, &(a, b))| {
                res.transport(a, b)
                    .iter()
                    .filter(|o| fits_travel_day(o.mode, o.minutes, LegPlace::of(l, n)))
                    .map(|o| (o.mode, o.fare, o.transfers))
                    .collect()
            })
            .collect();
        TripFloor { legs, stay }
    }

    /// The offline generator's stay: the cheapest room of each night shared by two (every
    /// destination one night, the spare ones in the cheapest) and two of the cheapest meal a day.
    pub fn offline_stay(ctx: &TaskContext) -> u32 {
        let res = ctx.res;
        let night = |c: CityId| {
            let bands = res.hotels[c as usize].iter().map(|h| h.price_low);
            let named = res.named_hotels[c as usize].iter().map(|h| h.price);
            bands.chain(named).min().unwrap_or(0).div_ceil(2)
        };
        let nights: Vec<u32> = ctx.cities.iter().map(|&c| night(c)).collect();
        let spare = (ctx.skeleton.days - 1).saturating_sub(nights.len() as u32);
        let hotel = nights.iter().sum::<u32>() + spare * nights.iter().copied().min().unwrap_or(0);
        let meal = ctx
            .cities
            .iter()
            .filter_map(|&c| res.food[c as usize].iter().map(|f| f.price).min())
            .min()
            .unwrap_or(0);
        hotel + 2 * ctx.skeleton.days * meal
    }

    /// The cheapest trip per person under the hard transport wishes of `firm` (the global
    /// constraints of the members who cannot yield); None when no choice of modes meets them.
    pub fn cost<'a>(&self, firm: impl IntoIterator<Item = &'a GlobalConstraints>) -> Option<u32> {
        let firm: Vec<&GlobalConstraints> = firm.into_iter().collect();
        let rejected = |m: &str| {
            firm.iter()
                .any(|g| g.transport.reject.iter().any(|r| r == m))
        };
        let musts: Vec<&[String]> = firm
            .iter()
            .filter(|g| !g.transport.must.is_empty())
            .map(|g| g.transport.must.as_slice())
            .collect();
        let all = (1u64 << musts.len()) - 1;
        let legs = self.legs.iter().map(|options| {
            options
                .iter()
                .filter(|(m, ..)| !rejected(m))
                .map(|&(m, fare, _)| (m, fare))
        });
        let fares = gtb_resources::fares_by_musts(legs, &musts);
        Some(fares.get(&all)? + self.stay)
    }

    /// The stay the trip was priced with (hotel nights and meals per person).
    pub fn stay(&self) -> u32 {
        self.stay
    }

    /// Whether some leg has an option of `mode` with at most `max_transfers` changes within its
    /// travel day (the validator's `reachability`: a firm member who wants a mode no leg serves
    /// is made compromisable).
    pub fn serves(&self, mode: &str, max_transfers: u32) -> bool {
        self.legs
            .iter()
            .flatten()
            .any(|&(m, _, t)| m == mode && t <= max_transfers)
    }
}
