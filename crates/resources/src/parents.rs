//! Sub-spots and their scenic areas: the `parent` column of the attraction tables.
//!
//! A sub-spot (华山西峰, 五花海, 日升昌票号) names the scenic area it lies inside (华山, 九寨沟,
//! 平遥古城). The links give three rules the rest of gtb relies on:
//! * a ticket is counted once: entering a sub-spot means entering its area, so a visit costs
//!   the area's ticket (once, however many of its parts are visited) plus each part's own extra
//!   fee ([`entry_cost`]);
//! * a parent and its child are one place for preferences: the generator never asks for both,
//!   and a reject of an area covers its parts ([`related`], [`covers`]);
//! * the LLM prompt lists parts under their area.

use super::Attraction;
use super::table::InputError;
use std::collections::HashMap;
use std::path::PathBuf;

/// Where a `parent` value was read, to report a bad one by file, line and field.
#[derive(Debug, Clone)]
pub struct ParentRef {
    pub file: PathBuf,
    pub line: u64,
    pub name: String,
}

impl ParentRef {
    fn err(&self, message: String) -> InputError {
        InputError {
            file: self.file.clone(),
            line: self.line,
            field: "parent".into(),
            message,
        }
    }
}

/// Set `parent` of every attraction of one city from the names read with it (`refs[i]` belongs
/// to `list[i]`). Unknown names, self-links and cycles are errors naming the row.
pub fn link(
    city: &str,
    list: &mut [Attraction],
    refs: &[Option<ParentRef>],
) -> Result<(), InputError> {
    let index: HashMap<&str, u32> = list
        .iter()
        .enumerate()
        .map(|(i, a)| (a.name.as_str(), i as u32))
        .collect();
    let mut parents: Vec<Option<u32>> = vec![None; list.len()];
    for (i, r) in refs.iter().enumerate() {
        let Some(r) = r else { continue };
        let p = *index.get(r.name.as_str()).ok_or_else(|| {
            r.err(format!(
                "unknown parent {:?}: no attraction of that name in {city}",
                r.name
            ))
        })?;
        if p as usize == i {
            return Err(r.err(format!("{:?} cannot be its own parent", r.name)));
        }
        parents[i] = Some(p);
    }
    for (i, r) in refs.iter().enumerate() {
        let Some(r) = r else { continue };
        let mut chain = vec![i];
        let mut at = parents[i];
        while let Some(p) = at {
            let p = p as usize;
            chain.push(p);
            if p == i {
                let names: Vec<&str> = chain.iter().map(|&k| list[k].name.as_str()).collect();
                return Err(r.err(format!("parent links loop: {}", names.join(" -> "))));
            }
            if chain.len() > list.len() {
                break; // a loop further up, reported at its own rows
            }
            at = parents[p];
        }
    }
    for (a, p) in list.iter_mut().zip(parents) {
        a.parent = p;
    }
    Ok(())
}

/// The areas an attraction lies inside, nearest first.
pub fn ancestors(list: &[Attraction], i: usize) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(list[i].parent.map(|p| p as usize), move |&p| {
        list[p].parent.map(|q| q as usize)
    })
    .take(list.len())
}

/// Whether `area` is `spot` or one of the areas `spot` lies inside: rejecting `area` rejects
/// `spot` too.
pub fn covers(list: &[Attraction], area: usize, spot: usize) -> bool {
    area == spot || ancestors(list, spot).any(|a| a == area)
}

/// Whether two attractions are one place for preferences (the same, or one inside the other).
pub fn related(list: &[Attraction], a: usize, b: usize) -> bool {
    covers(list, a, b) || covers(list, b, a)
}

/// Per attraction, the others that are one place with it (`related`: the areas it lies inside
/// and the parts inside it), in ascending order: what a draw that must never take two of one
/// place reads, instead of walking the links of every pair.
pub fn relatives(list: &[Attraction]) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new(); list.len()];
    for spot in 0..list.len() {
        for area in ancestors(list, spot) {
            out[spot].push(area as u32);
            out[area].push(spot as u32);
        }
    }
    for r in &mut out {
        r.sort_unstable();
        r.dedup();
    }
    out
}

