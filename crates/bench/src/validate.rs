//! Validation at scale: 650 tasks against a 338,000-POI inventory, and the fuzzy name
//! lookup's throughput.

use crate::cfg;
use std::time::Instant;

/// Validation of 650 tasks against a 338,000-POI inventory: the shipped attractions plus a
/// generated fixture of branch-style variants (in memory only, never written to raw_data).
pub fn validate_at_scale(dir: &std::path::Path) -> anyhow::Result<()> {
    use gtb_validate::{Mode, Validator, names::NameIndex};
    let c = cfg(650, dir)?;
    let mut res = gtb_ops::load_resources(&c)?;
    let req = gtb_build::BuildRequest::new(c.clone());
    let s = gtb_build::build(&req)?;
    let tasks: Vec<gtb_core::task::Task> = std::fs::read_to_string(&s.splits[0].path)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let target = 338_000usize;
    let real: usize = res.attractions.iter().map(Vec::len).sum();
    let dests: Vec<usize> = res.destinations().map(|d| d as usize).collect();
    let per_city = (target - real).div_ceil(dests.len());
    for &d in &dests {
        let base: Vec<gtb_resources::Attraction> = res.attractions[d].clone();
        for k in 0..per_city {
            let mut a = base[k % base.len()].clone();
            a.name = format!("{}{}号馆", a.name, k);
            res.attractions[d].push(a);
        }
    }
    let total: usize = res.attractions.iter().map(Vec::len).sum();
    let t = Instant::now();
    let v = Validator::new(&res, &c);
    let t_index = t.elapsed();
    let t = Instant::now();
    let mut problems = 0;
    for task in &tasks {
        let mut task = task.clone();
        problems += v.check_task(&mut task, Mode::Audit).problems.len();
    }
    let t_validate = t.elapsed();
    println!(
        "validate 650 tasks vs {total} POIs: index {:.3}s, checks {:.3}s ({problems} problems)",
        t_index.as_secs_f64(),
        t_validate.as_secs_f64()
    );
    // fuzzy throughput: misspelled names (one character dropped) force the fuzzy path
    let idx = NameIndex::new(&res, c.validate.fuzzy_threshold, c.validate.fuzzy_margin);
    let queries: Vec<(usize, String)> = dests
        .iter()
        .flat_map(|&d| {
            res.attractions[d].iter().take(20).map(move |a| {
                let mut ch: Vec<char> = a.name.chars().collect();
                if ch.len() > 3 {
                    ch.remove(ch.len() / 2);
                }
                (d, ch.into_iter().collect::<String>())
            })
        })
        .collect();
    let t = Instant::now();
    let snapped = queries
        .iter()
        .filter(|(d, q)| matches!(idx.lookup(*d, q), gtb_validate::names::Match::Snapped(..)))
        .count();
    let el = t.elapsed().as_secs_f64();
    println!(
        "fuzzy lookups: {} in {el:.3}s = {:.0}/s against ~{} names per city ({snapped} snapped)",
        queries.len(),
        queries.len() as f64 / el,
        total / dests.len()
    );
    Ok(())
}
