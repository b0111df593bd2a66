//! Where raw inputs are read from: the file system, or the copy of the repository's data
//! embedded at build time (so `gtb build` works from any folder, e.g. after `cargo install`).
//!
//! One rule, per data folder (`raw_data/`, `archetypes/`, `city_clusters/`, the first component
//! of a relative default path): when the folder exists on disk, every file under it is read
//! from disk, and a missing one is an error naming it (never a silent mix of edited files and
//! embedded ones); when the folder does not exist, its files come from the embedded copy, and
//! gtb says so once per folder. Absolute paths (`[paths]` of a config file) are always read
//! from disk.

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

/// The data folder a relative path belongs to (`raw_data` for `raw_data/food/x.csv`).
fn root_folder(key: &str) -> &str {
    key.split('/').next().unwrap_or(key)
}

/// Whether the embedded copy stands in for `path`: it is relative and its data folder does not
/// exist on disk.
fn embedded_stands_in(path: &Path) -> Option<String> {
    let k = key(path)?;
    (!Path::new(root_folder(&k)).exists()).then_some(k)
}

fn announce(folder: &str) {
    static ANNOUNCED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut done = ANNOUNCED.lock().unwrap_or_else(|e| e.into_inner());
    if done.iter().any(|f| f == folder) {
        return;
    }
    done.push(folder.to_string());
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    eprintln!(
        "note: {folder}/ not found under {cwd}: using the default data embedded in gtb {} for {folder}/",
        env!("CARGO_PKG_VERSION")
    );
}

fn embedded(path: &Path) -> Option<&'static [u8]> {
    let k = key(path)?;
    EMBEDDED
        .binary_search_by(|(p, _)| (*p).cmp(k.as_str()))
        .ok()
        .map(|i| EMBEDDED[i].1)
}

/// Why a file of an existing data folder is missing: the error says the folder is read from
/// disk as a whole.
fn missing(path: &Path, e: std::io::Error) -> std::io::Error {
    match key(path) {
        Some(k) if embedded(path).is_some() || Path::new(root_folder(&k)).exists() => {
            std::io::Error::new(
                e.kind(),
                format!(
                    "{e}; {}/ exists here, so all of it is read from disk (restore the file, or point [paths] at another one; without a {}/ folder gtb uses its embedded default data)",
                    root_folder(&k),
                    root_folder(&k)
                ),
            )
        }
        _ => e,
    }
}

/// The bytes of an input file.
pub fn read(path: &Path) -> std::io::Result<Cow<'static, [u8]>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Cow::Owned(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            match embedded_stands_in(path).zip(embedded(path)) {
                Some((k, b)) => {
                    announce(root_folder(&k));
                    Ok(Cow::Borrowed(b))
                }
                None => Err(missing(path, e)),
            }
        }
        Err(e) => Err(e),
    }
}

/// Whether an input file exists (on disk, or embedded when its data folder is absent).
pub fn exists(path: &Path) -> bool {
    path.exists() || (embedded_stands_in(path).is_some() && embedded(path).is_some())
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
            let Some(k) = embedded_stands_in(dir) else {
                return Err(missing(dir, e));
            };
            let prefix = format!("{}/", k.trim_end_matches('/'));
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
            announce(root_folder(&k));
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
        let d = gtb_core::config::Paths::default();
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
