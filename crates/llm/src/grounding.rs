//! The grounding of a task as prompts and reply checks share it: its planned members, and per
//! city the candidates a reply may name (attractions, categories, food values, the values a
//! member who cannot yield may ask to eat), with the lowest budget of the trip.

use gtb_generate::TaskContext;
use gtb_generate::trip::TripFloor;
use gtb_resources::{CityId, Strategy};
use gtb_validate::names::CityNames;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One planned member as the prompt and the parser see it.
#[derive(Debug, Clone)]
pub struct Member {
    pub user: String,
    pub strategy: Strategy,
    pub reference: Option<String>,
    /// cannot yield (not in the task's compromise pattern): the witness plan must serve every
    /// must_eat of it, so it is offered only the food values some venue of the city serves
    pub firm: bool,
}

/// Grounding of one city: what a reply may name there.
#[derive(Debug, Clone, Default)]
pub struct CityCandidates {
    pub name: String,
    /// offered attraction names (open during the trip, most popular first)
    pub offered: Vec<String>,
    /// every attraction of the city: name -> open during the trip
    pub inventory: HashMap<String, bool>,
    /// attraction categories present in the city (excluded ones dropped)
    pub categories: Vec<String>,
    /// food values offered: categories of the city's entries and its local dishes
    pub food: Vec<String>,
    /// the food values (of `food_enum`) that some venue of the city serves as the witness
    /// contract reads it (`gtb_score::resolver::PoiDb::serves_must_eat`): a firm member's
    /// must_eat choices
    pub firm_food: Vec<String>,
    /// the city's food rows: what a reply's food values are checked against (`validate::food`)
    pub foods: Vec<gtb_resources::Food>,
    /// the city's attraction names and aliases, to resolve other spellings of a candidate
    pub names: CityNames,
    /// attraction name -> the scenic areas it lies in (a reject of one covers it)
    pub areas: HashMap<String, Vec<String>>,
}

impl CityCandidates {
    /// Every food value a reply may name in the city (`validate::food`'s rule): the offered
    /// values, then the categories found everywhere.
    pub fn food_enum(&self) -> Vec<String> {
        let mut out = self.food.clone();
        for v in gtb_resources::vocab::FOOD_ANYWHERE {
            if !out.iter().any(|x| x == v) {
                out.push(v.to_string());
            }
        }
        out
    }
    /// The inventory attraction a reply's name stands for, and whether it is open during the
    /// trip: the name itself, or another spelling or name of it (the validator's resolver:
    /// normalised form, alias table, official long form).
    pub fn attraction(&self, name: &str) -> Option<(String, bool)> {
        if let Some((k, open)) = self.inventory.get_key_value(name) {
            return Some((k.clone(), *open));
        }
        let m = self.names.resolve(name)?;
        let (k, _) = m.resolved()?;
        self.inventory
            .get_key_value(k)
            .map(|(k, open)| (k.clone(), *open))
    }
    /// Whether rejecting `area` rejects `spot` too: the same place, or an area it lies in.
    pub fn covers(&self, area: &str, spot: &str) -> bool {
        area == spot
            || self
                .areas
                .get(spot)
                .is_some_and(|a| a.iter().any(|x| x == area))
    }
}

/// The grounding of one city for one set of open attractions, shared by every task that
/// visits it then: candidates, their context JSON and their schema definitions, built once.
pub struct CityData {
    pub id: CityId,
    pub cand: CityCandidates,
    /// the city's entry of `city_candidates`
    pub json: Box<RawValue>,
    /// the city's `$defs` members (`"poi<id>":{…},…`), serialised
    pub defs: String,
    /// what its opening lines are read with (`gtb_validate::lines`)
    pub terms: gtb_validate::lines::Terms,
}

impl std::ops::Deref for CityData {
    type Target = CityCandidates;
    fn deref(&self) -> &CityCandidates {
        &self.cand
    }
}

/// Per-(city, open attractions) grounding, reused across tasks and batches.
pub type Memo = Mutex<HashMap<(CityId, [u8; 16]), Arc<CityData>>>;

/// The task's trip priced by the validator's certificate: the cheapest fares that fit a
/// travel day, the cheapest room of each night shared by two and `min_meal_cost` a day
/// (`gtb_validate::stay_floor`). The firm members' trip gate uses it.
pub fn trip_floor(ctx: &TaskContext, min_meal_cost: u32) -> TripFloor {
    let (hotel, meals) =
        gtb_validate::stay_floor(ctx.res, &ctx.cities, ctx.skeleton.days, min_meal_cost);
    TripFloor::new(ctx, hotel + meals)
}

/// The lowest budget every member needs, rounded up to 100: the validator's certificate (the
/// cheapest fare of every leg, the stay) and the trip when no one rejects a mode, whichever is
/// more (a leg whose cheapest fare takes longer than a travel day costs more in the trip).
pub fn min_budget(ctx: &TaskContext, trip: &TripFloor) -> u32 {
    let res = ctx.res;
    let legs = res.route_legs(ctx.hub, &ctx.cities);
    let fares: u32 = legs
        .iter()
        .map(|&(a, b)| res.cheapest_fare(a, b, None).unwrap_or(0))
        .sum();
    let certificate = fares + trip.stay();
    let need = certificate.max(trip.cost([]).unwrap_or(0));
    need.div_ceil(100) * 100
}
