//! The cache keys of a world's pre-populated calls, gathered in bounded memory: an external
//! sort. Keys are buffered per tool; when the buffers pass `RUN_BYTES` each tool's keys are
//! sorted, deduplicated and written to a run file beside its cache file
//! (`sandbox_cache/<tool>_cache.run<N>.tmp<PID>`, removed when done or on error, and by the
//! next run that takes the folder's lock after a crash), on a thread while the next keys are
//! gathered. `Runs::keys` merges a tool's runs into its keys in order, each once, so the
//! result is the same for any buffer size, thread count or order of adding: a 1,000,000-task
//! world needs no more memory than a small one.
//!
//! A call's parameters need not be kept: the release's cache key is the sorted list of its
//! `[name, value]` pairs (`cache::cache_key`), which `params_of` turns back into them.

use crate::cache::cache_path;
use anyhow::{Context, Result};
use gtb_core::digest::TempPath;
use serde_json::{Map, Value};
use std::collections::BinaryHeap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Bytes of buffered keys (all tools) before they go to run files.
pub const RUN_BYTES: usize = 64 << 20;

/// The keys of every tool's calls so far (module doc).
pub struct Runs {
    split_dir: PathBuf,
    /// per tool (by name, in first-use order: few tools): buffered keys and run files
    tools: Vec<ToolRuns>,
    buffered: usize,
    limit: usize,
    /// the spill being sorted and written on a thread of its own (one at a time), while
    /// the keys after it are gathered
    writing: Option<std::thread::JoinHandle<Result<()>>>,
}

struct ToolRuns {
    tool: &'static str,
    keys: Vec<String>,
    files: Vec<TempPath>,
}

impl Runs {
    /// Runs for a split folder (run files go into its `sandbox_cache/`).
    pub fn new(split_dir: &Path) -> Runs {
        Runs::with_limit(split_dir, RUN_BYTES)
    }

    /// Runs that spill after `limit` bytes of keys (tests use a small one).
    pub fn with_limit(split_dir: &Path, limit: usize) -> Runs {
        Runs {
            split_dir: split_dir.to_path_buf(),
            tools: Vec::new(),
            buffered: 0,
            limit,
            writing: None,
        }
    }

    /// Add a call's key.
    pub fn add(&mut self, tool: &'static str, key: String) -> Result<()> {
        self.buffered += key.len() + std::mem::size_of::<String>();
        let i = match self.tools.iter().position(|t| t.tool == tool) {
            Some(i) => i,
            None => {
                self.tools.push(ToolRuns {
                    tool,
                    keys: Vec::new(),
                    files: Vec::new(),
                });
                self.tools.len() - 1
            }
        };
        self.tools[i].keys.push(key);
        if self.buffered > self.limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Every tool's buffered keys to a new run file each, sorted and written on a thread
    /// (after the spill before has been written).
    fn spill(&mut self) -> Result<()> {
        self.wait()?;
        let mut runs = Vec::new();
        for t in &mut self.tools {
            if let Some(tmp) = t.next_run(&self.split_dir) {
                runs.push((tmp.path().to_path_buf(), std::mem::take(&mut t.keys)));
                t.files.push(tmp);
            }
        }
        self.buffered = 0;
        let write = move || (runs.into_iter()).try_for_each(|(path, keys)| write_run(&path, keys));
        self.writing = Some(std::thread::spawn(write));
        Ok(())
    }

    /// The spill being written, finished.
    fn wait(&mut self) -> Result<()> {
        match self.writing.take() {
            Some(w) => w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => Ok(()),
        }
    }

    /// A tool's keys, sorted and each once: its buffered keys alone, or those merged with its
    /// run files (removed when the iterator is dropped).
    pub fn keys(&mut self, tool: &str) -> Result<Keys> {
        self.wait()?;
        let Some(i) = self.tools.iter().position(|t| t.tool == tool) else {
            return Ok(Keys::Memory(Vec::new().into_iter()));
        };
        let mut t = self.tools.remove(i);
        self.buffered -= t
            .keys
            .iter()
            .map(|k| k.len() + std::mem::size_of::<String>())
            .sum::<usize>();
        if t.files.is_empty() {
            sort_unique(&mut t.keys);
            return Ok(Keys::Memory(t.keys.into_iter()));
        }
        t.spill(&self.split_dir)?;
        Merge::open(t.files).map(Keys::Merged)
    }
}

impl Drop for Runs {
    /// No spill is still being written when its run files are removed.
    fn drop(&mut self) {
        // an error here is one of a run nobody reads any more
        let _ = self.wait();
    }
}

impl ToolRuns {
    /// The buffered keys (if any) to a new run file.
    fn spill(&mut self, split_dir: &Path) -> Result<()> {
        let Some(tmp) = self.next_run(split_dir) else {
            return Ok(());
        };
        write_run(tmp.path(), std::mem::take(&mut self.keys))?;
        self.files.push(tmp);
        Ok(())
    }

