//! Reading the file: every blob decoded on all threads and the results merged in file order,
//! and passes 2 (the ways of boundary and POI relations) and 3 (the nodes of those ways).

use super::boundary::NodeCoords;
use super::{Admin, Candidate, FastSet, NODES, Shape, WAYS};
use crate::import::ImportContext;
use anyhow::{Context, Result, anyhow};
use gtb_core::FastMap;
use osmpbf::{Blob, BlobDecode, BlobReader, PrimitiveBlock};
use rayon::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// Read every blob of the input, decoding on all threads as blobs are read (rayon's
/// `par_bridge`, which holds only as many blobs as there are threads); blobs for which
/// `skip(index)` holds are not decoded. Results come back in file order; of several errors,
/// the first in the file is reported.
pub(super) fn read_blocks<T, F>(
    ctx: &ImportContext,
    what: &str,
    skip: impl Fn(usize) -> bool + Sync + Send,
    f: F,
) -> Result<Vec<T>>
where
    T: Send + Default,
    F: Fn(&PrimitiveBlock) -> T + Sync,
{
    let path = ctx.opts.input.as_path();
    let size = std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    let bar = ctx.bar(size, what);
    let reader =
        BlobReader::from_path(path).map_err(|e| anyhow!("{}: cannot open: {e}", path.display()))?;
    let mut results: Vec<(usize, Result<T>)> = reader
        .enumerate()
        .inspect(|(_, b)| {
            if let Some(off) = b.as_ref().ok().and_then(Blob::offset) {
                bar.set_position(off.0);
            }
        })
        .filter(|(i, _)| !skip(*i))
        .par_bridge()
        .map(|(i, blob)| {
            let r = match blob {
                Ok(b) => decode(path, i, &b, &f),
                Err(e) => Err(anyhow!("{}: blob {i}: not PBF: {e}", path.display())),
            };
            (i, r)
        })
        .collect();
    bar.finish_and_clear();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// One blob through `f`. osmpbf panics on some malformed data (an unknown member type):
/// that becomes an error naming the blob, as any other decoding error.
fn decode<T: Default, F: Fn(&PrimitiveBlock) -> T>(
    path: &Path,
    i: usize,
    blob: &Blob,
    f: &F,
) -> Result<T> {
    let at = || format!("{}: blob {i}", path.display());
    catch_unwind(AssertUnwindSafe(|| match blob.decode() {
        Ok(BlobDecode::OsmData(block)) => Ok(f(&block)),
        Ok(_) => Ok(T::default()),
        Err(e) => Err(anyhow!("{}: cannot decode: {e}", at())),
    }))
    .unwrap_or_else(|_| Err(anyhow!("{}: malformed primitive block", at())))
}

/// Pass 2: the node lists of the ways that boundary and POI relations are made of.
pub(super) fn relation_ways(
    ctx: &ImportContext,
    kinds: &[u8],
    pois: &[Candidate],
    admins: &[Admin],
) -> Result<FastMap<i64, Vec<i64>>> {
    let mut need: FastSet<i64> = FastSet::default();
    for a in admins {
        need.extend(a.outer.iter().chain(&a.inner));
    }
    for p in pois {
        if let Shape::Relation(w) = &p.shape
            && p.name.is_some()
        {
            need.extend(w);
        }
    }
    if need.is_empty() {
        return Ok(FastMap::default());
    }
    let found = read_blocks(
        ctx,
        "osm ways",
        |i| kinds[i] & WAYS == 0,
        |b| {
            let mut v = Vec::new();
            for g in b.groups() {
                for w in g.ways() {
                    if need.contains(&w.id()) {
                        v.push((w.id(), w.refs().collect::<Vec<i64>>()));
                    }
                }
            }
            v
        },
    )?;
    Ok(found.into_iter().flatten().collect())
}

/// Pass 3: the coordinates of every node of the POI ways and of the relations' ways.
pub(super) fn way_nodes(
    ctx: &ImportContext,
    kinds: &[u8],
    pois: &[Candidate],
    ways: &FastMap<i64, Vec<i64>>,
) -> Result<NodeCoords> {
    let mut need: FastSet<i64> = FastSet::default();
    for p in pois {
        if let Shape::Way(refs) = &p.shape
            && p.name.is_some()
        {
            need.extend(refs);
        }
    }
    for refs in ways.values() {
        need.extend(refs);
    }
    if need.is_empty() {
        return Ok(NodeCoords::default());
    }
    let found = read_blocks(
        ctx,
        "osm nodes",
        |i| kinds[i] & NODES == 0,
        |b| {
            let mut v = Vec::new();
            for g in b.groups() {
                for n in g.dense_nodes() {
                    if need.contains(&n.id()) {
                        v.push((n.id(), (n.lat(), n.lon())));
                    }
                }
                for n in g.nodes() {
                    if need.contains(&n.id()) {
                        v.push((n.id(), (n.lat(), n.lon())));
                    }
                }
            }
            v
        },
    )?;
    Ok(found.into_iter().flatten().collect())
}
