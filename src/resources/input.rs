//! Where raw inputs are read from: the file system, or, for a default data path that does not
//! exist relative to the working directory, the copy of the repository's data embedded at build
//! time (so `gtb build` works from any folder, e.g. after `cargo install`). Files on disk always
//! win; the embedded copy is announced once on stderr when used.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// (path relative to the repository, bytes), sorted by path.
static EMBEDDED: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/embedded_data.rs"));

fn key(path: &Path) -> Option<String> {
    if path.is_absolute() {
        return None;
    }
    let s = path.to_string_lossy().replace('\\', "/");
    Some(s.trim_start_matches("./").to_string())
}

fn announce() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        eprintln!(
            "note: raw_data/ not found under {cwd}: using the default data embedded in gtb {}",
            env!("CARGO_PKG_VERSION")
        );
    });
}

fn embedded(path: &Path) -> Option<&'static [u8]> {
    let k = key(path)?;
    EMBEDDED
        .binary_search_by(|(p, _)| (*p).cmp(k.as_str()))
        .ok()
        .map(|i| EMBEDDED[i].1)
}

/// The bytes of an input file.
pub fn read(path: &Path) -> std::io::Result<Cow<'static, [u8]>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Cow::Owned(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match embedded(path) {
            Some(b) => {
                announce();
                Ok(Cow::Borrowed(b))
            }
            None => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// Whether an input file exists (on disk or embedded).
pub fn exists(path: &Path) -> bool {
    path.exists() || embedded(path).is_some()
}

/// The `*.csv` files directly inside `dir`, sorted by name.
pub fn csv_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let is_csv = |p: &Path| p.extension().and_then(|e| e.to_str()) == Some("csv");
    match std::fs::read_dir(dir) {
        Ok(rd) => {
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| is_csv(p))
                .collect();
            files.sort();
            Ok(files)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let Some(prefix) = key(dir).map(|k| format!("{}/", k.trim_end_matches('/'))) else {
                return Err(e);
            };
            let files: Vec<PathBuf> = EMBEDDED
                .iter()
                .filter(|(p, _)| {
                    p.strip_prefix(prefix.as_str())
                        .is_some_and(|rest| !rest.contains('/'))
                })
                .map(|(p, _)| PathBuf::from(p))
                .filter(|p| is_csv(p))
                .collect();
            if files.is_empty() {
                return Err(e);
            }
            announce();
            Ok(files)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_data_is_sorted_and_holds_the_defaults() {
        assert!(EMBEDDED.windows(2).all(|w| w[0].0 < w[1].0));
        let d = crate::config::Paths::default();
        for p in [
            &d.cities,
            &d.transport,
            &d.profiles,
            &d.archetypes,
            &d.clusters,
        ] {
            assert!(embedded(p).is_some(), "{} is not embedded", p.display());
        }
        assert!(
            EMBEDDED
                .iter()
                .any(|(p, _)| p.starts_with("raw_data/attractions/"))
        );
    }
}
