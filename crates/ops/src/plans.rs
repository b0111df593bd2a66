//! Publishing the witnesses of a split (`[solve]`, on by default): the validate stage kept a
//! witness line per accepted task (`witness.jsonl`, slot order); publishing writes them to
//! `plans.jsonl` beside the task file in the task file's shuffled order (the same permutation:
//! one line per task), then the reference figures to `<reports>/witness.{md,json}`, and hands
//! the manifest its `witness` section. Nothing is solved twice.

use crate::solve::{FigureTally, Figures, Sample, SlotSamples};
use anyhow::{Context, Result, bail};
use gtb_core::digest;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The reports written with a split's plans.
pub const WITNESS_REPORTS: [&str; 2] = ["witness.json", "witness.md"];

/// Where a split's plans go: beside its task file.
pub fn plans_path(tasks: &Path) -> PathBuf {
    tasks.with_file_name("plans.jsonl")
}

/// The witness lines to publish with a split: one part per part of its task lines.
pub struct Witnesses {
    pub parts: Vec<PathBuf>,
    /// slots whose task was regenerated or replaced for want of a witness plan
    pub regenerated: usize,
    /// the figures' samples of every slot, when validate ran in this process (else the
    /// published plans are read back for them)
    pub samples: Option<SlotSamples>,
}

/// Write `plans.jsonl` in the task file's order (the shuffle of `seed`, as the task file's):
/// its sha256 and line count. It needs nothing of the task file, so publishing writes the two
/// at once.
pub(crate) fn write_plans(w: &Witnesses, seed: u64, tasks: &Path) -> Result<(String, usize)> {
    crate::lines::Lines::scan(&w.parts)?.write_shuffled(seed, &plans_path(tasks))
}

/// The witness reports of the plans `write_plans` wrote (`plans`: its sha256 and line count);
/// returns the manifest's `witness` section. `tasks_sha` is the published task file's sha256,
/// `lines` its line count.
pub(crate) fn publish_plans(
    w: &Witnesses,
    (sha, n, seed): (String, usize, u64),
    tasks: &Path,
    reports: &Path,
    (tasks_sha, lines): (&str, usize),
) -> Result<Value> {
    let plans = plans_path(tasks);
    if n != lines {
        bail!(
            "{}: {n} witness lines for {lines} tasks (every task of a build has one)",
            plans.display()
        );
    }
    let figures = match &w.samples {
        Some(s) if s.len() == n => s.figures(&crate::lines::shuffled_order(seed, n)),
        _ => tally_plans(tasks, &plans)?,
    };
    write_reports(reports, tasks, &plans, tasks_sha, &sha, &figures)?;
    Ok(json!({
        "plans_jsonl_sha256": sha,
        "tasks_with_witness": n,
        "regenerated_for_witness": w.regenerated,
        "stand_ins": stand_ins(&figures),
        "figures": figures,
    }))
}

/// A task line as the figures read it.
#[derive(serde::Deserialize)]
struct TaskKey {
    task_id: String,
    difficulty_type: String,
}

/// A plans-file line as the figures read it: the plan is only checked to be there (the
/// figures are the line's scores), and is never built.
#[derive(serde::Deserialize)]
struct WitnessKey {
    task_id: String,
    plan: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    compromises: Vec<serde::de::IgnoredAny>,
    #[serde(default)]
    scores: Option<Value>,
}

/// The figures of a published split, its task file and plans read in step and tallied in file
/// order: every line of the plans must be its task's witness. Each file is read in blocks
/// around the page cache, the next block decoded while this one is tallied, and the task file
/// on a thread of its own (`gtb_core::jsonl::blocks_on`), so that reading the two files that
/// publishing has just written overlaps.
fn tally_plans(tasks: &Path, plans: &Path) -> Result<Figures> {
    const BLOCK: usize = 4096;
    let mut tally = FigureTally::default();
    let mut line = 0;
    std::thread::scope(|s| -> Result<()> {
        let task_blocks = gtb_core::jsonl::blocks_on::<TaskKey>(s, tasks, BLOCK);
        let mut keys = std::collections::VecDeque::new();
        gtb_core::jsonl::read_blocks(plans, BLOCK, |lines: Vec<WitnessKey>| {
            while keys.len() < lines.len()
                && let Ok(b) = task_blocks.recv()
            {
                keys.extend(b?);
            }
            for l in lines {
                line += 1;
                let Some(t) = keys.pop_front() else {
                    bail!(
                        "{}:{line}: a witness line beyond the tasks",
                        plans.display()
                    );
                };
                if t.task_id != l.task_id || l.plan.is_none() {
                    bail!(
                        "{}:{line}: the line of task {} is not its witness ({} {:?})",
                        plans.display(),
                        t.task_id,
                        l.task_id,
                        l.reason
                    );
                }
                let compromises = !l.compromises.is_empty();
                let sample = l.scores.as_ref().map(|s| Sample::of_scores(s, compromises));
                tally.add_sample(&t.difficulty_type, sample);
            }
            Ok(())
        })?;
        // the reader sends its next block, or its error, or closes at the end of the file
        let more = match task_blocks.recv() {
            Ok(b) => !b?.is_empty(),
            Err(_) => false,
        };
        if more || !keys.is_empty() {
            bail!(
                "{}: more tasks than the {line} witness lines of {}",
                tasks.display(),
                plans.display()
            );
        }
        Ok(())
    })?;
    Ok(tally.finish())
}

