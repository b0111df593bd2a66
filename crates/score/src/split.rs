//! The release's split penalty (`_calculate_split_penalty`): within a city block, activities
//! whose times overlap form a slot, and a slot of K pairwise disjoint teams costs K − 1. The
//! solver's simulation asks [`split_penalty`] of every piece it runs; the scorer asks it of a
//! plan's blocks ([`plan_split_penalty`]).

use super::pyval::{self, get, has, list, text, truthy};
use serde_json::Value;
use std::collections::BTreeSet;

/// `_calculate_split_penalty`, over (start, end, team) triples of one city block's splittable
/// activities with explicit participants. Activities overlapping transitively form a slot;
/// a slot whose distinct teams are pairwise disjoint costs (teams − 1).
pub fn split_penalty<T: Ord + Clone>(
    acts: &[(u32, u32, T)],
    disjoint: impl Fn(&T, &T) -> bool,
) -> i64 {
    sweep(acts, |slot| {
        slot_penalty(|x| &acts[index(slot[x])].2, slot.len(), &disjoint)
    })
}

/// `split_penalty` of teams written as bit masks of members (the solver's), whose slots
/// are costed without comparing pairs: distinct masks are pairwise disjoint exactly when
/// their members add up to those of their union.
pub fn mask_split_penalty(acts: &[(u32, u32, u8)]) -> i64 {
    sweep(acts, |slot| {
        let mut seen = [0u64; 4];
        let (mut distinct, mut union, mut members) = (0, 0u8, 0);
        for &key in slot {
            let m = acts[index(key)].2;
            let (word, bit) = (usize::from(m / 64), 1u64 << (m % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                distinct += 1;
                union |= m;
                members += m.count_ones();
            }
        }
        match distinct > 1 && union.count_ones() == members {
            true => distinct - 1,
            false => 0,
        }
    })
}

/// The slots of `acts` (the connected components of the overlap graph), each as the keys
/// (`key`: start, then index) of its intervals in order of start, costed by `cost` and summed.
///
/// The release grows each slot by repeated scans; here the intervals are swept in order of
/// their start, which finds the same slots in O(n log n): sorted by start, an interval
/// overlaps the slot so far exactly when it starts before the slot's latest end. Intervals
/// that start together always share a slot (each one is non-empty), so their order among
/// themselves does not matter. An empty or reversed interval overlaps nothing.
fn sweep<T>(acts: &[(u32, u32, T)], cost: impl Fn(&[u64]) -> i64) -> i64 {
    // the keys of the forward intervals, on the stack for the usual handful
    const ON_STACK: usize = 128;
    let forward = acts.iter().enumerate().filter(|(_, a)| a.1 > a.0);
    let mut stack = [0; ON_STACK];
    let mut heap = Vec::new();
    let order: &mut [u64] = if acts.len() <= ON_STACK {
        let mut n = 0;
        for (i, a) in forward {
            stack[n] = key(a.0, i);
            n += 1;
        }
        &mut stack[..n]
    } else {
        heap.extend(forward.map(|(i, a)| key(a.0, i)));
        &mut heap
    };
    if order.len() < 2 {
        return 0;
    }
    sort_keys(order);
    let mut penalty = 0;
    let mut k = 0;
    while k < order.len() {
        let mut end = acts[index(order[k])].1;
        let mut j = k + 1;
        while j < order.len() && ((order[j] >> 32) as u32) < end {
            end = end.max(acts[index(order[j])].1);
            j += 1;
        }
        if j - k > 1 {
            penalty += cost(&order[k..j]);
        }
        k = j;
    }
    penalty
}

/// Sort distinct keys. A block's activities come nearly in order of start (listed by time,
/// the teams of a slot side by side), so a short list is sorted by insertion, about one
/// comparison a key when already in order; a long one by `sort_unstable`.
fn sort_keys(keys: &mut [u64]) {
    const SHORT: usize = 64;
    if keys.len() > SHORT {
        keys.sort_unstable();
        return;
    }
    for i in 1..keys.len() {
        let k = keys[i];
        let mut j = i;
        while j > 0 && keys[j - 1] > k {
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = k;
    }
}

/// An interval's sort key: its start, then its index in the block (one word, so that the
/// sort compares once; a block of 2^32 activities could not be held in memory).
fn key(start: u32, i: usize) -> u64 {
    (u64::from(start) << 32) | (i as u64 & u64::from(u32::MAX))
}

/// The index in the block of an interval's key.
fn index(key: u64) -> usize {
    (key & u64::from(u32::MAX)) as usize
}

/// One slot's cost (the teams `team(0..len)`): (distinct teams − 1) when there are several
/// and they are pairwise disjoint, else 0. Each pair of distinct teams is tested in sorted
/// order, as over the sorted, deduplicated list (a slot holds a handful: no list is built).
fn slot_penalty<'t, T: Ord + 't>(
    team: impl Fn(usize) -> &'t T,
    len: usize,
    disjoint: impl Fn(&T, &T) -> bool,
) -> i64 {
    let distinct = (0..len)
        .filter(|&x| (0..x).all(|y| team(y) != team(x)))
        .count() as i64;
    if distinct < 2 {
        return 0;
    }
    for x in 0..len {
        for y in x + 1..len {
            let (a, b) = (team(x), team(y));
            let apart = match a.cmp(b) {
                std::cmp::Ordering::Equal => true,
                std::cmp::Ordering::Less => disjoint(a, b),
                std::cmp::Ordering::Greater => disjoint(b, a),
            };
            if !apart {
                return 0;
            }
        }
    }
    distinct - 1
}

pub(crate) fn plan_split_penalty(plan: &Value) -> i64 {
    let mut total = 0;
    for day in list(plan, "days") {
        for seg in list(day, "city_segments") {
            if !has(seg, "activities") {
                continue;
            }
            let mut acts: Vec<(u32, u32, BTreeSet<String>)> = Vec::new();
            let mut unparsed = 0u32;
            for a in list(seg, "activities") {
                if !matches!(
                    text(a, "type"),
                    "attraction" | "food" | "rest" | "intracity_transport"
                ) {
                    continue;
                }
                let p = get(a, "participants");
                let all = p
                    .and_then(Value::as_array)
                    .is_some_and(|l| l.len() == 1 && l[0].as_str() == Some(gtb_plan::ALL));
                if !truthy(p) || all {
                    continue;
                }
                let team: BTreeSet<String> = match p.expect("truthy") {
                    Value::Array(l) => l
                        .iter()
                        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                        .collect(),
                    Value::String(s) => s.chars().map(String::from).collect(),
                    other => BTreeSet::from([other.to_string()]),
                };
                // unparseable times never overlap: give them an empty range of their own
                let (s, e) = match (
                    pyval::parse_time(get(a, "start_time")),
                    pyval::parse_time(get(a, "end_time")),
                ) {
                    (Some(s), Some(e)) => (s, e),
                    _ => {
                        unparsed += 1;
                        (unparsed, unparsed)
                    }
                };
                acts.push((s, e, team));
            }
            total += split_penalty(&acts, |a, b| a.is_disjoint(b));
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_slots() {
        let d = |a: &u8, b: &u8| a & b == 0;
        // two teams in one slot, their transfers chained in: one split
        let acts = [(600, 620, 1u8), (620, 740, 1), (600, 630, 2), (630, 720, 2)];
        assert_eq!(split_penalty(&acts, d), 1);
        // two separate slots
        let acts = [(600, 700, 1u8), (600, 700, 2), (800, 900, 1), (800, 900, 2)];
        assert_eq!(split_penalty(&acts, d), 2);
        // overlapping teams are not a split
        let acts = [(600, 700, 3u8), (600, 700, 2)];
        assert_eq!(split_penalty(&acts, d), 0);
        // three teams: 2
        let acts = [(600, 700, 1u8), (600, 700, 2), (650, 720, 4)];
        assert_eq!(split_penalty(&acts, d), 2);
    }

    #[test]
    fn sort_keys_sorts_short_and_long_lists() {
        let mut x: u64 = 99;
        for len in [0, 1, 2, 5, 17, 64, 65, 200] {
            let mut keys: Vec<u64> = (0..len)
                .map(|i| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    key((x >> 40) as u32 % 50, i)
                })
                .collect();
            let mut want = keys.clone();
            want.sort_unstable();
            sort_keys(&mut keys);
            assert_eq!(keys, want, "{len} keys");
        }
    }

    /// A slot's cost as the release states it: distinct teams sorted and deduplicated, then
    /// every pair disjoint.
    fn slot_penalty_by_list(teams: &[u8]) -> i64 {
        let mut t = teams.to_vec();
        t.sort();
        t.dedup();
        let disjoint = (0..t.len()).all(|x| (x + 1..t.len()).all(|y| t[x] & t[y] == 0));
        if t.len() > 1 && disjoint {
            t.len() as i64 - 1
        } else {
            0
        }
    }

    #[test]
    fn slot_penalty_without_a_list_matches_the_sorted_deduplicated_one() {
        // every multiset of up to five teams over four members, in a fixed pseudo-random order
        let mut x: u32 = 12345;
        for _ in 0..20_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let n = (x >> 16) as usize % 6;
            let teams: Vec<u8> = (0..n).map(|k| ((x >> (k * 4)) & 0xF) as u8).collect();
            let got = slot_penalty(|x| &teams[x], n, |a: &u8, b: &u8| a & b == 0);
            assert_eq!(got, slot_penalty_by_list(&teams), "teams {teams:?}");
            // the same teams in one slot, as masks
            let acts: Vec<(u32, u32, u8)> = teams.iter().map(|&t| (600, 700, t)).collect();
            let by_masks = mask_split_penalty(&acts);
            assert_eq!(by_masks, slot_penalty_by_list(&teams), "teams {teams:?}");
        }
    }
}