/// The ticket cost of visiting a set of attractions of one city: every visited attraction and
/// every area it lies inside, each counted once, pays its own `ticket` (an area carries the
/// combined ticket, a part only its extra fee).
pub fn entry_cost(list: &[Attraction], visits: &[usize]) -> u32 {
    let mut paid: Vec<usize> = Vec::new();
    for &v in visits {
        for a in std::iter::once(v).chain(ancestors(list, v)) {
            if !paid.contains(&a) {
                paid.push(a);
            }
        }
    }
    paid.iter().map(|&a| list[a].ticket).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An attraction for unit tests: a sight of 华阴市 with a ticket.
    fn att(name: &str, ticket: u32) -> Attraction {
        Attraction {
            city: 0,
            name: name.into(),
            category: "名山大川".into(),
            lat: 34.48,
            lng: 110.08,
            hours: None,
            ticket,
            popularity: 50,
            parent: None,
        }
    }

    fn pref(line: u64, name: &str) -> Option<ParentRef> {
        Some(ParentRef {
            file: "a.csv".into(),
            line,
            name: name.into(),
        })
    }

    #[test]
    fn links_resolve_and_tickets_count_once() {
        let mut list = vec![
            att("华山", 160),
            att("华山西峰", 0),
            att("华山西峰索道", 140),
            att("西岳庙", 0),
        ];
        let refs = vec![None, pref(3, "华山"), pref(4, "华山西峰"), None];
        link("华阴市", &mut list, &refs).unwrap();
        assert_eq!(list[1].parent, Some(0));
        assert_eq!(ancestors(&list, 2).collect::<Vec<_>>(), vec![1, 0]);
        assert!(covers(&list, 0, 2) && !covers(&list, 2, 0));
        assert!(related(&list, 2, 0) && !related(&list, 3, 0));
        // the area's ticket once, plus the cableway's own fee
        assert_eq!(entry_cost(&list, &[1, 2]), 300);
        assert_eq!(entry_cost(&list, &[0, 1]), 160);
        assert_eq!(entry_cost(&list, &[3]), 0);
    }

    #[test]
    fn relatives_are_the_related_pairs() {
        let mut list: Vec<Attraction> = (0..9).map(|i| att(&format!("景点{i}"), 0)).collect();
        // two areas with parts, one part with a part of its own, and loose sights
        let refs = vec![
            None,
            pref(2, "景点0"),
            pref(3, "景点1"),
            None,
            pref(5, "景点3"),
            pref(6, "景点0"),
            None,
            pref(8, "景点3"),
            None,
        ];
        link("华阴市", &mut list, &refs).unwrap();
        let rel = relatives(&list);
        for (a, got) in rel.iter().enumerate() {
            let want: Vec<u32> = (0..list.len())
                .filter(|&b| b != a && related(&list, a, b))
                .map(|b| b as u32)
                .collect();
            assert_eq!(*got, want, "relatives of {a}");
        }
        assert_eq!(rel[0], vec![1, 2, 5]);
    }

    #[test]
    fn bad_links_name_the_row() {
        let mut list = vec![att("华山", 160), att("华山西峰", 0)];
        let e = link("华阴市", &mut list, &[None, pref(3, "泰山")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.csv:3: field 'parent': unknown parent \"泰山\": no attraction of that name in 华阴市"
        );
        let e = link("华阴市", &mut list, &[pref(2, "华山"), None]).unwrap_err();
        assert!(e.to_string().contains("cannot be its own parent"), "{e}");
        let e = link("华阴市", &mut list, &[pref(2, "华山西峰"), pref(3, "华山")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.csv:2: field 'parent': parent links loop: 华山 -> 华山西峰 -> 华山"
        );
    }
}
