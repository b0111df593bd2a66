//! The physical track of one rail mode (every line's consecutive stops as hops), searched for
//! the fastest path of a through service, and the min-heap entry the journeys' search shares.

use super::{Hop, Line, Network, RailMode, hop_on};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The physical track of one mode, for the paths of through services.
pub(super) struct Graph {
    adj: Vec<Vec<(usize, Hop)>>,
}

impl Graph {
    pub(super) fn new(net: &Network, lines: &[&Line], mode: RailMode) -> Graph {
        let mut adj = vec![Vec::new(); net.nodes.len()];
        for l in lines {
            for (w, km) in l.stops.windows(2).zip(net.hop_km(l)) {
                let h = hop_on(l, km, mode);
                adj[w[0]].push((w[1], h));
                adj[w[1]].push((w[0], h));
            }
        }
        Graph { adj }
    }

    /// The fastest track from `a` to `b` as one non-stop hop.
    pub(super) fn fastest(&self, a: usize, b: usize) -> Option<Hop> {
        let mut best: Vec<Option<Hop>> = vec![None; self.adj.len()];
        let mut heap = BinaryHeap::new();
        best[a] = Some(Hop::default());
        heap.push(Entry(0.0, a));
        while let Some(Entry(c, s)) = heap.pop() {
            if s == b {
                return best[b];
            }
            if best[s].is_some_and(|h| c > h.minutes) {
                continue;
            }
            let here = best[s].expect("reached");
            for &(t, h) in &self.adj[s] {
                let mut next = here;
                next += h;
                if best[t].is_none_or(|x| next.minutes < x.minutes) {
                    best[t] = Some(next);
                    heap.push(Entry(next.minutes, t));
                }
            }
        }
        None
    }
}

/// A min-heap entry (cost, state); costs are finite.
#[derive(PartialEq)]
pub(super) struct Entry(pub(super) f64, pub(super) usize);

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then_with(|| o.1.cmp(&self.1))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
