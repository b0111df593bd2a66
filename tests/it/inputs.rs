//! Bad input is refused with `FILE:LINE: field 'NAME': problem`, in words, never accepted
//! silently or explained by another file (issue 13 items 7, 8 and 9).

use crate::common::*;
use gtb_core::config::Config;
use std::path::Path;

/// Load the resources of a config; the error text.
fn load_err(cfg: &Config) -> String {
    match gtb_ops::load_resources(cfg) {
        Ok(_) => panic!("the bad input was accepted"),
        Err(e) => format!("{e:#}"),
    }
}

/// Replace line `line` (1-based) of a CSV file with `f(fields)`.
fn edit_line(file: &Path, line: usize, f: impl FnOnce(&mut Vec<String>)) {
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut fields: Vec<String> = lines[line - 1].split(',').map(String::from).collect();
    f(&mut fields);
    lines[line - 1] = fields.join(",");
    std::fs::write(file, lines.join("\n") + "\n").unwrap();
}

/// The index of a column in a CSV file's header.
fn column(file: &Path, name: &str) -> usize {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .next()
        .unwrap()
        .split(',')
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("{} has no column {name}", file.display()))
}

/// Keep only the header of a CSV file.
fn header_only(file: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    std::fs::write(file, format!("{}\n", text.lines().next().unwrap())).unwrap();
}

#[test]
fn issue13_07_attraction_coordinates_must_be_real() {
    for (field, value) in [
        ("lat", "999"),
        ("lat", "NaN"),
        ("lng", "inf"),
        ("lng", "-inf"),
        ("lat", "north"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = data_copy(dir.path());
        let file = cfg.paths.attractions.join("north.csv");
        let col = column(&file, field);
        edit_line(&file, 3, |f| f[col] = value.into());
        let e = load_err(&cfg);
        assert!(
            e.contains(&format!("{}:3: field '{field}'", file.display())),
            "{value}: {e}"
        );
    }
}

#[test]
fn issue13_07_profile_age_200_is_rejected_and_issue13_08_age_minus_3_is_explained() {
    for (value, says) in [
        ("200", "must be within 0..=110, got 200"),
        ("-3", "-3 is negative"),
        ("forty", "\"forty\" is not a whole number"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = data_copy(dir.path());
        let col = column(&cfg.paths.profiles, "age");
        edit_line(&cfg.paths.profiles, 5, |f| f[col] = value.into());
        let e = load_err(&cfg);
        assert!(
            e.contains(&format!("{}:5: field 'age'", cfg.paths.profiles.display()))
                && e.contains(says)
                && !e.contains("invalid digit"),
            "{value}: {e}"
        );
    }
}

#[test]
fn issue13_07_a_region_without_food_or_hotels_is_an_input_error() {
    for (folder, what) in [("food", "food"), ("hotels", "hotel")] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = data_copy(dir.path());
        let file = dir.path().join("raw_data").join(folder).join("north.csv");
        header_only(&file);
        let e = load_err(&cfg);
        assert!(
            e.contains(&format!("have no {what} rows"))
                && e.contains("大同市")
                && e.contains(&file.display().to_string()),
            "{e}"
        );
        // a zero-byte file says the same
        std::fs::write(&file, b"").unwrap();
        let e = load_err(&cfg);
        assert!(e.contains("大同市"), "{e}");
    }
}

#[test]
fn issue13_07_max_tries_zero_is_rejected() {
    let mut cfg = config_in(Path::new("/nonexistent"));
    cfg.generate.max_tries = 0;
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("generate.max_tries must be at least 1"), "{e}");
}

#[test]
fn issue13_07_clusters_target_0_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = data_copy(dir.path());
    let before = std::fs::read(&cfg.paths.clusters).unwrap();
    for target in [0, 5] {
        let params = gtb_clusters::ClusterParams {
            target,
            ..Default::default()
        };
        let e = gtb_ops::clusters(&cfg, params).unwrap_err().to_string();
        assert!(
            e.contains(&format!("--target {target}")) && e.contains("nothing was written"),
            "{e}"
        );
        assert_eq!(std::fs::read(&cfg.paths.clusters).unwrap(), before);
    }
    // the default target rebuilds the tracked table as it is
    let (n, csv) = gtb_ops::clusters(&cfg, Default::default()).unwrap();
    assert_eq!(n, 175);
    assert_eq!(csv.as_bytes(), &before[..]);
}

