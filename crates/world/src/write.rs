//! Writing a split's world beside its task file: `sandbox_cache/<tool>_cache.json` for the ten
//! tools (every pre-populated call with its answer, `calls`) and
//! `poi2category/all_poi_by_city.json` (the world's table in the release's layout), and the
//! manifest's `world` section (each file's sha256, entries and bytes).
//!
//! The answers are computed in parallel and written in key order, so the bytes are the same
//! for any thread count; the world is a function of the published task and plans
//! files and the resources, so a merged split's world is byte-identical to the unsharded one.

use crate::cache::cache_path;
use crate::runs::{Keys, Runs, params_of};
use crate::witness::Facts;
use crate::{MAX_ANSWER_CHARS, TOOLS, World};
use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use serde_json::{Value, json};
use std::path::Path;

/// The world's scoring table, relative to the split folder.
pub const POI_TABLE: &str = "poi2category/all_poi_by_city.json";

/// The one-world rule, as the manifest states it.
pub const WORLD_RULE: &str = "one world: the table (poi2category) and the tool answers list the real venues of the resources and every modelled venue 'X（city·示意）' under the category it names, labelled modelled with its price band; the release's evaluator scores a stand-in by its category as `gtb score --credit-stand-ins` does";

/// What was written: per file (relative path) its sha256, entries and bytes.
#[derive(Debug, Clone, Default)]
pub struct Written {
    pub files: Vec<(String, String, usize, usize)>,
    /// the longest answer, in characters
    pub longest_answer: usize,
}

impl Written {
    /// The manifest's `world` section.
    pub fn manifest_section(&self) -> Value {
        let mut files = serde_json::Map::new();
        for (f, sha, entries, bytes) in &self.files {
            files.insert(
                f.clone(),
                json!({"sha256": sha, "entries": entries, "bytes": bytes}),
            );
        }
        json!({"rule": WORLD_RULE, "files": files, "longest_answer_chars": self.longest_answer})
    }
}

/// Write the world of a published task file and its plans file (absent: no witnesses) into
/// `split_dir` (module doc); returns what was written. Both files are streamed: the plans
/// once for the witnesses' facts and the calls of their places, the tasks once for their
/// trips and words; the calls' keys go through `Runs`, and each tool's file is answered and
/// written in key order (`write_cache`), so memory stays bounded at any number of tasks.
pub fn write_world(
    split_dir: &Path,
    tasks: &Path,
    plans: &Path,
    res: &gtb_resources::Resources,
) -> Result<Written> {
    let mut runs = Runs::new(split_dir);
    // the places' calls need no facts; the answers come from the world of the facts, as
    // `World::open` (`gtb tools serve`) builds it
    let places = World::new(res, Facts::default());
    let mut seen = crate::calls::Seen::default();
    let facts = Facts::read(res, plans, |found| {
        let items = seen.new_of(&found, |tp| World::place_items(tp).collect());
        let batch = items
            .par_iter()
            .flat_map_iter(|i| places.place_item_calls(i))
            .collect();
        crate::calls::extend(&mut runs, batch)
    })?;
    drop(places);
    let world = World::new(res, facts);
    crate::calls::extend(&mut runs, world.along_route_calls())?;
    world.task_calls(tasks, &mut runs)?;
    let mut written = Written::default();
    for (file, longest) in write_caches(&world, runs, split_dir)? {
        written.longest_answer = written.longest_answer.max(longest);
        written.files.push(file);
    }
    let (bytes, _, pois) = gtb_score::resolver::release_table(&world.db);
    let path = split_dir.join(POI_TABLE);
    gtb_core::digest::write_atomic(&path, &bytes)?;
    written.files.push(figure(split_dir, &path, &bytes, pois));
    Ok(written)
}

/// A cache file's figure (relative path, sha256, entries, bytes) and its longest answer.
type CacheFigure = ((String, String, usize, usize), usize);

/// What [`write_cache`] returns.
type CacheWritten = Result<CacheFigure>;

