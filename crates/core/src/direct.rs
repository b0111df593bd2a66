//! Large files written and read around the page cache (`O_DIRECT`): a world's cache files
//! (about 100 KB a task), the published task and plans files, and the task files that
//! `gtb validate`, `gtb audit` and the world's build read.
//!
//! Why: writing a file through the page cache takes a fresh page of memory for every 4 KB of
//! it. On the virtual machines gtb is benchmarked and run on (2 cores, memory handed back to the
//! host when freed), taking those pages costs more than the write itself: 1.6 s of kernel time
//! per 500 MB against 0.1 s written directly. A 100,000-task world is about 10 GB.
//!
//! How: the bytes gather in a buffer aligned to [`ALIGN`] and go to the file a whole buffer at
//! a time; the last part-block, and everything after the file system refuses a direct write
//! (`EINVAL`: older tmpfs, some network and FUSE file systems), is written the usual way. The
//! file's bytes are the same either way. A file is read the same way ([`DirectRead`], blocks of
//! [`READ_BLOCK`]), so that reading a file just written directly takes no pages either.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

/// The alignment a direct write needs of its memory, length and offset (the largest logical
/// block size in use).
pub const ALIGN: usize = 4096;

/// Bytes gathered before each write.
const BLOCK: usize = 1 << 20;

/// Bytes asked of the disk at a time when reading (a direct read has no read-ahead).
pub const READ_BLOCK: usize = 4 << 20;

/// The file opened directly, else the usual way; and whether directly.
fn opened(
    direct: io::Result<File>,
    usual: impl FnOnce() -> io::Result<File>,
) -> io::Result<(File, bool)> {
    match direct {
        Ok(f) => Ok((f, true)),
        Err(_) => Ok((usual()?, false)),
    }
}

/// A buffer of `size` bytes aligned to [`ALIGN`]: the vector and where the aligned part starts.
fn aligned(size: usize) -> (Vec<u8>, usize) {
    let buf = vec![0u8; size + ALIGN];
    let start = aligned_start(&buf);
    (buf, start)
}

/// Where the first [`ALIGN`]ed byte of `buf` is (within its first `ALIGN` bytes, for a buffer
/// that long).
pub fn aligned_start(buf: &[u8]) -> usize {
    buf.as_ptr().align_offset(ALIGN).min(ALIGN)
}

/// The writing itself, on the writer's thread (`DirectFile`).
struct Aligned {
    file: File,
    /// `BLOCK + ALIGN` bytes, of which `BLOCK` from `start` are aligned
    buf: Vec<u8>,
    start: usize,
    len: usize,
    /// still writing directly (false once the file system refused)
    direct: bool,
}

impl Aligned {
    /// Create (truncate) `path` for direct writing, or for the usual writing where direct
    /// writing cannot be had.
    fn create(path: &Path) -> io::Result<Aligned> {
        let (file, direct) = opened(open_direct(path), || File::create(path))?;
        let (buf, start) = aligned(BLOCK);
        Ok(Aligned {
            file,
            buf,
            start,
            len: 0,
            direct,
        })
    }

    /// Write out the gathered bytes: the whole blocks directly, and with `all` the rest too
    /// (the usual way).
    fn drain(&mut self, all: bool) -> io::Result<()> {
        let whole = if self.direct {
            self.len / ALIGN * ALIGN
        } else {
            self.len
        };
        let mut done = 0;
        while done < whole {
            let chunk = &self.buf[self.start + done..self.start + whole];
            match self.file.write(chunk) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // refused (or left unaligned by a short write): the rest the usual way
                Err(e) if self.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                    self.buffered()?
                }
                Err(e) => return Err(e),
            }
        }
        self.buf
            .copy_within(self.start + done..self.start + self.len, self.start);
        self.len -= done;
        if all && self.len > 0 {
            self.buffered()?;
            return self.drain(false);
        }
        Ok(())
    }

    /// From now on, the usual writing.
    fn buffered(&mut self) -> io::Result<()> {
        if self.direct {
            clear_direct(&self.file)?;
            self.direct = false;
        }
        Ok(())
    }

    /// Write out everything gathered, and sync the file (a file system that cannot sync is no
    /// error, as for the usual writing: `FileWriter::finish`).
    fn finish(&mut self) -> io::Result<()> {
        self.drain(true)?;
        self.file.sync_all().ok();
        Ok(())
    }
}

