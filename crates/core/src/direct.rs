//! A file written around the page cache (`O_DIRECT`), for the large outputs nothing reads
//! back in the same run: a world's cache files (about 100 KB a task).
//!
//! Why: writing a file through the page cache takes a fresh page of memory for every 4 KB of
//! it. On the virtual machines gtb is benchmarked and run on (2 cores, memory handed back to the
//! host when freed), taking those pages costs more than the write itself: 1.6 s of kernel time
//! per 500 MB against 0.1 s written directly. A 100,000-task world is about 10 GB.
//!
//! How: the bytes gather in a buffer aligned to [`ALIGN`] and go to the file a whole buffer at
//! a time; the last part-block, and everything after the file system refuses a direct write
//! (`EINVAL`: older tmpfs, some network and FUSE file systems), is written the usual way. The file's bytes
//! are the same either way.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// The alignment a direct write needs of its memory, length and offset (the largest logical
/// block size in use).
pub const ALIGN: usize = 4096;

/// Bytes gathered before each write.
const BLOCK: usize = 1 << 20;

pub struct DirectFile {
    file: File,
    /// `BLOCK + ALIGN` bytes, of which `BLOCK` from `start` are aligned
    buf: Vec<u8>,
    start: usize,
    len: usize,
    /// still writing directly (false once the file system refused)
    direct: bool,
}

impl DirectFile {
    /// Create (truncate) `path` for direct writing, or for the usual writing where direct
    /// writing cannot be had.
    pub fn create(path: &Path) -> io::Result<DirectFile> {
        let (file, direct) = match open_direct(path) {
            Ok(f) => (f, true),
            Err(_) => (File::create(path)?, false),
        };
        let buf = vec![0u8; BLOCK + ALIGN];
        let start = buf.as_ptr().align_offset(ALIGN).min(ALIGN);
        Ok(DirectFile {
            file,
            buf,
            start,
            len: 0,
            direct,
        })
    }

    /// Whether the file is still written directly.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    pub fn file(&self) -> &File {
        &self.file
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

    /// Write out everything gathered.
    pub fn finish(&mut self) -> io::Result<()> {
        self.drain(true)
    }
}

impl Write for DirectFile {
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

#[cfg(not(target_os = "linux"))]
fn open_direct(_: &Path) -> io::Result<File> {
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

    /// A file system that refuses direct writes (an open refused, or a write refused part way:
    /// the switch to the usual writing is the same call either way) gets the same bytes.
    #[test]
    fn a_refused_direct_write_goes_on_the_usual_way_with_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..2 * BLOCK + 5000).map(|i| (i % 253) as u8).collect();
        for switch_at in [0, 1, ALIGN + 3, BLOCK + 1, 2 * BLOCK + 4999] {
            let path = dir.path().join(format!("f{switch_at}"));
            let mut f = DirectFile::create(&path).unwrap();
            f.write_all(&bytes[..switch_at]).unwrap();
            f.flush().unwrap();
            f.buffered().unwrap();
            assert!(!f.is_direct());
            f.write_all(&bytes[switch_at..]).unwrap();
            assert_eq!(finished(f, &path), bytes, "switched at {switch_at}");
        }
    }
}
