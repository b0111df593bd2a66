//! What `sample` hands on: the split's skeletons, streamed from the sample artifact a chunk at
//! a time, and their counts. A skeleton held in memory is about 1.2 KB (twenty-odd small
//! strings), so a build that held them all peaked at 1.35 GiB for a million tasks; streamed,
//! a build's memory does not grow with its size.

use super::sample::class_of;
use anyhow::{Context, Result};
use gtb_core::jsonl::{JSONL_GROUP, decode_line, write_jsonl_lines};
use gtb_core::task::Skeleton;
use rayon::prelude::*;
use std::io::BufRead;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The skeletons of the split's slots, in slot order, in the sample artifact.
pub(super) struct Sampled {
    path: PathBuf,
    /// how many (one per slot)
    pub n: usize,
    /// how many of each class (`Class::index`)
    pub classes: [usize; 3],
}

impl Sampled {
    /// Sample `slots` (`sample`, one slot's skeleton) into the artifact at `path`, a group at a
    /// time: each group sampled and serialised in parallel, and written in slot order.
    pub fn write(
        path: &Path,
        slots: Range<usize>,
        sample: impl Fn(usize) -> Result<Skeleton> + Sync,
    ) -> Result<Sampled> {
        let mut counts = Counts::default();
        gtb_core::digest::write_streaming_atomic(path, |w| {
            let mut start = slots.start;
            while start < slots.end {
                let end = slots.end.min(start + JSONL_GROUP);
                let group = (start..end)
                    .into_par_iter()
                    .map(&sample)
                    .collect::<Result<Vec<_>>>()?;
                write_jsonl_lines(w, &group)?;
                counts.add(&group);
                start = end;
            }
            Ok(())
        })?;
        Ok(counts.of(path))
    }

    /// The skeletons an earlier run wrote at `path`, counted (every line decoded, so that a
    /// damaged artifact is named now rather than halfway through the build).
    pub fn read(path: &Path) -> Result<Sampled> {
        let mut counts = Counts::default();
        for chunk in Chunks::open(path, JSONL_GROUP)? {
            counts.add(&chunk?);
        }
        Ok(counts.of(path))
    }

    /// The skeletons in slot order, `size` at a time.
    pub fn chunks(&self, size: usize) -> Result<Chunks> {
        Chunks::open(&self.path, size)
    }
}

#[derive(Default)]
struct Counts {
    n: usize,
    classes: [usize; 3],
}

impl Counts {
    fn add(&mut self, skeletons: &[Skeleton]) {
        self.n += skeletons.len();
        for s in skeletons {
            self.classes[class_of(&s.difficulty_type).index()] += 1;
        }
    }
    fn of(self, path: &Path) -> Sampled {
        Sampled {
            path: path.to_path_buf(),
            n: self.n,
            classes: self.classes,
        }
    }
}

/// The skeletons of a sample artifact, `size` at a time (blank lines skipped, as
/// `gtb_core::jsonl::from_jsonl` skips them); a line that does not decode is an error naming
/// the file and line.
pub(super) struct Chunks {
    path: PathBuf,
    r: std::io::BufReader<std::fs::File>,
    /// lines read so far
    line: usize,
    size: usize,
    done: bool,
}

impl Chunks {
    fn open(path: &Path, size: usize) -> Result<Chunks> {
        let file =
            std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
        Ok(Chunks {
            path: path.to_path_buf(),
            r: std::io::BufReader::with_capacity(1 << 20, file),
            line: 0,
            size: size.max(1),
            done: false,
        })
    }

    /// The next lines (with their line numbers), up to `size` that are not blank.
    fn lines(&mut self) -> Result<Vec<(usize, String)>> {
        let mut out = Vec::with_capacity(self.size);
        while out.len() < self.size {
            let mut l = String::new();
            let read = self.r.read_line(&mut l);
            self.line += 1;
            let read = read.with_context(|| format!("{}:{}", self.path.display(), self.line))?;
            if read == 0 {
                self.done = true;
                break;
            }
            if !l.trim().is_empty() {
                out.push((self.line, l));
            }
        }
        Ok(out)
    }