#[test]
fn issue13_08_empty_tables_name_their_own_file() {
    for name in ["cities.csv", "profiles.csv", "transport.csv"] {
        for zero_bytes in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let cfg = data_copy(dir.path());
            let file = dir.path().join("raw_data").join(name);
            if zero_bytes {
                std::fs::write(&file, b"").unwrap();
            } else {
                header_only(&file);
            }
            let e = load_err(&cfg);
            assert!(
                e.starts_with(&format!("{}: no data rows", file.display())),
                "{name}: {e}"
            );
        }
    }
    // every attraction file empty: the folder is named
    let dir = tempfile::tempdir().unwrap();
    let cfg = data_copy(dir.path());
    for f in std::fs::read_dir(&cfg.paths.attractions).unwrap() {
        header_only(&f.unwrap().path());
    }
    let e = load_err(&cfg);
    assert!(
        e.starts_with(&format!(
            "{}: no data rows",
            cfg.paths.attractions.display()
        )),
        "{e}"
    );
}

/// Replace the first occurrence of `from` in the archetype file.
fn edit_archetypes(cfg: &Config, from: &str, to: &str) {
    let text = std::fs::read_to_string(&cfg.paths.archetypes).unwrap();
    assert!(text.contains(from), "{from:?} not in archetypes.toml");
    std::fs::write(&cfg.paths.archetypes, text.replacen(from, to, 1)).unwrap();
}

/// The line of the first occurrence of `needle` in a file.
fn line_of(file: &Path, needle: &str) -> usize {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .position(|l| l.contains(needle))
        .unwrap()
        + 1
}

#[test]
fn issue13_08_generation_order_naming_user7_names_user7() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = data_copy(dir.path());
    let text = std::fs::read_to_string(&cfg.paths.archetypes).unwrap();
    let order = text
        .lines()
        .find(|l| l.starts_with("generation_order"))
        .unwrap()
        .to_string();
    let group_line = line_of(&cfg.paths.archetypes, "group_id = ");
    edit_archetypes(&cfg, &order, "generation_order = [\"User1\", \"User7\"]");
    let e = load_err(&cfg);
    assert!(
        e.contains("User7 is not a member")
            && e.contains(&format!(
                "{}:{group_line}: field 'generation_order'",
                cfg.paths.archetypes.display()
            )),
        "{e}"
    );
}

#[test]
fn issue13_08_filter_gender_x_is_a_file_line_error_not_a_debug_dump() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = data_copy(dir.path());
    edit_archetypes(&cfg, "gender = \"女\"", "gender = \"X\"");
    let e = load_err(&cfg);
    assert!(
        e.contains(&format!("{}:", cfg.paths.archetypes.display()))
            && e.contains("field 'slot.filter.gender'")
            && e.contains("\"X\" is not one of 男 女"),
        "{e}"
    );
    assert!(!e.contains("ProfileFilter") && !e.contains("Some("), "{e}");
}

#[test]
fn issue13_08_user_facing_errors_hold_no_rust_debug_structs() {
    // a filter no profile matches: the sampler says which, in words
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = data_copy(dir.path());
    edit_archetypes(&cfg, "age = [20, 33]", "age = [105, 110]");
    let e = format!("{:#}", gtb_build::sample(&cfg).unwrap_err());
    assert!(e.contains("age 105–110"), "{e}");
    // a class no combination falls in: the thresholds in words
    cfg.sample.thresholds = Some(gtb_core::difficulty::Thresholds {
        easy_below: 0.5,
        hard_above: 9.5,
    });
    let dir2 = tempfile::tempdir().unwrap();
    let mut cfg2 = data_copy(dir2.path());
    cfg2.sample.thresholds = cfg.sample.thresholds;
    let e2 = format!("{:#}", gtb_build::sample(&cfg2).unwrap_err());
    assert!(e2.contains("easy below 0.5, hard above 9.5"), "{e2}");
    for m in [&e, &e2] {
        for debug in ["ProfileFilter", "Thresholds {", "Some(", "Release", " {"] {
            assert!(!m.contains(debug), "{debug:?} in {m}");
        }
    }
}

#[test]
fn issue13_09_a_missing_file_in_an_existing_raw_data_is_an_error_not_a_fallback() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("raw_data"), &dir.path().join("raw_data"));
    std::fs::remove_file(dir.path().join("raw_data/profiles.csv")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gtb"))
        .args(["build", "--n", "5", "--out", "o"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("raw_data/profiles.csv")
            && err.contains("raw_data/ exists here, so all of it is read from disk"),
        "{err}"
    );
    assert!(!err.contains("raw_data/ not found"), "{err}");
    assert!(!dir.path().join("o/test.jsonl").exists());
}
