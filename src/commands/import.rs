//! `gtb import`: real POIs into a Parquet store, with what was kept and dropped.

use anyhow::Result;
use gtb_core::config::Config;
use gtb_store::import::ImportOptions;

pub fn run(cfg: &Config, opts: &ImportOptions) -> Result<()> {
    let s = gtb_ops::import(cfg, opts)?;
    print_store(&opts.out, &s);
    Ok(())
}

/// What an import kept and dropped.
fn print_store(dir: &std::path::Path, s: &gtb_store::StoreSummary) {
    let mut per_type = std::collections::BTreeMap::<&str, u64>::new();
    for types in s.counts.values() {
        for (t, n) in types {
            *per_type.entry(t.as_str()).or_default() += n;
        }
    }
    let kinds: Vec<String> = per_type.iter().map(|(t, n)| format!("{n} {t}")).collect();
    // kinds marked "(kept ...)" are POIs kept with a field left unknown, not lost rows
    let (kept, lost): (Vec<_>, Vec<_>) = s
        .dropped
        .iter()
        .filter(|(k, _)| *k != gtb_store::write::OUTSIDE_CITIES)
        .partition(|(k, _)| k.contains("(kept"));
    let list = |v: &[(&String, &u64)]| -> (u64, String) {
        let total = v.iter().map(|(_, n)| **n).sum();
        let why: Vec<String> = v.iter().map(|(k, n)| format!("{n} {k}")).collect();
        (total, why.join(", "))
    };
    let ((n_lost, why_lost), (n_kept, why_kept)) = (list(&lost), list(&kept));
    println!(
        "{}: {} POIs in {} cities ({}); {n_lost} input rows dropped{}{}",
        dir.display(),
        s.pois.rows,
        s.counts.len(),
        kinds.join(", "),
        if n_lost > 0 {
            format!(" ({why_lost})")
        } else {
            String::new()
        },
        if n_kept > 0 {
            format!("; {n_kept} kept with a field unknown ({why_kept})")
        } else {
            String::new()
        }
    );
    if let Some(n) = s.dropped.get(gtb_store::write::OUTSIDE_CITIES) {
        println!("{n} rows of other cities skipped (--cities)");
    }
    if n_lost + n_kept > 0 {
        println!(
            "each one, with its position: {}",
            dir.join(gtb_store::DROPPED_FILE).display()
        );
    }
    let unmapped: u64 = s
        .unmapped_categories
        .values()
        .flat_map(|m| m.values())
        .sum();
    if unmapped > 0 {
        println!(
            "{unmapped} POIs keep a category outside the release vocabulary (manifest.json: unmapped_categories); builds give them the release's fallback"
        );
    }
}
