//! Release-format POI files (issue 11), each run in a process of its own:
//!
//!     gtb-bench fixture-release --pois 338000 --out FILE [--seed S] [--malformed K]
//!     gtb-bench import-release FILE      (wall time and peak RSS of `gtb import release`)

use crate::{cfg, flag, peak_rss_mib};
use std::time::Instant;

/// `fixture-release`: a synthetic release-format file over the cities of cities.csv.
pub fn fixture_release(args: &[String]) -> anyhow::Result<()> {
    use gtb_store::import::release::fixture;
    use std::io::Write;
    let spec = fixture::Spec {
        pois: flag(args, "--pois", Some(338_000))?,
        seed: flag(args, "--seed", Some(1))?,
        malformed: flag(args, "--malformed", Some(0))?,
    };
    let out: std::path::PathBuf = flag(args, "--out", None)?;
    let c = cfg(650, &std::env::temp_dir())?;
    let res = gtb_resources::load(&c.paths)?;
    let t = Instant::now();
    let mut summary = None;
    gtb_core::digest::write_streaming_atomic(&out, |w| {
        let mut w = std::io::BufWriter::new(w);
        summary = Some(fixture::write(&mut w, &res.cities, &spec)?);
        w.flush()?;
        Ok(())
    })?;
    let s = summary.expect("written");
    println!(
        "{}: {} POIs over {} cities ({} malformed), {:.1} MB in {:.3}s",
        out.display(),
        s.entries,
        s.kept.len(),
        s.malformed.len(),
        std::fs::metadata(&out)?.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `import-release FILE`: `gtb import release` in this process (the CLI's path: resources,
/// lock, import, publish) into a temporary store; wall time and peak RSS.
pub fn import_release(args: &[String]) -> anyhow::Result<()> {
    let input: std::path::PathBuf = args
        .first()
        .map(Into::into)
        .ok_or_else(|| anyhow::anyhow!("import-release FILE"))?;
    let dir = std::env::temp_dir().join(format!("gtb-bench-{}", std::process::id()));
    let opts = gtb_store::import::ImportOptions {
        adapter: gtb_store::import::Adapter::Release,
        input: input.clone(),
        out: dir.join("store"),
        cities: None,
        licence: None,
        map: Default::default(),
        radius_km: 60.0,
        progress: false,
    };
    let c = cfg(650, &dir)?;
    let t = Instant::now();
    let s = gtb_ops::import(&c, &opts)?;
    println!(
        "import release {} ({:.1} MB): {:.3}s wall, {} POIs in {} cities, {} dropped, peak RSS {:.0} MiB",
        input.display(),
        std::fs::metadata(&input)?.len() as f64 / 1e6,
        t.elapsed().as_secs_f64(),
        s.pois.rows,
        s.counts.len(),
        s.dropped_file.rows,
        peak_rss_mib()
    );
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