    /// Decode lines in parallel; the first bad one (in file order) is the error.
    fn decode(&self, lines: Vec<(usize, String)>) -> Result<Vec<Skeleton>> {
        let decoded: Vec<Result<Skeleton>> = lines
            .into_par_iter()
            .map(|(at, l)| decode_line(&l, at, &self.path))
            .collect();
        decoded.into_iter().collect()
    }
}

impl Iterator for Chunks {
    type Item = Result<Vec<Skeleton>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let chunk = self.lines().and_then(|lines| self.decode(lines));
        match chunk {
            Ok(c) if c.is_empty() => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
            ok => Some(ok),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gtb_core::task::SkeletonMember;

    fn skeleton(slot: usize) -> Skeleton {
        let class = ["easy", "medium", "hard"][slot % 3];
        Skeleton {
            index: slot,
            task_id: format!("task_{slot}"),
            group_id: "2-1".into(),
            departure_city: "北京市".into(),
            cities: vec!["杭州市".into(); 1 + slot % 3],
            days: 2 + (slot % 5) as u32,
            date: "2025-09-19".into(),
            compromise_pattern: vec!["User2".into()],
            members: vec![SkeletonMember {
                user: "User1".into(),
                role: "父亲".into(),
                profile: format!("P{slot:05}"),
            }],
            difficulty_score: 3.5,
            difficulty_type: class.into(),
        }
    }

    /// Issue 27 (a million tasks overnight): the skeletons are streamed from the artifact, not
    /// held; the artifact is `write_jsonl`'s bytes, and every chunk size gives back every
    /// skeleton once, in slot order, with the counts.
    #[test]
    fn issue27_sampled_skeletons_stream_back_in_slot_order_at_any_chunk_size() {
        let dir = tempfile::tempdir().unwrap();
        let (path, whole) = (
            dir.path().join("sample.jsonl"),
            dir.path().join("whole.jsonl"),
        );
        let slots = 5..(5 + JSONL_GROUP + 7);
        let want: Vec<Skeleton> = slots.clone().map(skeleton).collect();
        let sampled = Sampled::write(&path, slots, |s| Ok(skeleton(s))).unwrap();
        gtb_core::jsonl::write_jsonl(&whole, &want).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            std::fs::read(&whole).unwrap()
        );
        let read = Sampled::read(&path).unwrap();
        for s in [&sampled, &read] {
            assert_eq!(s.n, want.len());
            let easy = want.iter().filter(|k| k.difficulty_type == "easy").count();
            assert_eq!(s.classes[0], easy);
            assert_eq!(s.classes.iter().sum::<usize>(), want.len());
        }
        for size in [1, 4096, JSONL_GROUP + 7, JSONL_GROUP + 100] {
            let chunks: Vec<Vec<Skeleton>> =
                read.chunks(size).unwrap().map(Result::unwrap).collect();
            assert!(chunks.iter().all(|c| !c.is_empty() && c.len() <= size));
            assert_eq!(chunks.concat(), want, "chunks of {size}");
        }
    }

    /// A damaged artifact is named by file and line (the first bad line), a sampling error
    /// comes back, and blank lines are skipped as `from_jsonl` skips them.
    #[test]
    fn issue27_a_bad_sample_line_is_named_by_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sample.jsonl");
        let mut text = String::new();
        for slot in 0..6 {
            text += &serde_json::to_string(&skeleton(slot)).unwrap();
            text += "\n";
        }
        text += "\n{\"index\": 6}\n{not json}\n";
        std::fs::write(&path, &text).unwrap();
        let e = format!("{:#}", Sampled::read(&path).err().unwrap());
        assert!(e.contains("sample.jsonl:8:"), "{e}");
        let first: Vec<Skeleton> = Chunks::open(&path, 6).unwrap().next().unwrap().unwrap();
        assert_eq!(first.len(), 6);
        std::fs::write(&path, b"\xff\n").unwrap();
        let e = format!("{:#}", Sampled::read(&path).err().unwrap());
        assert!(e.contains("sample.jsonl:1"), "{e}");
        let failed = Sampled::write(&path, 0..10, |s| match s {
            7 => anyhow::bail!("slot 7 finds no skeleton"),
            s => Ok(skeleton(s)),
        });
        assert!(format!("{:#}", failed.err().unwrap()).contains("slot 7"));
    }
}
