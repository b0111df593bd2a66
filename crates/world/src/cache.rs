//! The release's sandbox cache: the lookup key of a call, the bytes of a
//! `sandbox_cache/<tool>_cache.json` file, and adding answers to a published split's cache.
//!
//! The release's cache manager (`SandboxCacheManager._get_cache_key`) keys a call by
//! `json.dumps(sorted(params.items()), sort_keys=True, separators=(',', ':'),
//! ensure_ascii=False)`: a JSON list of `[name, value]` pairs in name order, compact, non-ASCII
//! raw. A cache file is one JSON object, key → answer string. gtb writes it as Python's
//! `json.dump(cache, f, ensure_ascii=False, indent=2, sort_keys=True)` would (the release saves
//! with `indent=2`; sorted keys make the bytes canonical), so a published file, a merged one and
//! one that `add_answers` rewrote are byte-identical for the same entries.

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folder of the cache files in a split.
pub const CACHE_DIR: &str = "sandbox_cache";

/// The entries of one tool's cache file: key → answer, in key order.
pub type CacheFile = BTreeMap<String, String>;

/// The release's cache key of a call (module doc). Nested objects have their keys sorted too
/// (`sort_keys=True`); numbers are written as serde_json writes them, which is Python's form for
/// integers and for the floats agents send (`5.0`, `0.5`).
///
/// Written as serde_json writes the list of `[key, value]` pairs, without building the list:
/// a world gathers millions of keys.
pub fn cache_key(params: &Map<String, Value>) -> String {
    let mut pairs: Vec<(&String, &Value)> = params.iter().collect();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = Vec::with_capacity(96);
    out.push(b'[');
    for (i, (k, v)) in pairs.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'[');
        let value = match v {
            Value::Object(_) | Value::Array(_) => Cow::Owned(sorted(v)),
            _ => Cow::Borrowed(v),
        };
        serde_json::to_writer(&mut out, k).expect("a string serialises");
        out.push(b',');
        serde_json::to_writer(&mut out, &*value).expect("a JSON value serialises");
        out.push(b']');
    }
    out.push(b']');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A value with the keys of every object in sorted order.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The path of a tool's cache file in a split folder.
pub fn cache_path(split_dir: &Path, tool: &str) -> PathBuf {
    split_dir.join(CACHE_DIR).join(format!("{tool}_cache.json"))
}

/// The canonical bytes of a cache file: Python's `json.dump(entries, ensure_ascii=False,
/// indent=2, sort_keys=True)` (no final newline, `{}` when empty).
pub fn cache_bytes(entries: &CacheFile) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 512 + 2);
    for (i, (k, v)) in entries.iter().enumerate() {
        push_entry(&mut out, i == 0, k, v);
    }
    out.extend_from_slice(close(entries.len()));
    out
}

/// One entry of a cache file's bytes (`cache_bytes`), with what opens the file before the
/// first and what separates it from the one before otherwise.
pub fn push_entry(out: &mut Vec<u8>, first: bool, key: &str, answer: &str) {
    push_written_entry(out, first, key, &json_string(answer));
}

/// `push_entry` of an answer already written as a JSON string (`json_string`).
pub fn push_written_entry(out: &mut Vec<u8>, first: bool, key: &str, answer: &[u8]) {
    out.extend_from_slice(if first { b"{\n  " } else { b",\n  " });
    serde_json::to_writer(&mut *out, key).expect("a string serialises");
    out.extend_from_slice(b": ");
    out.extend_from_slice(answer);
}

/// A string as a JSON string literal, as serde_json writes it.
pub fn json_string(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    serde_json::to_writer(&mut out, s).expect("a string serialises");
    out
}

/// What ends a cache file of `entries` entries (`cache_bytes`).
pub fn close(entries: usize) -> &'static [u8] {
    if entries == 0 { b"{}" } else { b"\n}" }
}

/// Read a cache file (any JSON object of strings, as the release writes or gtb does); a
/// missing file is empty. Errors name the file and the entry.
pub fn read_cache(path: &Path) -> Result<CacheFile> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(CacheFile::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let map: Map<String, Value> = serde_json::from_slice(&bytes)
        .with_context(|| format!("{}: not a JSON object", path.display()))?;
    let mut out = CacheFile::new();
    for (k, v) in map {
        match v {
            Value::String(s) => {
                out.insert(k, s);
            }
            other => bail!(
                "{}: entry {k}: the answer is {other}, not a string",
                path.display()
            ),
        }
    }
    Ok(out)
}