/// Every tool's cache file (`write_cache`), two at a time: one file's pipeline has stretches
/// on one thread (merging keys, writing, the end of a batch), which the other's answers fill.
/// Each file is written alone and in order, so the bytes do not depend on the pairing; the
/// figures come back in `TOOLS` order, or the error of the first file (in that order) that
/// failed. No file is begun once one has failed.
fn write_caches(world: &World, runs: Runs, split_dir: &Path) -> Result<Vec<CacheFigure>> {
    let queue = std::sync::Mutex::new((runs, TOOLS.iter().enumerate()));
    // each thread's files, by their place in TOOLS
    let work = || {
        let mut done: Vec<(usize, CacheWritten)> = Vec::new();
        loop {
            let (i, tool, keys) = {
                let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                let (runs, tools) = &mut *q;
                let Some((i, &tool)) = tools.next() else {
                    return done;
                };
                (i, tool, runs.keys(tool))
            };
            let path = cache_path(split_dir, tool);
            let result = keys.and_then(|keys| write_cache(world, tool, keys, split_dir, &path));
            if result.is_err() {
                // no file is begun once one has failed
                let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                q.1.by_ref().for_each(drop);
            }
            done.push((i, result));
        }
    };
    let mut done = std::thread::scope(|s| {
        let other = s.spawn(work);
        let mut mine = work();
        mine.extend(
            other
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
        );
        mine
    });
    done.sort_by_key(|(i, _)| *i);
    // a file goes unwritten only after a failure earlier in the order, which returns first
    let mut figures = Vec::with_capacity(TOOLS.len());
    let mut done = done.into_iter();
    for (i, tool) in TOOLS.iter().enumerate() {
        match done.next() {
            Some((j, result)) if j == i => figures.push(result?),
            _ => bail!("{tool}: its cache file was not written"),
        }
    }
    Ok(figures)
}

/// Write a tool's cache file (`cache_bytes`' bytes) from its keys in order: answered in
/// batches, each in parallel, and written and hashed as they go, so that a 100,000-task world
/// never holds a tool's answers or its file at once. Four things overlap: a thread merges the
/// next batch's keys, the workers answer a batch, this thread writes the one before, and a
/// thread hashes what was written. Returns the file's figure and the longest answer.
fn write_cache(
    world: &World,
    tool: &'static str,
    keys: Keys,
    split_dir: &Path,
    path: &Path,
) -> CacheWritten {
    let (mut bytes, mut longest, mut entries) = (0, 0, 0);
    let mut sha = String::new();
    gtb_core::digest::write_streaming_atomic_direct(path, |w| {
        std::thread::scope(|s| -> Result<()> {
            let batches = merged_batches(s, keys);
            let (hash_tx, hasher) =
                gtb_core::digest::sha256_thread(s, 2, |h, block: &Vec<Vec<u8>>| {
                    use sha2::Digest;
                    block.iter().for_each(|b| h.update(b));
                });
            let mut put = |block: Vec<Vec<u8>>| -> Result<()> {
                for b in &block {
                    w.write_all(b)?;
                    bytes += b.len();
                }
                // the hasher stops early only when this thread has stopped sending
                hash_tx.send(block).ok();
                Ok(())
            };
            let mut batch = batches.recv().unwrap_or_else(|_| Ok(Vec::new()))?;
            let mut written: Vec<Answered> = Vec::new();
            while !batch.is_empty() || !written.is_empty() {
                let first = entries;
                let (answered, next) = std::thread::scope(|s| -> Result<_> {
                    let answering = s.spawn(|| answer_batch(world, tool, &batch, first));
                    let mut block = Vec::with_capacity(written.len());
                    for (chars, entry) in written.drain(..) {
                        if chars > MAX_ANSWER_CHARS {
                            bail!(
                                "{tool}: an answer of {chars} characters (at most {MAX_ANSWER_CHARS})"
                            );
                        }
                        longest = longest.max(chars);
                        block.push(entry);
                    }
                    put(block)?;
                    let next = match batch.is_empty() {
                        true => Vec::new(),
                        false => batches.recv().unwrap_or_else(|_| Ok(Vec::new()))?,
                    };
                    let answered = answering
                        .join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p))?;
                    Ok((answered, next))
                })?;
                entries += batch.len();
                written = answered;
                batch = next;
            }
            put(vec![crate::cache::close(entries).to_vec()])?;
            drop(hash_tx);
            sha = hasher.join().expect("the hasher thread does not panic");
            Ok(())
        })
    })?;
    let file = (relative(split_dir, path), sha, entries, bytes);
    Ok((file, longest))
}

/// A tool's keys in batches (`next_batch`), merged on a thread of the scope `s` while the
/// caller answers and writes the batches before; the last batch is empty (or an error).
fn merged_batches<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    mut keys: Keys,
) -> std::sync::mpsc::Receiver<Result<Vec<String>>> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    s.spawn(move || {
        loop {
            let batch = next_batch(&mut keys);
            let last = batch.as_ref().map_or(true, Vec::is_empty);
            // the receiver stops taking batches only when it has stopped
            if tx.send(batch).is_err() || last {
                break;
            }
        }
    });
    rx
}

