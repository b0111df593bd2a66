//! The Hugging Face dataset card (`README.md` of the `hf` layout): YAML front matter that the
//! Hub and `datasets` read (licence, language, task categories, size, one config with a data
//! file pattern per split), then what a reader needs: how to load it, the schema, where it
//! comes from (command, seed, fingerprints) and the audit's headline figures.

use super::columns::COLUMNS;
use super::manifest::Manifest;
use gtb_audit::Audit;
use std::fmt::Write;

/// What the card says about one exported split.
pub struct SplitCard<'a> {
    pub name: &'a str,
    pub rows: u64,
    /// the split's data files, relative to the card
    pub files: Vec<String>,
    /// sha256 and size of the source JSONL
    pub source_sha256: &'a str,
    pub source_bytes: u64,
    pub manifest: Option<&'a Manifest>,
    pub audit: &'a Audit,
}

/// The Hub's size buckets (`size_categories`).
fn size_category(rows: u64) -> &'static str {
    const BUCKETS: [(u64, &str); 6] = [
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
        (100_000_000, "10M<n<100M"),
    ];
    BUCKETS
        .iter()
        .find(|(limit, _)| rows < *limit)
        .map_or("100M<n<1B", |(_, c)| c)
}

/// A YAML scalar: a JSON string is a valid double-quoted YAML scalar.
fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

fn front_matter(license: &str, splits: &[SplitCard]) -> String {
    let total: u64 = splits.iter().map(|s| s.rows).sum();
    let mut y = String::from("---\n");
    let _ = writeln!(y, "license: {}", yaml_str(license));
    y.push_str("language:\n- zh\n");
    y.push_str("multilinguality:\n- monolingual\n");
    y.push_str("task_categories:\n- text-generation\n");
    y.push_str("tags:\n");
    for t in [
        "travel-planning",
        "multi-user",
        "group-decision-making",
        "preference-conflicts",
        "agents",
        "synthetic",
    ] {
        let _ = writeln!(y, "- {t}");
    }
    y.push_str("annotations_creators:\n- machine-generated\n");
    y.push_str("language_creators:\n- machine-generated\n");
    y.push_str("source_datasets:\n- original\n");
    let _ = writeln!(
        y,
        "pretty_name: {}",
        yaml_str("GroupTravelBench-style group travel-planning tasks (gtb)")
    );
    let _ = writeln!(y, "size_categories:\n- {}", yaml_str(size_category(total)));
    y.push_str("configs:\n- config_name: default\n  data_files:\n");
    for s in splits {
        let _ = writeln!(y, "  - split: {}", yaml_str(s.name));
        let _ = writeln!(
            y,
            "    path: {}",
            yaml_str(&format!("data/{}-*.parquet", s.name))
        );
    }
    y.push_str("---\n");
    y
}

/// The command that produced the splits, from their manifests.
fn command(splits: &[SplitCard]) -> String {
    let manifests: Vec<&Manifest> = splits.iter().filter_map(|s| s.manifest).collect();
    if manifests.len() != splits.len() {
        return "unknown: at least one split has no manifest.json".into();
    }
    if let Some(c) = manifests.first().and_then(|m| m.command.as_deref()) {
        return format!("`{c}`");
    }
    let first = manifests[0];
    if splits.len() == 1 && !first.part_of_splits {
        return format!("`gtb build {}`", first.build_args());
    }
    let sizes: Vec<String> = splits
        .iter()
        .zip(&manifests)
        .map(|(s, m)| format!("{}={}", s.name, m.tasks.unwrap_or(s.rows)))
        .collect();
    format!(
        "`gtb build --splits {}{}` (the master seed is not recorded in the manifests; each split's own seed, derived from it and the split's name, is listed below)",
        sizes.join(","),
        first.generator_args()
    )
}

fn splits_table(splits: &[SplitCard]) -> String {
    let mut t = String::from(
        "| split | tasks | data files | source JSONL (bytes) | source sha256 |\n|---|---:|---|---:|---|\n",
    );
    for s in splits {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | `{}` |",
            s.name,
            s.rows,
            s.files.len(),
            s.source_bytes,
            s.source_sha256
        );
    }
    t
}