impl Write for Aligned {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.len == BLOCK {
            self.drain(false)?;
        }
        let n = data.len().min(BLOCK - self.len);
        let at = self.start + self.len;
        self.buf[at..at + n].copy_from_slice(&data[..n]);
        self.len += n;
        Ok(n)
    }
    /// Writes out the whole blocks; the last part-block waits for `finish`.
    fn flush(&mut self) -> io::Result<()> {
        self.drain(false)
    }
}

/// A file written around the page cache on a thread of its own: a direct write waits for the
/// disk, so the bytes are handed over a block at a time while the caller goes on.
pub struct DirectFile {
    /// the block being filled
    block: Vec<u8>,
    to: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    /// blocks written, to be filled again
    back: std::sync::mpsc::Receiver<Vec<u8>>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
}

impl DirectFile {
    /// Create (truncate) `path` for direct writing, or for the usual writing where direct
    /// writing cannot be had.
    pub fn create(path: &Path) -> io::Result<DirectFile> {
        Self::over(Aligned::create(path)?)
    }

    fn over(mut file: Aligned) -> io::Result<DirectFile> {
        let (to, blocks) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
        let (give_back, back) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("direct-write".into())
            .spawn(move || {
                for mut block in blocks {
                    file.write_all(&block)?;
                    block.clear();
                    give_back.send(block).ok();
                }
                file.finish()
            })?;
        Ok(DirectFile {
            block: Vec::with_capacity(BLOCK),
            to: Some(to),
            back,
            thread: Some(thread),
        })
    }

    /// Hand the block being filled to the writer's thread.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let next = self
            .back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BLOCK));
        let full = std::mem::replace(&mut self.block, next);
        let sent = self.to.as_ref().map(|to| to.send(full));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => Err(self.stop().err().unwrap_or_else(stopped)),
        }
    }

    /// End the writer's thread: its first error, if any.
    fn stop(&mut self) -> io::Result<()> {
        self.to = None;
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| Err(stopped())),
            None => Err(stopped()),
        }
    }

    /// Write out everything, and sync the file.
    pub fn finish(&mut self) -> io::Result<()> {
        self.hand_over()?;
        self.stop()
    }
}

fn stopped() -> io::Error {
    io::Error::other("the file's writer stopped")
}

impl Write for DirectFile {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.block.len() == BLOCK {
            self.hand_over()?;
        }
        let n = data.len().min(BLOCK - self.block.len());
        self.block.extend_from_slice(&data[..n]);
        Ok(n)
    }
    /// Hands over the bytes so far (they are on the disk by `finish`).
    fn flush(&mut self) -> io::Result<()> {
        self.hand_over()
    }
}