/// What `add_answers` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Added {
    /// new keys written
    pub added: usize,
    /// keys already in the file with the same answer
    pub unchanged: usize,
    /// keys already in the file with another answer (kept as they were)
    pub conflicting: Vec<String>,
    /// entries of the file afterwards
    pub entries: usize,
    /// the file's sha256 afterwards
    pub sha256: String,
}

/// Add answers (key → answer) to a published split's `sandbox_cache/<tool>_cache.json`, for
/// `gtb tools fill`. Existing entries are never replaced (a key with another answer is
/// reported in `conflicting`). Under an exclusive lock on `sandbox_cache/.fill.lock`, the file
/// is rewritten atomically in canonical bytes, then the manifest's `world.files` entry of the
/// file (sha256, entries, bytes) is updated, also atomically, so a published file still matches
/// its manifest. A split without a manifest, or whose manifest has no `world` section, is an
/// error (nothing is written).
pub fn add_answers(split_dir: &Path, tool: &str, answers: &[(String, String)]) -> Result<Added> {
    if !crate::TOOLS.contains(&tool) {
        bail!(
            "{tool:?} is not one of the release's tools ({})",
            crate::TOOLS.join(", ")
        );
    }
    let manifest_path = split_dir.join("manifest.json");
    let dir = split_dir.join(CACHE_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let lock_path = dir.join(".fill.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("locking {}", lock_path.display()))?;
    let mut manifest = crate::write::read_manifest(&manifest_path)?;
    let path = cache_path(split_dir, tool);
    let mut entries = read_cache(&path)?;
    let mut done = Added::default();
    for (k, v) in answers {
        match entries.get(k) {
            Some(old) if old == v => done.unchanged += 1,
            Some(_) => done.conflicting.push(k.clone()),
            None => {
                entries.insert(k.clone(), v.clone());
                done.added += 1;
            }
        }
    }
    let bytes = cache_bytes(&entries);
    done.entries = entries.len();
    done.sha256 = gtb_core::digest::sha256_bytes(&bytes);
    if done.added > 0 {
        gtb_core::digest::write_atomic(&path, &bytes)?;
        crate::write::record_file(&mut manifest, &path, split_dir, &bytes, entries.len())?;
        gtb_core::digest::write_atomic(
            &manifest_path,
            gtb_core::pyjson::to_string(&manifest).as_bytes(),
        )?;
    }
    drop(lock);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue28_the_release_key() {
        // json.dumps(sorted({"keywords": "景点", "city": "杭州", "page": 1}.items()),
        //            sort_keys=True, separators=(',', ':'), ensure_ascii=False)
        let p: Map<String, Value> = serde_json::from_str(
            r#"{"keywords": "景点", "city": "杭州", "page": 1, "radius_km": 5.0, "x": null}"#,
        )
        .unwrap();
        assert_eq!(
            cache_key(&p),
            r#"[["city","杭州"],["keywords","景点"],["page",1],["radius_km",5.0],["x",null]]"#
        );
        let nested: Map<String, Value> =
            serde_json::from_str(r#"{"b": {"z": 1, "a": "\n"}}"#).unwrap();
        assert_eq!(cache_key(&nested), r#"[["b",{"a":"\n","z":1}]]"#);
    }

    #[test]
    fn issue28_cache_bytes_are_pythons_indent_2() {
        let mut c = CacheFile::new();
        assert_eq!(cache_bytes(&c), b"{}");
        c.insert("b".into(), "二\"".into());
        c.insert("a".into(), "x".into());
        assert_eq!(
            String::from_utf8(cache_bytes(&c)).unwrap(),
            "{\n  \"a\": \"x\",\n  \"b\": \"二\\\"\"\n}"
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t_cache.json");
        std::fs::write(&p, cache_bytes(&c)).unwrap();
        assert_eq!(read_cache(&p).unwrap(), c);
        std::fs::write(&p, r#"{"k": 3}"#).unwrap();
        let e = read_cache(&p).unwrap_err().to_string();
        assert!(e.contains("entry k") && e.contains("t_cache.json"), "{e}");
    }
}