fn schema_table() -> String {
    let mut t = String::from("| column | type | content |\n|---|---|---|\n");
    for c in COLUMNS {
        let _ = writeln!(
            t,
            "| `{}` | `{}` | {} |",
            c.name,
            c.values.type_name(),
            c.doc
        );
    }
    t
}

fn provenance(s: &SplitCard) -> String {
    let Some(m) = s.manifest else {
        return format!(
            "### {}\n\nNo manifest.json beside the source file: seed and fingerprints unknown.\n\n",
            s.name
        );
    };
    let mut out = format!("### {}\n\n| item | value |\n|---|---|\n", s.name);
    let mut row = |k: &str, v: &str| {
        let _ = writeln!(out, "| {k} | {v} |");
    };
    row("seed", &m.seed.map_or("—".into(), |x| x.to_string()));
    row("generator", m.generator.as_deref().unwrap_or("—"));
    row("gtb version", m.gtb_version.as_deref().unwrap_or("—"));
    row("code version", m.code_version.as_deref().unwrap_or("—"));
    row(
        "source sha256 (as in the manifest)",
        &format!("`{}`", m.sha256.as_deref().unwrap_or("—")),
    );
    for (stage, fp) in &m.stage_fingerprints {
        row(&format!("fingerprint of stage {stage}"), &format!("`{fp}`"));
    }
    out.push('\n');
    out
}

/// The whole card.
pub fn render(license: &str, splits: &[SplitCard]) -> String {
    let mut c = front_matter(license, splits);
    c.push_str("\n# GroupTravelBench-style group travel-planning tasks\n\n");
    c.push_str(
        "Multi-user travel-planning tasks in the format of the GroupTravelBench release \
         (arXiv 2605.25200): a group of 2–6 people with private, partly conflicting preferences \
         (budget, transport, pace, hotels, must-visit and rejected places, food) plans one trip \
         together. Each row is one task; `task_json` is the task exactly as the JSONL release \
         format writes it. Built by gtb from real cities, attractions and food with a \
         fingerprinted pipeline; the numbers below are measured on these files.\n\n",
    );
    c.push_str("## Splits\n\n");
    c.push_str(&splits_table(splits));
    c.push_str("\n## Loading\n\n```python\nimport json\nfrom datasets import load_dataset\n\n");
    let first = splits.first().map_or("test", |s| s.name);
    let _ = writeln!(
        c,
        "ds = load_dataset(\"<this folder or Hub repository>\")\ntask = json.loads(ds[\"{first}\"][0][\"task_json\"])  # the original task object\nprefs = json.loads(ds[\"{first}\"][0][\"user_preferences\"])\n```\n"
    );
    c.push_str("## Schema\n\nOne row per task, in the order of the source file.\n\n");
    c.push_str(&schema_table());
    c.push_str("\n## Provenance\n\n");
    let _ = writeln!(c, "Generated by {}.\n", command(splits));
    for s in splits {
        c.push_str(&provenance(s));
    }
    c.push_str("## Audit\n\n`gtb audit` of each split, computed while exporting.\n\n");
    for s in splits {
        let _ = writeln!(c, "### {}\n", s.name);
        c.push_str(&gtb_audit::render::headline_md(s.audit));
    }
    c.push_str("## Licence\n\n");
    let _ = writeln!(
        c,
        "`{license}`. The tasks are generated from tables of facts written from public knowledge \
         (cities, attractions, food, hotel bands), modelled transport and census-sampled anonymous \
         profiles, plus coordinates, airports and stations derived from pinned PyPI packages under \
         permissive licences; `raw_data/SOURCES.md` in the gtb repository names every source and \
         its licence. No person is described.\n"
    );
    c.push_str("## Citation\n\nThe task format and the synthesis it follows are those of GroupTravelBench (arXiv 2605.25200).\n");
    c
}
