//! Stable digests and atomic file writes.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// sha256 of bytes, hex.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// A sha256 taken on its own thread of the scope `s`, while the caller writes: send it what
/// was written, in order (`feed` hashes one message); drop the sender, then join the handle
/// for the hex digest. `depth` messages may wait.
pub fn sha256_thread<'s, M: Send + 's>(
    s: &'s std::thread::Scope<'s, '_>,
    depth: usize,
    feed: impl Fn(&mut sha2::Sha256, &M) + Send + 's,
) -> (
    std::sync::mpsc::SyncSender<M>,
    std::thread::ScopedJoinHandle<'s, String>,
) {
    use sha2::Digest;
    let (tx, rx) = std::sync::mpsc::sync_channel::<M>(depth);
    let hasher = s.spawn(move || {
        let mut h = sha2::Sha256::default();
        for m in rx {
            feed(&mut h, &m);
        }
        hex(&h.finalize())
    });
    (tx, hasher)
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

/// A temp file beside a final path, named after this process (`<name>.tmp<PID>`: a run that
/// holds the folder's lock removes those of dead processes, see `ops::lock`). Removed when
/// dropped unless it was renamed into place, so an error leaves nothing behind.
pub struct TempPath(PathBuf);

impl TempPath {
    pub fn beside(path: &Path) -> TempPath {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".tmp{}", std::process::id()));
        TempPath(path.with_file_name(name))
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    /// Rename the temp file over `path`.
    pub fn persist(self, path: &Path) -> Result<()> {
        std::fs::rename(&self.0, path)
            .with_context(|| format!("renaming {} to {}", self.0.display(), path.display()))
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        std::fs::remove_file(&self.0).ok();
    }
}

/// A buffered file writer whose errors name the file (a full disk says where it was full).
/// A large file is pushed to disk as it grows ([`Writeback`]), so that `finish` waits for the
/// last stretch only; or, made with [`FileWriter::create_direct`], written around the page
/// cache (`direct`).
pub struct FileWriter {
    sink: Sink,
    path: PathBuf,
    written: u64,
    writeback: Writeback,
}

enum Sink {
    Buffered(std::io::BufWriter<std::fs::File>),
    Direct(crate::direct::DirectFile),
}

impl FileWriter {
    pub fn create(path: &Path) -> Result<FileWriter> {
        let f =
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Self::over(
            Sink::Buffered(std::io::BufWriter::with_capacity(1 << 20, f)),
            path,
        ))
    }
    /// A writer for a large file that nothing reads back soon, or only directly (`direct`).
    pub fn create_direct(path: &Path) -> Result<FileWriter> {
        let f = crate::direct::DirectFile::create(path)
            .with_context(|| format!("creating {}", path.display()))?;
        Ok(Self::over(Sink::Direct(f), path))
    }
    fn over(sink: Sink, path: &Path) -> FileWriter {
        FileWriter {
            sink,
            path: path.to_path_buf(),
            written: 0,
            writeback: Writeback::default(),
        }
    }
    fn named(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(e.kind(), format!("writing {}: {e}", self.path.display()))
    }
    /// Flush and fsync.
    pub fn finish(mut self) -> Result<()> {
        self.flush()?;
        match &mut self.sink {
            Sink::Direct(d) => {
                let done = d.finish();
                done.map_err(|e| self.named(e))?;
            }
            Sink::Buffered(w) => {
                self.writeback.stop();
                w.get_ref().sync_all().ok();
            }
        }
        Ok(())
    }
}

impl Write for FileWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = match &mut self.sink {
            Sink::Buffered(w) => w.write(buf),
            Sink::Direct(d) => d.write(buf),
        };
        let n = n.map_err(|e| self.named(e))?;
        self.written += n as u64;
        // a direct write is on the disk already
        if let Sink::Buffered(w) = &self.sink {
            let in_file = self.written - w.buffer().len() as u64;
            self.writeback.grown(w.get_ref(), in_file);
        }
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let done = match &mut self.sink {
            Sink::Buffered(w) => w.flush(),
            Sink::Direct(d) => d.flush(),
        };
        done.map_err(|e| self.named(e))
    }
}

/// Writeback while a file is written: each [`Writeback::STRETCH`] bytes, a thread of the
/// writer's own syncs a handle of the file (skipped while it is still at the previous one).
/// The final fsync of a 500 MB task file then waits for the last stretch, not for all of it
/// (0.5 s of a 100,000-task build, twice, before).
#[derive(Default)]
struct Writeback {
    /// bytes in the file when the last sync was asked for
    asked_at: u64,
    tx: Option<std::sync::mpsc::SyncSender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writeback {
    const STRETCH: u64 = 32 << 20;

    /// The file holds `in_file` bytes: ask for a sync once another stretch is in.
    fn grown(&mut self, file: &std::fs::File, in_file: u64) {
        if in_file < self.asked_at + Self::STRETCH {
            return;
        }
        self.asked_at = in_file;
        if self.tx.is_none() {
            // no handle, no early writeback: `finish` syncs all of it as before
            let Ok(handle) = file.try_clone() else { return };
            let (tx, rx) = std::sync::mpsc::sync_channel::<()>(1);
            let thread = std::thread::Builder::new()
                .name("writeback".into())
                .spawn(move || {
                    while rx.recv().is_ok() {
                        handle.sync_data().ok();
                    }
                });
            let Ok(thread) = thread else { return };
            (self.tx, self.thread) = (Some(tx), Some(thread));
        }
        if let Some(tx) = &self.tx {
            tx.try_send(()).ok();
        }
    }

    /// Let the thread finish its sync and end.
    fn stop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

impl Drop for Writeback {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Stream a file into place atomically: `fill` writes into a buffered temp file beside `path`,
/// which is flushed, synced and renamed over `path` only when `fill` succeeded. Write errors
/// name the temp file; `fill` names what it reads.
pub fn write_streaming_atomic(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    stream_atomic(path, FileWriter::create, fill)
}

/// [`write_streaming_atomic`] around the page cache ([`FileWriter::create_direct`]), for a
/// large file that nothing reads back soon, or only with `direct::DirectRead`.
pub fn write_streaming_atomic_direct(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    stream_atomic(path, FileWriter::create_direct, fill)
}

fn stream_atomic(
    path: &Path,
    create: fn(&Path) -> Result<FileWriter>,
    fill: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = TempPath::beside(path);
    let mut w = create(tmp.path())?;
    fill(&mut w)?;
    w.finish()?;
    tmp.persist(path)
}
