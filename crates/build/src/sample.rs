//! Stage `sample`: the task skeletons (archetype, cities, hub, days, date, pattern, difficulty)
//! of the split's slots, or of a shard's slice of them.
//!
//! Every skeleton a slot may need comes from that slot's own stream of draws: position `slot`
//! first, then its alternatives `n + (k-1)·n + slot` (k = 1, 2, ...) when a signature of an
//! earlier split must be avoided (here) or a dropped task replaced (validate). No slot's draws
//! depend on another slot, so a shard computes its slots alone and shards + merge give the
//! bytes of the whole build.

use super::BuildStage;
use super::sampled::Sampled;
use super::split::{Artifacts, Split, holds};
use crate::CODE_VERSION;
use anyhow::{Result, bail};
use gtb_core::task::Skeleton;
use gtb_pipeline::Fingerprint;
use gtb_pipeline::dag::Stage;
use rayon::prelude::*;

/// Draws one slot may use at most (alternatives for redraws and replacements together).
const MAX_DRAWS_PER_SLOT: usize = 1000;

pub(super) struct Sample;

impl<'a> Stage<Split<'a>, Artifacts, BuildStage> for Sample {
    fn id(&self) -> BuildStage {
        BuildStage::Sample
    }
    fn upstream(&self) -> &'static [BuildStage] {
        &[BuildStage::Prepare]
    }
    fn inputs(&self, ctx: &Split<'a>) -> Fingerprint {
        let cfg = ctx.cfg;
        let fp = Fingerprint::default()
            .with("config run.seed", cfg.run.seed.to_string())
            .with("config run.n", cfg.run.n.to_string())
            .with_json("config sample", &cfg.sample)
            .with(
                "excluded signatures",
                gtb_core::digest::digest_bytes(ctx.neighbours.earlier.join("\n").as_bytes()),
            )
            .with(
                "held-out cities",
                ctx.held_out
                    .iter()
                    .map(|&c| ctx.res.city(c).name.clone())
                    .collect::<Vec<_>>()
                    .join("、"),
            )
            .with("code", CODE_VERSION);
        match ctx.shard {
            Some(s) => fp.with(SHARD_KEY, s.to_string()),
            None => fp,
        }
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        ctx.sampler()?;
        let path = ctx.paths.work.artifact(BuildStage::Sample);
        let sampled = Sampled::write(&path, ctx.slots.clone(), |slot| sample_slot(ctx, slot))?;
        art.sample = Some(sampled);
        Ok(())
    }
    fn reuse(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let path = ctx.paths.work.artifact(BuildStage::Sample);
        art.sample = Some(Sampled::read(&path)?);
        Ok(())
    }
}

/// The fingerprint key that says which slice a shard builds; the rest of the fingerprints is
/// the plan every shard shares.
pub(super) const SHARD_KEY: &str = "shard";

/// Stream position of alternative `k` (1-based) of `slot` in a split of `n`.
fn alternative(n: usize, slot: usize, k: usize) -> usize {
    n + (k - 1) * n + slot
}

/// Which alternative of its slot a stream position is (0: the slot's first draw).
fn alternative_of(n: usize, index: usize) -> usize {
    if index < n { 0 } else { (index - n) / n + 1 }
}

/// The skeleton of `slot`: its first draw, or the first alternative whose signature no earlier
/// split holds.
pub(super) fn sample_slot(ctx: &Split, slot: usize) -> Result<Skeleton> {
    let sampler = ctx.sampler()?;
    let class = sampler.class_at(slot);
    let first = sampler.draw(slot, class);
    // a split with no earlier split (the usual build) avoids nothing: no signature to compute
    let earlier = &ctx.neighbours.earlier;
    if earlier.is_empty() || !holds(earlier, &first.signature()) {
        return Ok(first);
    }
    next_alternative(ctx, slot, 0, |sk| !holds(earlier, &sk.signature())).map_err(
        |_| {
            anyhow::anyhow!(
                "split {}: slot {slot} finds no skeleton unseen in earlier splits in {MAX_DRAWS_PER_SLOT} draws; the splits are too large for the resources",
                ctx.name
            )
        },
    )
}

/// A replacement for the task of `dropped` (a skeleton of `slot`): the slot's next alternative
/// that no other split sampled and, with several splits, whose signature hashes to this
/// split's class, so that replacements of two splits never share a signature.
pub(super) fn replacement(ctx: &Split, slot: usize, dropped: &Skeleton) -> Result<Skeleton> {
    let n = ctx.cfg.run.n;
    let (k, of) = ctx.neighbours.class;
    let fits = |sk: &Skeleton| {
        let sig = sk.signature();
        !holds(&ctx.neighbours.others, &sig) && (of == 1 || signature_class(&sig, of) == k)
    };
    next_alternative(ctx, slot, alternative_of(n, dropped.index), fits).map_err(|_| {
        anyhow::anyhow!(
            "split {}: slot {slot} finds no acceptable replacement skeleton in {MAX_DRAWS_PER_SLOT} draws",
            ctx.name
        )
    })
}

/// The first alternative of `slot` after alternative `after` that `fits`.
fn next_alternative(
    ctx: &Split,
    slot: usize,
    after: usize,
    fits: impl Fn(&Skeleton) -> bool,
) -> Result<Skeleton> {
    let sampler = ctx.sampler()?;
    let (n, class) = (ctx.cfg.run.n, sampler.class_at(slot));
    for k in after + 1..=MAX_DRAWS_PER_SLOT {
        let sk = sampler.draw(alternative(n, slot, k), class);
        if fits(&sk) {
            return Ok(sk);
        }
    }
    bail!("no fitting alternative")
}

/// A signature's class among `of` splits (blake3, so the same on every machine).
fn signature_class(signature: &str, of: usize) -> usize {
    let h = blake3::hash(signature.as_bytes());
    (u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes")) % of as u64) as usize
}

/// The sorted, distinct sampled signatures of every slot of a split (not only a shard's):
/// what later splits avoid.
pub(super) fn sampled_signatures(ctx: &Split) -> Result<Vec<String>> {
    ctx.sampler()?;
    let mut sigs = (0..ctx.cfg.run.n)
        .into_par_iter()
        .map(|slot| sample_slot(ctx, slot).map(|sk| sk.signature()))
        .collect::<Result<Vec<_>>>()?;
    sigs.par_sort_unstable();
    sigs.dedup();
    Ok(sigs)
}

/// The class of a skeleton, from its difficulty type.
pub(super) fn class_of(s: &str) -> gtb_core::difficulty::Class {
    use gtb_core::difficulty::Class;
    match s {
        "easy" => Class::Easy,
        "medium" => Class::Medium,
        _ => Class::Hard,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternatives_of_different_slots_never_share_a_position() {
        let n = 7;
        let mut seen = std::collections::HashSet::new();
        for slot in 0..n {
            assert!(seen.insert(slot));
            for k in 1..20 {
                let i = alternative(n, slot, k);
                assert!(seen.insert(i), "{slot} {k}");
                assert_eq!(alternative_of(n, i), k);
            }
            assert_eq!(alternative_of(n, slot), 0);
        }
    }
}
