//! Stable digests and atomic file writes.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// blake3 of bytes, hex.
pub fn digest_bytes(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// sha256 of a file, hex (the manifest's checksum of test.jsonl, as `sha256sum` prints it),
/// read in 1 MiB pieces so that a large split is never held in memory.
pub fn sha256_file(path: &Path) -> Result<String> {
    use sha2::Digest;
    use std::io::Read;
    let mut f = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut h = sha2::Sha256::default();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// Lower-case hex of a digest, as `sha256sum` prints it.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Write a file atomically: a temp file beside it, fsync, then rename. A crash never leaves a
/// half-written file under the final name.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_streaming_atomic(path, |w| Ok(w.write_all(bytes)?))
}

/// Stream a file into place atomically: `fill` writes into a buffered temp file beside `path`
/// (named after this process, so concurrent writers never share one), which is flushed, synced
/// and renamed over `path` only when `fill` succeeded.
pub fn write_streaming_atomic(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension(format!(
        "{}.tmp{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    let written = (|| -> Result<()> {
        let f = std::fs::File::create(&tmp).context("creating")?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        fill(&mut w)?;
        w.flush()?;
        w.get_ref().sync_all().ok();
        Ok(())
    })();
    if let Err(e) = written {
        std::fs::remove_file(&tmp).ok();
        return Err(e.context(format!("writing {}", tmp.display())));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        std::fs::remove_file(&tmp).ok();
        anyhow::Error::from(e).context(format!("renaming {} to {}", tmp.display(), path.display()))
    })
}