    /// The path of the next run file, when there are keys to write to it.
    fn next_run(&self, split_dir: &Path) -> Option<TempPath> {
        if self.keys.is_empty() {
            return None;
        }
        let name = format!("{}_cache.run{}", self.tool, self.files.len());
        Some(TempPath::beside(
            &cache_path(split_dir, self.tool).with_file_name(name),
        ))
    }
}

fn sort_unique(keys: &mut Vec<String>) {
    use rayon::slice::ParallelSliceMut;
    keys.par_sort_unstable();
    keys.dedup();
}

/// Sorted, deduplicated keys, one per line (a key is compact JSON: it has no raw newline).
fn write_run(path: &Path, mut keys: Vec<String>) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    sort_unique(&mut keys);
    let mut w = BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    for k in &keys {
        w.write_all(k.as_bytes())?;
        w.write_all(b"\n")?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))
}

/// A tool's keys in order, each once (`Runs::keys`).
pub enum Keys {
    Memory(std::vec::IntoIter<String>),
    Merged(Merge),
}

impl Iterator for Keys {
    type Item = Result<String>;
    fn next(&mut self) -> Option<Result<String>> {
        match self {
            Keys::Memory(it) => it.next().map(Ok),
            Keys::Merged(m) => m.next(),
        }
    }
}

/// A k-way merge of run files, each key once.
pub struct Merge {
    readers: Vec<(BufReader<std::fs::File>, PathBuf)>,
    heap: BinaryHeap<std::cmp::Reverse<(String, usize)>>,
    last: Option<String>,
    /// the run files, removed when the merge is dropped
    _files: Vec<TempPath>,
}

impl Merge {
    fn open(files: Vec<TempPath>) -> Result<Merge> {
        let mut m = Merge {
            readers: Vec::new(),
            heap: BinaryHeap::new(),
            last: None,
            _files: Vec::new(),
        };
        for (i, f) in files.iter().enumerate() {
            let file = std::fs::File::open(f.path())
                .with_context(|| format!("reading {}", f.path().display()))?;
            m.readers
                .push((BufReader::with_capacity(1 << 16, file), f.path().into()));
            if let Some(k) = m.read(i)? {
                m.heap.push(std::cmp::Reverse((k, i)));
            }
        }
        m._files = files;
        Ok(m)
    }

    fn read(&mut self, i: usize) -> Result<Option<String>> {
        let (r, path) = &mut self.readers[i];
        let mut line = String::new();
        let n = r
            .read_line(&mut line)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            return Ok(None);
        }
        line.pop();
        Ok(Some(line))
    }
}

impl Iterator for Merge {
    type Item = Result<String>;
    fn next(&mut self) -> Option<Result<String>> {
        loop {
            let std::cmp::Reverse((k, i)) = self.heap.pop()?;
            match self.read(i) {
                Ok(Some(next)) => self.heap.push(std::cmp::Reverse((next, i))),
                Ok(None) => {}
                Err(e) => return Some(Err(e)),
            }
            if self.last.as_ref() != Some(&k) {
                self.last = Some(k.clone());
                return Some(Ok(k));
            }
        }
    }
}

/// A call's parameters from its cache key (`cache::cache_key`'s list of `[name, value]` pairs).
pub fn params_of(key: &str) -> Result<Map<String, Value>> {
    let pairs: Vec<(String, Value)> =
        serde_json::from_str(key).with_context(|| format!("not a cache key: {key}"))?;
    Ok(pairs.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(runs: &mut Runs, tool: &str) -> Vec<String> {
        runs.keys(tool).unwrap().map(Result::unwrap).collect()
    }

    #[test]
    fn issue27_keys_are_the_same_however_often_they_spill() {
        let dir = tempfile::tempdir().unwrap();
        let keys: Vec<String> = (0..500)
            .map(|i| format!("k{:03}", (i * 37) % 211))
            .collect();
        let mut want = keys.clone();
        want.sort();
        want.dedup();
        for limit in [1, 100, 1000, RUN_BYTES] {
            let mut runs = Runs::with_limit(dir.path(), limit);
            for k in &keys {
                runs.add("maps_geo", k.clone()).unwrap();
                runs.add("web_search", format!("w{k}")).unwrap();
            }
            assert_eq!(all(&mut runs, "maps_geo"), want, "limit {limit}");
            assert_eq!(all(&mut runs, "web_search").len(), want.len());
            assert!(all(&mut runs, "plan_route").is_empty());
        }
        // every run file is gone
        let left: Vec<_> = std::fs::read_dir(dir.path().join("sandbox_cache"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{left:?}");
    }

    /// A spill is written on a thread: its error still comes back, from a later spill or
    /// from `keys`, never lost.
    #[test]
    fn issue27_a_spill_that_cannot_be_written_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        // the run files' folder is taken by a file
        std::fs::write(dir.path().join("sandbox_cache"), "").unwrap();
        let mut runs = Runs::with_limit(dir.path(), 1);
        let added = (0..5).try_for_each(|i| runs.add("maps_geo", format!("k{i}")));
        let e = match added {
            Err(e) => e,
            Ok(()) => runs.keys("maps_geo").err().expect("an error"),
        };
        assert!(format!("{e:#}").contains("sandbox_cache"), "{e:#}");
    }

    #[test]
    fn issue27_a_key_gives_back_its_parameters() {
        let p: Map<String, Value> =
            serde_json::from_str(r#"{"keywords": "景点", "city": "杭州", "page": 2}"#).unwrap();
        let back = params_of(&crate::cache_key(&p)).unwrap();
        assert_eq!(crate::cache_key(&back), crate::cache_key(&p));
        assert_eq!(back["page"], 2);
        assert!(params_of("{}").is_err());
    }
}