/// An answered call: the answer's length in characters and the cache file's entry.
type Answered = (usize, Vec<u8>);

/// The next keys to answer (empty at the end). Calls of one signature are answered once per
/// batch: at 16,384 keys a 100,000-task world was written in 47 s instead of 51–54 s (user
/// CPU 71–73 s against 77–81 s), and its peak memory stayed the same (about 610 MiB).
fn next_batch(keys: &mut Keys) -> Result<Vec<String>> {
    const BATCH: usize = 16384;
    keys.by_ref().take(BATCH).collect()
}

/// A batch of calls answered in parallel, as the cache file's entries (`first`: the index of
/// the batch's first call in the file). Calls of one signature (`World::answer_signature`)
/// are answered, and their answer written as JSON, once.
fn answer_batch(
    world: &World,
    tool: &'static str,
    batch: &[String],
    first: usize,
) -> Result<Vec<Answered>> {
    // every key was validated as it was gathered (`calls::add`)
    let params: Vec<serde_json::Map<String, Value>> = batch
        .par_iter()
        .map(|k| params_of(k))
        .collect::<Result<_>>()?;
    let signatures: Vec<Option<String>> = params
        .par_iter()
        .map(|p| world.answer_signature(tool, p))
        .collect();
    // per call, the place of its answer among the calls answered (the first of each signature)
    let (mut answered, mut place_of) = (Vec::new(), Vec::with_capacity(batch.len()));
    let mut by_signature: gtb_core::FastMap<&str, usize> = Default::default();
    for (j, sig) in signatures.iter().enumerate() {
        let place = match sig {
            Some(s) => *by_signature.entry(s.as_str()).or_insert(answered.len()),
            None => answered.len(),
        };
        if place == answered.len() {
            answered.push(j);
        }
        place_of.push(place);
    }
    let answers: Vec<(usize, Vec<u8>)> = answered
        .par_iter()
        .map(|&j| {
            let a = world.answer_valid(tool, &params[j]);
            (a.chars().count(), crate::cache::json_string(&a))
        })
        .collect();
    Ok(batch
        .par_iter()
        .zip(place_of)
        .enumerate()
        .map(|(j, (k, place))| {
            let (chars, a) = &answers[place];
            let mut out = Vec::with_capacity(a.len() + k.len() + 8);
            crate::cache::push_written_entry(&mut out, first + j == 0, k, a);
            (*chars, out)
        })
        .collect())
}

fn figure(
    split_dir: &Path,
    path: &Path,
    bytes: &[u8],
    entries: usize,
) -> (String, String, usize, usize) {
    (
        relative(split_dir, path),
        gtb_core::digest::sha256_bytes(bytes),
        entries,
        bytes.len(),
    )
}

/// A world file's path as the manifest names it: relative to the split folder.
fn relative(split_dir: &Path, path: &Path) -> String {
    path.strip_prefix(split_dir)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The files a world consists of, relative to the split folder.
pub fn world_files() -> Vec<String> {
    let mut out: Vec<String> = TOOLS
        .iter()
        .map(|t| format!("{}/{t}_cache.json", crate::cache::CACHE_DIR))
        .collect();
    out.push(POI_TABLE.to_string());
    out
}

/// A split's manifest, which must have a `world` section.
pub fn read_manifest(path: &Path) -> Result<Value> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "reading {} (a split without a manifest is incomplete)",
            path.display()
        )
    })?;
    let m: Value =
        serde_json::from_slice(&bytes).with_context(|| format!("reading {}", path.display()))?;
    if !m.get("world").is_some_and(Value::is_object) {
        bail!(
            "{}: no `world` section (a split built before gtb wrote worlds: rebuild it)",
            path.display()
        );
    }
    Ok(m)
}

/// Record a rewritten world file in the manifest's `world.files`.
pub fn record_file(
    manifest: &mut Value,
    path: &Path,
    split_dir: &Path,
    bytes: &[u8],
    entries: usize,
) -> Result<()> {
    let (rel, sha, entries, n) = figure(split_dir, path, bytes, entries);
    let files = manifest["world"]
        .get_mut("files")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| anyhow::anyhow!("manifest: `world.files` is not an object"))?;
    files.insert(rel, json!({"sha256": sha, "entries": entries, "bytes": n}));
    Ok(())
}
