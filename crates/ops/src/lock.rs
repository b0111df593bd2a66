//! One build at a time per folder: an exclusive lock on the output, work and reports folders,
//! and the removal of temp files that dead runs left behind.
//!
//! The lock is `flock` on `<folder>/.gtb.lock` (std's `File::lock`), released by the kernel
//! when the process ends, however it ends; the file holds the holder's pid so that a second
//! build can say who holds it. Every temp file gtb writes is named `<file>.tmp<PID>`, so a run
//! that holds the lock removes the temps of processes that are gone.

use anyhow::{Context, Result, bail};
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Name of the lock file in each locked folder.
pub const LOCK_FILE: &str = ".gtb.lock";

/// Held locks; dropping this releases them.
#[derive(Debug)]
pub struct FolderLock {
    _files: Vec<File>,
}

/// Lock `folders` (created if missing) for this process. A folder another gtb process holds
/// fails at once with its pid, or with `wait` blocks until it is free. Nested or repeated
/// folders are locked once each; locks are taken in path order, so two waiting builds never
/// deadlock.
pub fn lock_folders(folders: &[&Path], wait: bool) -> Result<FolderLock> {
    let mut dirs: Vec<PathBuf> = folders.iter().map(|p| p.to_path_buf()).collect();
    dirs.sort();
    dirs.dedup();
    let mut files = Vec::with_capacity(dirs.len());
    for d in &dirs {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        files.push(lock_one(d, wait)?);
    }
    Ok(FolderLock { _files: files })
}

fn lock_one(dir: &Path, wait: bool) -> Result<File> {
    let path = dir.join(LOCK_FILE);
    let mut f = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    match f.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) if wait => {
            eprintln!(
                "waiting for {} ({})",
                dir.display(),
                holder(&mut f).unwrap_or_else(|| "another gtb process".into())
            );
            f.lock()
                .with_context(|| format!("locking {}", path.display()))?;
        }
        Err(TryLockError::WouldBlock) => bail!(
            "{} is in use by {}: one build at a time per folder (use --wait to wait for it, or another --out)",
            dir.display(),
            holder(&mut f).unwrap_or_else(|| "another gtb process".into())
        ),
        Err(TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("locking {}", path.display()));
        }
    }
    // the holder's pid, for the message of a build that finds the folder locked
    f.set_len(0)?;
    f.rewind()?;
    write!(f, "{}", std::process::id())
        .and_then(|()| f.flush())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(f)
}

/// "gtb process 1234" from the lock file's content. The holder writes its pid right after it
/// took the lock: an empty file, or the pid of a previous holder that is gone, is read again
/// for a moment.
fn holder(f: &mut File) -> Option<String> {
    for _ in 0..50 {
        let mut s = String::new();
        f.rewind().ok()?;
        f.read_to_string(&mut s).ok()?;
        match s.trim().parse::<u32>() {
            Ok(pid) if alive(pid) => return Some(format!("gtb process {pid}")),
            _ => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
    None
}

/// The pid in a temp file's name `<name>.tmp<PID>`, if it is one.
fn temp_pid(name: &str) -> Option<u32> {
    let (_, pid) = name.rsplit_once(".tmp")?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether a process with this pid exists (signal 0 checks without sending anything).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks for the process; it has no other effect
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Remove `*.tmp<PID>` files of processes that no longer run, in `dirs` and their sub-folders
/// (splits and shards write one level down). Call only while holding the folders' locks.
/// Returns the removed files.
pub fn remove_stale_temps(dirs: &[&Path]) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for d in dirs {
        sweep(d, 2, &mut removed)?;
    }
    removed.sort();
    removed.dedup();
    Ok(removed)
}

fn sweep(dir: &Path, depth: u32, removed: &mut Vec<PathBuf>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            if depth > 0 {
                sweep(&p, depth - 1, removed)?;
            }
            continue;
        }
        let Some(pid) = p.file_name().and_then(|n| n.to_str()).and_then(temp_pid) else {
            continue;
        };
        if pid != std::process::id() && !alive(pid) {
            std::fs::remove_file(&p)
                .with_context(|| format!("removing the stale temp file {}", p.display()))?;
            removed.push(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_carry_the_pid() {
        assert_eq!(temp_pid("test.jsonl.tmp123"), Some(123));
        assert_eq!(temp_pid("test.tmp9"), Some(9));
        assert_eq!(temp_pid("test.tmp"), None);
        assert_eq!(temp_pid("test.tmpx1"), None);
        assert_eq!(temp_pid("test.jsonl"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(alive(std::process::id()));
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        assert!(!alive(pid));
    }

    #[test]
    fn a_second_lock_in_the_same_process_fails_with_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let _held = lock_folders(&[dir.path()], false).unwrap();
        // flock locks belong to the open file: a second open conflicts even in one process
        let e = lock_folders(&[dir.path()], false).unwrap_err().to_string();
        assert!(
            e.contains(&format!("gtb process {}", std::process::id())),
            "{e}"
        );
    }
}
