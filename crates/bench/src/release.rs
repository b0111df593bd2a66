//! Release-format POI files (issue 11), each run in a process of its own:
//!
//!     gtb-bench fixture-release --pois 338000 --out FILE [--seed S] [--malformed K]
//!     gtb-bench import-release FILE      (wall time and peak RSS of `gtb import release`)
//!     gtb-bench build-release FILE [--n N]   (`gtb build --resources` over its store: wall
//!                                             time and peak RSS; 650 tasks unless given)

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
    let input = input_of(args, "import-release FILE")?;
    let dir = std::env::temp_dir().join(format!("gtb-bench-{}", std::process::id()));
    let t = Instant::now();
    let s = import(&input, &dir)?;
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

/// `build-release FILE [--n N]`: the file imported into a temporary store, then `gtb build
/// --resources STORE --n N` (witnesses and world) as a process of its own: its wall time, peak
/// RSS and the bytes of the world it wrote (a store of thousands of venues per city gives a
/// world answering for each of them).
pub fn build_release(args: &[String]) -> anyhow::Result<()> {
    let input = input_of(args, "build-release FILE [--n N]")?;
    let n: usize = flag(args, "--n", Some(650))?;
    let dir = std::env::temp_dir().join(format!("gtb-bench-{}", std::process::id()));
    let s = import(&input, &dir)?;
    let (store, out) = (dir.join("store"), dir.join("out"));
    let (store_s, out_s, n_s) = (
        store.display().to_string(),
        out.display().to_string(),
        n.to_string(),
    );
    let args = [
        "build",
        "--resources",
        &store_s,
        "--n",
        &n_s,
        "--out",
        &out_s,
    ];
    let (wall, rss) = crate::cli::run_gtb(&args)?;
    let world: u64 = ["sandbox_cache", "poi2category"]
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(out.join(d))
                .into_iter()
                .flatten()
                .flatten()
        })
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    println!(
        "gtb build --n {n} over a store of {} POIs: {wall:.2}s wall, peak RSS {rss:.0} MiB, world {:.0} MB",
        s.pois.rows,
        world as f64 / 1e6
    );
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

fn input_of(args: &[String], usage: &str) -> anyhow::Result<std::path::PathBuf> {
    args.first()
        .filter(|a| !a.starts_with("--"))
        .map(Into::into)
        .ok_or_else(|| anyhow::anyhow!("usage: gtb-bench {usage}"))
}

/// `gtb import release` of `input` into `dir/store`, in this process.
fn import(
    input: &std::path::Path,
    dir: &std::path::Path,
) -> anyhow::Result<gtb_store::StoreSummary> {
    let opts = gtb_store::import::ImportOptions {
        adapter: gtb_store::import::Adapter::Release,
        input: input.to_path_buf(),
        out: dir.join("store"),
        cities: None,
        licence: None,
        map: Default::default(),
        radius_km: 60.0,
        progress: false,
    };
    let c = cfg(650, dir)?;
    gtb_ops::import(&c, &opts)
}
