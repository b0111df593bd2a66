//! Raw-data fuzzing (issue 13 item 16): one table of the data folder mutated per case (odd
//! cells, dropped and doubled rows and columns, broken bytes), then the input loading of
//! `prepare` and, when accepted, a small sample → generate → validate. A refusal names the
//! file; nothing panics or hangs.

use super::*;

/// Field values that break assumptions in a CSV cell.
const ODD_CELLS: [&str; 18] = [
    "",
    "NaN",
    "inf",
    "-inf",
    "999",
    "-3",
    "0",
    "1e400",
    "18446744073709551616",
    "x",
    "\"",
    "\"unterminated",
    "a,b",
    "北京市",
    "；;|、",
    "\u{FEFF}",
    "2026-13-45",
    "1;2;3",
];

/// One change to a CSV (or TOML) file: a cell, a line, or the whole file.
fn mutate_table(rng: &mut ChaCha8Rng, text: &str) -> Vec<u8> {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    if lines.is_empty() {
        return b"\xFF".to_vec();
    }
    // the header now and then, a data line mostly
    let i = if lines.len() == 1 || rng.gen_bool(0.05) {
        0
    } else {
        rng.gen_range(1..lines.len())
    };
    match rng.gen_range(0..12) {
        0..=4 => {
            let sep = if lines[i].contains(" = ") { " = " } else { "," };
            let mut cells: Vec<String> = lines[i].split(sep).map(String::from).collect();
            let k = rng.gen_range(0..cells.len());
            cells[k] = ODD_CELLS.choose(rng).unwrap().to_string();
            if sep == " = " && k == 1 && rng.gen_bool(0.5) {
                cells[k] = format!("\"{}\"", cells[k]);
            }
            lines[i] = cells.join(sep);
        }
        5 => {
            lines.remove(i);
        }
        6 => {
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        7 => {
            let cut = rng.gen_range(0..=lines[i].len());
            let cut = (0..=cut)
                .rev()
                .find(|&c| lines[i].is_char_boundary(c))
                .unwrap();
            lines[i].truncate(cut);
        }
        8 => lines[i].push_str(",extra"),
        9 => lines.truncate(1),
        10 => return format!("\u{FEFF}{}", lines.join("\n")).into_bytes(),
        _ => {
            let mut b = (lines.join("\n") + "\n").into_bytes();
            mutate_bytes(rng, &mut b);
            return b;
        }
    }
    (lines.join("\n") + "\n").into_bytes()
}

/// Every data file of a config: the tables and folders' files, the archetypes, the clusters.
fn data_files(cfg: &Config) -> Vec<std::path::PathBuf> {
    let p = &cfg.paths;
    let mut out = vec![
        p.cities.clone(),
        p.aliases.clone(),
        p.transport.clone(),
        p.profiles.clone(),
        p.archetypes.clone(),
        p.clusters.clone(),
    ];
    for dir in [&p.attractions, &p.food, &p.hotels] {
        let mut files = files(dir);
        files.sort();
        out.extend(files);
    }
    out
}

/// Load the inputs (`prepare`); when they are accepted, sample, generate and validate two tasks.
/// A refusal must name a file of the data folder. Ends as "refused", "sampler refused" or "used".
fn prepare_and_use(cfg: &Config, data: &str) -> Result<&'static str, String> {
    let res = match gtb_resources::load(&cfg.paths) {
        Ok(res) => res,
        Err(e) => {
            let e = format!("{e:#}");
            return if e.contains(data) {
                Ok("refused")
            } else {
                Err(format!("the refusal names no data file: {e}"))
            };
        }
    };
    match checked_tasks(cfg, &res, 2) {
        Some(_) => Ok("used"),
        None => Ok("sampler refused"),
    }
}

#[test]
fn issue13_16_fuzz_raw_rows_through_prepare() {
    let seed = seed();
    let n = env_number("GTB_FUZZ_RAW_CASES", 150) as usize;
    let dir = tempfile::tempdir().unwrap();
    let cfg = data_copy(dir.path());
    let files = data_files(&cfg);
    let root = dir.path().to_path_buf();
    let data = root.display().to_string();
    let started = Instant::now();
    // one file changed per case, then restored
    let out = run_cases((0..n).collect(), move |_, &i| {
        let mut rng = case_rng(seed, "raw", i);
        let file = files.choose(&mut rng).unwrap();
        let original = std::fs::read(file).unwrap();
        let mutated = mutate_table(&mut rng, &String::from_utf8_lossy(&original));
        std::fs::write(file, &mutated).unwrap();
        let outcome = catch_unwind(AssertUnwindSafe(|| prepare_and_use(&cfg, &data)));
        std::fs::write(file, &original).unwrap();
        let name = file.strip_prefix(&root).unwrap().display();
        outcome
            .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(&p))))
            .map_err(|why| format!("{name}: {why}"))
    });
    eprintln!(
        "{n} raw-data cases in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_sound("raw rows", n, &out, &["refused", "used"]);
}