/// The stand-in counts of the whole split (manifest: how real the venues are).
fn stand_ins(f: &Figures) -> Value {
    let all = f.by_difficulty.get("all").cloned().unwrap_or_default();
    json!({
        "hotels": all.hotels,
        "hotel_share": all.hotel_stand_in_share,
        "meals": all.meals,
        "meal_share": all.meal_stand_in_share,
        "share": all.stand_in_share,
    })
}

fn write_reports(
    dir: &Path,
    tasks: &Path,
    plans: &Path,
    tasks_sha: &str,
    plans_sha: &str,
    figures: &Figures,
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let described = json!({
        "tasks": tasks.display().to_string(),
        "tasks_sha256": tasks_sha,
        "plans_sha256": plans_sha,
        "figures": figures,
    });
    digest::write_atomic(
        &dir.join("witness.json"),
        &serde_json::to_vec_pretty(&described)?,
    )?;
    let md = format!(
        "# Witness plans\n\nEvery task of `{}` (sha256 {tasks_sha}) has a witness plan in `{}` (sha256 {plans_sha}; docs/PLANS.md). \
         Reference figures of the witnesses (means over the tasks; shares of tasks; stand-ins among the plans' hotel nights and meals):\n\n{}",
        tasks.display(),
        plans.display(),
        figures.to_markdown()
    );
    digest::write_atomic(&dir.join("witness.md"), md.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two tasks and their witness lines; `second_id` names the second plans line's task.
    fn split(second_id: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let tasks = dir.path().join("test.jsonl");
        let plans = dir.path().join("plans.jsonl");
        std::fs::write(
            &tasks,
            "{\"task_id\": \"a\", \"difficulty_type\": \"easy\", \"x\": [1, {\"y\": 2}]}\n\
             {\"task_id\": \"b\\u0041\", \"difficulty_type\": \"hard\"}\n",
        )
        .unwrap();
        let line = |id: &str, compromises: &str, utility: f64| {
            format!(
                "{{\"task_id\": \"{id}\", \"plan\": {{\"days\": [{{\"day\": 1}}]}}, \"compromises\": [{compromises}], \
                 \"scores\": {{\"group_utility\": {utility}, \"per_user_average\": 1.5, \"fairness\": 0.9, \
                 \"upper_bound\": 9.0, \"split_penalty\": 1, \"venues\": {{\"hotels\": 3, \"hotel_stand_ins\": 1, \
                 \"meals\": 4, \"meal_stand_ins\": 2}}}}}}\n"
            )
        };
        let body = line("a", "", 4.0)
            + &line(
                second_id,
                "{\"user\": \"u\", \"path\": \"p\", \"value\": 1}",
                7.0,
            );
        std::fs::write(&plans, body).unwrap();
        (dir, tasks, plans)
    }

    #[test]
    fn figures_read_from_the_files_are_those_of_the_parsed_lines() {
        let (_dir, tasks, plans) = split("b\\u0041");
        let streamed = tally_plans(&tasks, &plans).unwrap();
        let read = |p: &Path| -> Vec<String> {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines().map(str::to_string).collect()
        };
        let mut tally = FigureTally::default();
        for (t, l) in read(&tasks).iter().zip(read(&plans)) {
            let t: Value = serde_json::from_str(t).unwrap();
            let l: gtb_plan::PlanLine = serde_json::from_str(&l).unwrap();
            tally.add(t["difficulty_type"].as_str().unwrap(), Some(&l));
        }
        let parsed = tally.finish();
        assert_eq!(streamed.by_difficulty, parsed.by_difficulty);
        let all = &streamed.by_difficulty["all"];
        assert_eq!(
            (all.tasks, all.with_plan, all.hotels, all.meals),
            (2, 2, 6, 8)
        );
        assert_eq!(all.with_compromises, 0.5);
        assert_eq!(all.group_utility, 5.5);
    }

    /// Issue 27: the figures validate's samples give in the published order are those of
    /// reading the published task and plans files back, line for line (floats summed in the
    /// same order), for a shuffle that moves the lines.
    #[test]
    fn issue27_figures_of_the_slots_samples_are_those_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let (task_part, witness_part) = (dir.path().join("t.part"), dir.path().join("w.part"));
        let (mut task_lines, mut witness_lines) = (String::new(), String::new());
        let mut samples = SlotSamples::default();
        for i in 0..40u32 {
            let difficulty = ["easy", "medium", "hard"][i as usize % 3];
            task_lines +=
                &format!("{{\"task_id\": \"t{i}\", \"difficulty_type\": \"{difficulty}\"}}\n");
            let utility = f64::from(i) * 0.7 + 0.1;
            let compromises = match i % 4 {
                0 => "{\"user\": \"u\", \"path\": \"p\", \"value\": 1}",
                _ => "",
            };
            let line = format!(
                "{{\"task_id\": \"t{i}\", \"plan\": {{\"days\": []}}, \"compromises\": [{compromises}], \
                 \"scores\": {{\"group_utility\": {utility}, \"per_user_average\": {}, \"fairness\": 0.3, \
                 \"upper_bound\": 99.0, \"split_penalty\": {}, \"venues\": {{\"hotels\": {i}, \"meals\": 2}}}}}}",
                utility / 3.0,
                i % 2
            );
            samples.push(difficulty, &serde_json::from_str(&line).unwrap());
            witness_lines += &(line + "\n");
        }
        std::fs::write(&task_part, task_lines).unwrap();
        std::fs::write(&witness_part, witness_lines).unwrap();
        let (seed, tasks) = (11, dir.path().join("test.jsonl"));
        let w = Witnesses {
            parts: vec![witness_part],
            regenerated: 0,
            samples: Some(samples),
        };
        crate::lines::Lines::scan(&[task_part])
            .unwrap()
            .write_shuffled(seed, &tasks)
            .unwrap();
        let (_, n) = write_plans(&w, seed, &tasks).unwrap();
        let order = crate::lines::shuffled_order(seed, n);
        assert_ne!(order, (0..n).collect::<Vec<_>>());
        let read_back = tally_plans(&tasks, &plans_path(&tasks)).unwrap();
        let held = w.samples.as_ref().unwrap().figures(&order);
        assert_eq!(held, read_back);
        assert_eq!(held.by_difficulty["all"].tasks, 40);
    }

    #[test]
    fn a_plans_line_of_another_task_is_an_error_naming_its_line() {
        let (_dir, tasks, plans) = split("c");
        let e = format!("{:#}", tally_plans(&tasks, &plans).unwrap_err());
        assert!(
            e.contains("plans.jsonl:2: the line of task bA is not its witness (c"),
            "{e}"
        );
    }

    /// Issue 27: the two files are read on two threads; a line too many on either side, or a
    /// bad task line, is an error naming the file (and the line), never a shorter tally.
    #[test]
    fn issue27_files_of_different_lengths_or_a_bad_task_line_are_errors() {
        let (_dir, tasks, plans) = split("b\\u0041");
        let text = std::fs::read_to_string(&plans).unwrap();
        let first = text.lines().next().unwrap().to_string() + "\n";
        std::fs::write(&plans, &first).unwrap();
        let e = format!("{:#}", tally_plans(&tasks, &plans).unwrap_err());
        assert!(e.contains("more tasks than the 1 witness lines"), "{e}");
        std::fs::write(&plans, text.clone() + &first).unwrap();
        let e = format!("{:#}", tally_plans(&tasks, &plans).unwrap_err());
        assert!(
            e.contains("plans.jsonl:3: a witness line beyond the tasks"),
            "{e}"
        );
        std::fs::write(&plans, &text).unwrap();
        std::fs::write(
            &tasks,
            "{\"task_id\": \"a\", \"difficulty_type\": \"easy\"}\n{\"task_id\"\n",
        )
        .unwrap();
        let e = format!("{:#}", tally_plans(&tasks, &plans).unwrap_err());
        assert!(e.contains("test.jsonl:2: invalid JSON"), "{e}");
    }
}
