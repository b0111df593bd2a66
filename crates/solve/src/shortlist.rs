//! The cut of a destination's inventory (a store lists hundreds of venues per city) to the
//! venues a plan could want: every sight someone must see and the ones liked most, per member
//! the best meals and hotels, the cheapest servers of each must_eat item, and the cheapest
//! meals and hotels nobody minds.

use super::instance::{Destination, Items, Sight};

/// Sights kept beyond those someone must see: the ones liked most.
const LIKED_SIGHTS: usize = 40;
/// Meals and hotels kept per member (best first), serving each must_eat item, and cheapest.
const BEST_PER_MEMBER: usize = 3;
const SERVERS_PER_ITEM: usize = 3;
const CHEAPEST: usize = 4;

/// The indices to keep, in table order.
fn keep<T>(items: &mut Vec<T>, keep: &[usize]) {
    let mut k: Vec<usize> = keep.to_vec();
    k.sort_unstable();
    k.dedup();
    let mut i = 0;
    items.retain(|_| {
        let kept = k.binary_search(&i).is_ok();
        i += 1;
        kept
    });
}

/// Indices of `0..n` sorted by `key` (then index), the first `k`: each key computed once, and
/// the first `k` selected before they are sorted (a store's city has thousands of venues).
fn best_by<K: Ord>(n: usize, k: usize, key: impl Fn(usize) -> K) -> Vec<usize> {
    let mut ix: Vec<(K, usize)> = (0..n).map(|i| (key(i), i)).collect();
    if k < ix.len() {
        ix.select_nth_unstable(k);
        ix.truncate(k);
    }
    ix.sort_unstable();
    ix.into_iter().map(|(_, i)| i).collect()
}

/// Cut a destination's venues to those a plan could want (see the module's comment) for a
/// group of `n`; every figure the search and the upper bound read (best value per member,
/// cheapest price, every must) survives the cut.
pub(crate) fn shortlist(d: &mut Destination, n: usize) {
    let liked = |s: &Sight| s.value.iter().filter(|&&v| v > 0).sum::<i32>();
    let sights: Vec<usize> = (0..d.sights.len())
        .filter(|&s| d.sights[s].must.iter().any(|&b| b != 0))
        .chain(
            best_by(d.sights.len(), LIKED_SIGHTS, |s| {
                std::cmp::Reverse(liked(&d.sights[s]))
            })
            .into_iter()
            .filter(|&s| liked(&d.sights[s]) > 0),
        )
        .collect();
    keep(&mut d.sights, &sights);
    let n_meals = d.meals.len();
    // the cheapest meals nobody minds first
    let mut meals: Vec<usize> = best_by(n_meals, CHEAPEST, |m| {
        let x = &d.meals[m];
        (x.rejected != 0 || x.value.iter().any(|&v| v < 0), x.price)
    });
    for i in 0..n {
        meals.extend(best_by(n_meals, BEST_PER_MEMBER, |m| {
            (std::cmp::Reverse(d.meals[m].value[i]), d.meals[m].price)
        }));
        let served = d.meals.iter().fold(0, |a: Items, m| a | m.must[i]);
        for item in (0..32).filter(|k| served >> k & 1 == 1) {
            let serves = |m: usize| d.meals[m].must[i] >> item & 1 == 1;
            let servers = best_by(n_meals, SERVERS_PER_ITEM, |m| {
                (!serves(m), d.meals[m].rejected >> i & 1, d.meals[m].price)
            });
            meals.extend(servers.into_iter().filter(|&m| serves(m)));
        }
    }
    keep(&mut d.meals, &meals);
    let n_hotels = d.hotels.len();
    let mut hotels: Vec<usize> = best_by(n_hotels, CHEAPEST, |h| d.hotels[h].price);
    hotels.extend(best_by(n_hotels, CHEAPEST, |h| {
        let x = &d.hotels[h];
        (std::cmp::Reverse(x.value.iter().sum::<i32>()), x.price)
    }));
    for i in 0..n {
        hotels.extend(best_by(n_hotels, BEST_PER_MEMBER, |h| {
            (std::cmp::Reverse(d.hotels[h].value[i]), d.hotels[h].price)
        }));
    }
    keep(&mut d.hotels, &hotels);
}
