//! The content-addressed response cache: `<dir>/llm-responses-v1/ab/abcdef….json`.
//!
//! The key is the blake3 of the endpoint, the prompt version and the full request body (model,
//! messages, response format and schema, sampling parameters, per-request seed); headers, and
//! so the API key, are never part of it. An entry keeps the request and the raw response body
//! (with any echo of the key redacted) whatever the reply's fate, so a rejected answer can be
//! diagnosed without paying twice. Entries are written atomically (temp file + rename) as soon
//! as a response arrives: a crash loses only requests in flight. An unreadable entry is a miss.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

/// Bucket of this entry format; a change of layout gets a new bucket, never a misread.
pub const BUCKET: &str = "llm-responses-v1";

/// A stored exchange. `request` is the exact body that was sent.
#[derive(Debug, Serialize)]
pub struct Entry {
    pub key: String,
    pub endpoint: String,
    pub prompt_version: String,
    /// what the task was (for people reading the cache; not part of the key)
    pub label: String,
    pub request: Box<RawValue>,
    pub status: u16,
    /// raw response body, as received (key redacted)
    pub response: String,
}

/// What a lookup reads back (the request is skipped).
#[derive(Debug, Clone, Deserialize)]
pub struct Hit {
    pub key: String,
    pub status: u16,
    pub response: String,
}

#[derive(Debug, Clone)]
pub struct Cache {
    pub root: PathBuf,
}

/// The cache key of a request: endpoint, prompt version and the exact body bytes.
pub fn key(endpoint: &str, prompt_version: &str, body: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"gtb-llm-cache-v1\0");
    h.update(endpoint.as_bytes());
    h.update(b"\0");
    h.update(prompt_version.as_bytes());
    h.update(b"\0");
    h.update(body.as_bytes());
    h.finalize().to_hex().to_string()
}

impl Cache {
    pub fn new(dir: &Path) -> Self {
        Cache {
            root: dir.join(BUCKET),
        }
    }
    pub fn path(&self, key: &str) -> PathBuf {
        self.root.join(&key[..2]).join(format!("{key}.json"))
    }
    /// The entry under `key`, if present and whole.
    pub fn get(&self, key: &str) -> Option<Hit> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        let e: Hit = serde_json::from_slice(&bytes).ok()?;
        (e.key == key && e.status == 200).then_some(e)
    }
    /// Store an entry atomically (a unique temp name per writer, then rename).
    pub fn put(&self, e: &Entry) -> std::io::Result<()> {
        let path = self.path(&e.key);
        let dir = path.parent().expect("bucket dir");
        std::fs::create_dir_all(dir)?;
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!(".{}.{}.{n}.tmp", e.key, std::process::id()));
        let bytes = serde_json::to_vec_pretty(e).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &path).inspect_err(|_| {
            std::fs::remove_file(&tmp).ok();
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_broken_ones_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::new(dir.path());
        let body = r#"{"model": "m", "messages": []}"#;
        let k = key("http://x/v1/chat/completions", "p1", body);
        assert_ne!(k, key("http://x/v1/chat/completions", "p2", body));
        assert!(c.get(&k).is_none());
        let e = Entry {
            key: k.clone(),
            endpoint: "e".into(),
            prompt_version: "p1".into(),
            label: "t".into(),
            request: RawValue::from_string(body.into()).unwrap(),
            status: 200,
            response: "{}".into(),
        };
        c.put(&e).unwrap();
        assert_eq!(c.get(&k).unwrap().response, "{}");
        assert!(
            c.path(&k)
                .starts_with(dir.path().join(BUCKET).join(&k[..2]))
        );
        std::fs::write(c.path(&k), b"{\"key\": \"trunc").unwrap();
        assert!(c.get(&k).is_none());
    }
}