impl Drop for DirectFile {
    fn drop(&mut self) {
        self.to = None;
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

/// A file read around the page cache, a [`READ_BLOCK`] at a time (the usual way where the file
/// system refuses), as a buffered reader. A read of a whole aligned buffer of at least a block
/// goes straight into it, past this reader's buffer.
pub struct DirectRead {
    disk: Disk,
    buf: Vec<u8>,
    start: usize,
    /// the unread bytes of the block: `buf[start + pos..start + len]`
    pos: usize,
    len: usize,
}

/// The file of a [`DirectRead`], and how it is being read.
struct Disk {
    file: File,
    direct: bool,
    /// the file's offset is a multiple of [`ALIGN`] (every read so far was of whole blocks)
    aligned: bool,
}

impl Disk {
    /// One read into `out`; None when the file system refused to read directly (the offset
    /// or memory not aligned, or at the unaligned end of the file after its last block): it
    /// reads the usual way from then on, ask again.
    fn read(&mut self, out: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            match self.file.read(out) {
                Ok(n) => {
                    self.aligned &= n % ALIGN == 0;
                    return Ok(Some(n));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if self.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                    clear_direct(&self.file)?;
                    self.direct = false;
                    return Ok(None);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl DirectRead {
    pub fn open(path: &Path) -> io::Result<DirectRead> {
        let (file, direct) = opened(open_direct_read(path), || File::open(path))?;
        let (buf, start) = aligned(READ_BLOCK);
        Ok(DirectRead {
            disk: Disk {
                file,
                direct,
                aligned: true,
            },
            buf,
            start,
            pos: 0,
            len: 0,
        })
    }

    /// Read straight into `out` when this reader's buffer is used up and the read can be
    /// direct (`out` aligned and at least a block, the offset aligned): all of `out`'s whole
    /// blocks, so that a caller reading large blocks has nothing copied. None when it cannot.
    fn read_past(&mut self, out: &mut [u8]) -> io::Result<Option<usize>> {
        let whole = out.len() / ALIGN * ALIGN;
        let Disk {
            direct, aligned, ..
        } = self.disk;
        let usable = self.pos == self.len && direct && aligned;
        if !usable || whole < READ_BLOCK || out.as_ptr().align_offset(ALIGN) != 0 {
            return Ok(None);
        }
        self.disk.read(&mut out[..whole])
    }

    /// Read the next block once this one is used up.
    fn refill(&mut self) -> io::Result<()> {
        if self.pos < self.len {
            return Ok(());
        }
        loop {
            let block = &mut self.buf[self.start..self.start + READ_BLOCK];
            if let Some(n) = self.disk.read(block)? {
                (self.pos, self.len) = (0, n);
                return Ok(());
            }
        }
    }
}

impl Read for DirectRead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        use io::BufRead;
        if let Some(n) = self.read_past(out)? {
            return Ok(n);
        }
        let have = self.fill_buf()?;
        let n = have.len().min(out.len());
        out[..n].copy_from_slice(&have[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl io::BufRead for DirectRead {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.refill()?;
        Ok(&self.buf[self.start + self.pos..self.start + self.len])
    }
    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.len);
    }
}

#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

#[cfg(target_os = "linux")]
fn open_direct_read(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_: &Path) -> io::Result<File> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(not(target_os = "linux"))]
fn open_direct_read(_: &Path) -> io::Result<File> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(target_os = "linux")]
fn clear_direct(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this File owns, with integer arguments only
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn clear_direct(_: &File) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file's bytes once `f` is finished and closed.
    fn finished(mut f: DirectFile, path: &Path) -> Vec<u8> {
        f.finish().unwrap();
        drop(f);
        std::fs::read(path).unwrap()
    }

    /// The file holds exactly what was written, whatever the sizes of the file and of the
    /// writes: empty, under a block of the disk, at and around the boundaries, several buffers.
    #[test]
    fn direct_files_hold_exactly_the_bytes_written() {
        let dir = tempfile::tempdir().unwrap();
        let sizes = [
            0,
            1,
            ALIGN - 1,
            ALIGN,
            ALIGN + 1,
            BLOCK - 1,
            BLOCK,
            BLOCK + 1,
            3 * BLOCK + 777,
        ];
        for (k, &size) in sizes.iter().enumerate() {
            let bytes: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
            for piece in [1usize, 4093, 65536, 1 << 21] {
                let path = dir.path().join(format!("f{k}-{piece}"));
                let mut f = DirectFile::create(&path).unwrap();
                for chunk in bytes.chunks(piece) {
                    f.write_all(chunk).unwrap();
                }
                f.flush().unwrap();
                assert_eq!(finished(f, &path), bytes, "size {size}, writes of {piece}");
            }
        }
    }

    /// A write the disk refuses (a full one: `/dev/full`) is an error of the writer, by
    /// `finish` at the latest, never bytes silently lost.
    #[test]
    fn a_failed_write_is_an_error_by_finish() {
        let full = Path::new("/dev/full");
        if !full.exists() {
            eprintln!("skipped: no /dev/full on this machine");
            return;
        }
        let mut f = DirectFile::create(full).unwrap();
        let bytes = vec![7u8; 3 * BLOCK + 1];
        let wrote = f.write_all(&bytes).and_then(|_| f.finish());
        assert!(wrote.is_err(), "writing to /dev/full succeeded");
    }

    /// A file read directly gives back exactly its bytes, whatever its size and the sizes
    /// asked for, through `Read` and through `BufRead`'s lines.
    #[test]
    fn direct_reads_give_back_exactly_the_file() {
        use std::io::{BufRead, Read};
        let dir = tempfile::tempdir().unwrap();
        for size in [
            0,
            1,
            ALIGN - 1,
            ALIGN,
            READ_BLOCK - 1,
            READ_BLOCK,
            READ_BLOCK + 4097,
        ] {
            let bytes: Vec<u8> = (0..size)
                .map(|i| {
                    if i % 97 == 96 {
                        b'\n'
                    } else {
                        b'a' + (i % 26) as u8
                    }
                })
                .collect();
            let path = dir.path().join(format!("r{size}"));
            std::fs::write(&path, &bytes).unwrap();
            for piece in [1usize, 4093, 1 << 22] {
                let mut r = DirectRead::open(&path).unwrap();
                let (mut got, mut chunk) = (Vec::new(), vec![0u8; piece]);
                loop {
                    let n = r.read(&mut chunk).unwrap();
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&chunk[..n]);
                }
                assert_eq!(got, bytes, "size {size}, reads of {piece}");
            }
            // reads into aligned buffers of whole blocks go past the reader's buffer
            let (mut big, start) = aligned(2 * READ_BLOCK + ALIGN);
            for first in [0usize, 1, ALIGN] {
                let mut r = DirectRead::open(&path).unwrap();
                let mut got = vec![0u8; first];
                let n = r.read(&mut got).unwrap();
                got.truncate(n);
                for len in [READ_BLOCK, 2 * READ_BLOCK + ALIGN - 1, 4096]
                    .iter()
                    .cycle()
                {
                    let n = r.read(&mut big[start..start + len]).unwrap();
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&big[start..start + n]);
                }
                assert_eq!(got, bytes, "size {size}, an aligned read after {first}");
            }
            let lines: Vec<String> = DirectRead::open(&path)
                .unwrap()
                .lines()
                .map(|l| l.unwrap())
                .collect();
            let want: Vec<String> = std::str::from_utf8(&bytes)
                .unwrap()
                .lines()
                .map(String::from)
                .collect();
            assert_eq!(lines, want, "lines of size {size}");
        }
    }

    /// A file system that refuses direct writes (an open refused, or a write refused part way:
    /// the switch to the usual writing is the same call either way) gets the same bytes.
    #[test]
    fn a_refused_direct_write_goes_on_the_usual_way_with_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..2 * BLOCK + 5000).map(|i| (i % 253) as u8).collect();
        for switch_at in [0, 1, ALIGN + 3, BLOCK + 1, 2 * BLOCK + 4999] {
            let path = dir.path().join(format!("f{switch_at}"));
            let mut f = Aligned::create(&path).unwrap();
            f.write_all(&bytes[..switch_at]).unwrap();
            f.flush().unwrap();
            f.buffered().unwrap();
            assert!(!f.direct);
            f.write_all(&bytes[switch_at..]).unwrap();
            let front = DirectFile::over(f).unwrap();
            assert_eq!(finished(front, &path), bytes, "switched at {switch_at}");
        }
    }
}
