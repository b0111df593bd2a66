//! The command line: parse arguments, resolve them once with the config file into a plan,
//! call `ops`, print results. No pipeline logic lives here.

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use gtb_core::config::Config;
use gtb_ops as ops;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "gtb",
    version,
    about = "Build GroupTravelBench-style multi-user travel-planning datasets"
)]
pub struct Cli {
    /// Config file (default: ./gtb.toml when present, else built-in defaults)
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Worker threads (0 = all cores); results do not depend on it
    #[arg(long, global = true)]
    pub threads: Option<usize>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Default, Clone)]
pub struct RunArgs {
    /// Master seed
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of tasks
    #[arg(long)]
    pub n: Option<usize>,
}

/// Settings of the LLM generator (`--llm openai`); each overrides the config's `[llm]`.
#[derive(Args, Debug, Default, Clone)]
pub struct LlmArgs {
    /// Model name (default: llm.model, else $OPENAI_MODEL)
    #[arg(long, help_heading = "LLM generator")]
    pub model: Option<String>,
    /// API base URL ending in /v1 (default: llm.base_url, else $OPENAI_BASE_URL, else OpenAI)
    #[arg(long, help_heading = "LLM generator")]
    pub base_url: Option<String>,
    /// Environment variable that holds the API key (default OPENAI_API_KEY)
    #[arg(long, value_name = "NAME", help_heading = "LLM generator")]
    pub api_key_env: Option<String>,
    /// Send the key as is in this header instead of `Authorization: Bearer` (Azure: api-key)
    #[arg(long, value_name = "NAME", help_heading = "LLM generator")]
    pub api_key_header: Option<String>,
    /// Extra request header "Name: value" (repeatable); values are never recorded, and enter
    /// cache keys only as a digest
    #[arg(
        long = "header",
        value_name = "NAME: VALUE",
        help_heading = "LLM generator"
    )]
    pub headers: Vec<String>,
    /// Extra query parameter name=value of every request (repeatable; Azure: api-version=2024-10-21)
    #[arg(long, value_name = "NAME=VALUE", help_heading = "LLM generator")]
    pub query: Vec<String>,
    /// JSON object merged into every request body, e.g. '{"enable_thinking": false}' (Qwen3 on
    /// DashScope) or '{"chat_template_kwargs": {"enable_thinking": false}}' (vLLM)
    #[arg(long, value_name = "JSON", help_heading = "LLM generator")]
    pub extra_body: Option<String>,
    /// Body field of the completion budget: auto | max_tokens | max_completion_tokens (OpenAI
    /// reasoning models); auto switches when the server asks for max_completion_tokens
    #[arg(long, value_name = "FIELD", help_heading = "LLM generator")]
    pub max_tokens_param: Option<String>,
    /// Seconds the run may spend paused by rate limits (HTTP 429, Retry-After honoured) before
    /// it stops with a resumable error (default 3600); a rate limit never changes the output
    #[arg(long, value_name = "SECS", help_heading = "LLM generator")]
    pub rate_limit_budget: Option<u64>,
    /// Ask the server again for cached replies that the checks reject (a plain rerun replays
    /// them); the new replies replace them in the cache
    #[arg(long, help_heading = "LLM generator")]
    pub refresh_rejected: bool,
    /// Sampling temperature
    #[arg(long, help_heading = "LLM generator")]
    pub temperature: Option<f64>,
    /// Completion token budget per request
    #[arg(long, help_heading = "LLM generator")]
    pub max_tokens: Option<u32>,
    /// auto | json_schema | json_object | text
    #[arg(long, help_heading = "LLM generator")]
    pub response_format: Option<String>,
    /// Requests in flight at most (lowered adaptively on HTTP 429)
    #[arg(long, help_heading = "LLM generator")]
    pub concurrency: Option<usize>,
    /// Requests per minute (0 = unlimited)
    #[arg(long, help_heading = "LLM generator")]
    pub rpm: Option<u32>,
    /// Estimated tokens per minute (0 = unlimited)
    #[arg(long, help_heading = "LLM generator")]
    pub tpm: Option<u32>,
    /// Seconds the server may stay silent before a request is abandoned and retried (a
    /// streamed reply that keeps coming is never cut off; a plain reply must arrive within it)
    #[arg(long, value_name = "SECS", help_heading = "LLM generator")]
    pub request_timeout: Option<u64>,
    /// Ask for plain replies instead of streamed ones (server-sent events)
    #[arg(long, help_heading = "LLM generator")]
    pub no_stream: bool,
    /// The server's context window in tokens per request (default: ask the server: llama.cpp
    /// /props, vLLM /v1/models, Ollama /api/ps); prompts are fitted to it
    #[arg(long, value_name = "TOKENS", help_heading = "LLM generator")]
    pub context_tokens: Option<u32>,
    /// Response cache folder (default llm_cache)
    #[arg(long, help_heading = "LLM generator")]
    pub cache_dir: Option<PathBuf>,
    /// Answer from the cache alone; a cache miss stops the run
    #[arg(long, help_heading = "LLM generator")]
    pub offline_replay: bool,
    /// Price per million prompt tokens (for the cost in the manifest and report)
    #[arg(long, help_heading = "LLM generator")]
    pub price_in: Option<f64>,
    /// Price per million completion tokens
    #[arg(long, help_heading = "LLM generator")]
    pub price_out: Option<f64>,
}

impl LlmArgs {
    fn apply(self, l: &mut gtb_core::config::Llm) {
        let LlmArgs {
            model,
            base_url,
            api_key_env,
            api_key_header,
            headers,
            query,
            extra_body,
            max_tokens_param,
            rate_limit_budget,
            refresh_rejected,
            temperature,
            max_tokens,
            response_format,
            concurrency,
            rpm,
            tpm,
            request_timeout,
            no_stream,
            context_tokens,
            cache_dir,
            offline_replay,
            price_in,
            price_out,
        } = self;
        if let Some(v) = model {
            l.model = v;
        }
        if let Some(v) = base_url {
            l.base_url = v;
        }
        if let Some(v) = api_key_env {
            l.api_key_env = v;
        }
        if let Some(v) = api_key_header {
            l.api_key_header = v;
        }
        l.headers.extend(headers);
        l.query.extend(query);
        if let Some(v) = extra_body {
            l.extra_body = v;
        }
        if let Some(v) = max_tokens_param {
            l.max_tokens_param = v;
        }
        if let Some(v) = rate_limit_budget {
            l.rate_limit_budget_secs = v;
        }
        if refresh_rejected {
            l.refresh_rejected = true;
        }
        if let Some(v) = temperature {
            l.temperature = v;
        }
        if let Some(v) = max_tokens {
            l.max_tokens = v;
        }
        if let Some(v) = response_format {
            l.response_format = v;
        }
        if let Some(v) = concurrency {
            l.concurrency = v;
        }
        if let Some(v) = rpm {
            l.requests_per_minute = v;
        }
        if let Some(v) = tpm {
            l.tokens_per_minute = v;
        }
        if let Some(v) = request_timeout {
            l.timeout_secs = v;
        }
        if no_stream {
            l.stream = false;
        }
        if let Some(v) = context_tokens {
            l.context_tokens = v;
        }
        if let Some(v) = cache_dir {
            l.cache_dir = v;
        }
        if offline_replay {
            l.offline_replay = true;
        }
        if let Some(v) = price_in {
            l.price_input_per_mtok = v;
        }
        if let Some(v) = price_out {
            l.price_output_per_mtok = v;
        }
        gtb_llm::resolve(l);
    }
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per process; boxing would only add noise
pub enum Command {
    /// Run the pipeline: prepare -> sample -> generate -> validate -> write
    Build {
        #[command(flatten)]
        run: RunArgs,
        /// Output folder (test.jsonl, manifest.json)
        #[arg(long)]
        out: Option<PathBuf>,
        /// Show which stages would run, and why, without running them
        #[arg(long)]
        explain: bool,
        /// Leakage-free named splits, e.g. train=5000,dev=500,test=650
        #[arg(long)]
        splits: Option<String>,
        /// With --splits: this many destination cities appear only in the test split
        #[arg(long, default_value_t = 0)]
        holdout_cities: usize,
        /// Preference generator: offline (default) or openai
        #[arg(long)]
        llm: Option<String>,
        /// When another build holds the output folder, wait for it instead of failing at once
        #[arg(long)]
        wait: bool,
        /// Build slice I of N (0-based) of the same plan into --out; `gtb merge` joins them
        #[arg(long, value_name = "I/N")]
        shard: Option<ops::build::Shard>,
        /// A POI store (`gtb import`) for attractions, restaurants and hotel prices instead of
        /// the embedded snapshot (overrides `[paths] resources`)
        #[arg(long, value_name = "STORE")]
        resources: Option<PathBuf>,
        #[command(flatten)]
        llm_args: LlmArgs,
    },
    /// Join the slices of `gtb build --shard I/N` runs into the split the unsharded build
    /// writes (same bytes), with its reports and manifest
    Merge {
        /// The --out folders of the shard builds
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder
        #[arg(long)]
        out: PathBuf,
        /// When another build holds the output folder, wait for it instead of failing at once
        #[arg(long)]
        wait: bool,
    },
    /// Import real POIs (a release POI file, the ChinaTravel database, an OpenStreetMap
    /// extract or your own table) into a store that `gtb build --resources` reads
    Import {
        /// Source format
        #[arg(value_enum)]
        adapter: gtb_store::import::Adapter,
        /// Input file or folder
        input: PathBuf,
        /// Store folder to write (pois.parquet, dropped.jsonl, manifest.json)
        #[arg(long)]
        out: PathBuf,
        /// Keep only these cities (comma-separated; 北京市 or 北京)
        #[arg(long, value_delimiter = ',')]
        cities: Option<Vec<String>>,
        /// Licence of the input, recorded in the manifest (default: the source's own)
        #[arg(long)]
        licence: Option<String>,
        /// table: store column = input column, comma-separated (name=名称,city=城市,...)
        #[arg(long, value_delimiter = ',', value_name = "FIELD=COLUMN")]
        map: Vec<String>,
        /// osm: a POI outside every city boundary goes to the nearest city within this radius
        #[arg(long, default_value_t = 60.0, value_name = "KM")]
        radius_km: f64,
        /// Do not show a progress bar
        #[arg(long)]
        quiet: bool,
    },
    /// Sample task skeletons only
    Sample {
        #[command(flatten)]
        run: RunArgs,
        /// Output JSONL file
        #[arg(long)]
        out: PathBuf,
    },
    /// Build the destination clusters from city coordinates
    Clusters {
        /// Number of clusters to aim at
        #[arg(long, default_value_t = 175)]
        target: usize,
    },
    /// Model transport.csv from the rail network, airports and roads (deterministic)
    Transport {
        /// Output file (default: the configured transport.csv)
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run every validator on a task file
    Validate {
        /// Task file (JSONL); `-` reads standard input
        file: PathBuf,
        /// Check names against this POI store (`gtb import`) instead of the embedded snapshot
        #[arg(long, value_name = "STORE")]
        resources: Option<PathBuf>,
    },
    /// Statistics of any GroupTravelBench-style task file (paper Tables 5, 8, 9, conflicts,
    /// diversity), optionally side by side with another file or the paper's figures
    Audit {
        /// Task file (JSONL); `-` reads standard input
        file: PathBuf,
        /// Compare with another task file, or `paper` for the paper's published figures
        #[arg(long, value_name = "REF")]
        against: Option<String>,
        /// Output format
        #[arg(long, value_enum, default_value_t = gtb_audit::Format::Md)]
        format: gtb_audit::Format,
        /// Write audit.md / audit.json / audit.html into this folder
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Skip malformed lines (they are counted in the report) instead of failing
        #[arg(long)]
        skip_bad: bool,
    },
    /// Export a build's splits as Parquet, or as a Hugging Face dataset (Parquet + card)
    Export {
        /// Build output folder (test.jsonl + manifest.json), the --splits layout, or a JSONL file
        split_dir: PathBuf,
        /// parquet: DIR/<split>.parquet; hf: DIR/data/<split>-*.parquet + DIR/README.md
        #[arg(long, value_enum, default_value_t = ops::export::ExportFormat::Hf)]
        format: ops::export::ExportFormat,
        /// Output folder (new, empty, or an earlier export, which is replaced)
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Licence id written in the dataset card
        #[arg(long, default_value = ops::export::DEFAULT_LICENSE)]
        license: String,
        /// hf: rows per Parquet file
        #[arg(long, default_value_t = ops::export::DEFAULT_ROWS_PER_FILE)]
        rows_per_file: u64,
    },
    /// Witness plans: per task a plan in the release's format that is valid and keeps every
    /// hard constraint (after declared compromises), or the constraint that blocks one
    Solve {
        /// Task file (JSONL)
        tasks: PathBuf,
        /// Plans file to write (JSONL, one line per task)
        #[arg(long)]
        out: PathBuf,
    },
    /// Score a plans file as the release does (nine validity rules, group utility, fairness)
    /// and check the witness contract; non-zero exit when a plan is invalid
    Score {
        /// Task file (JSONL)
        tasks: PathBuf,
        /// Plans file (JSONL lines with task_id, plan and optional compromises)
        plans: PathBuf,
        /// Output format
        #[arg(long, value_enum, default_value_t = ops::solve::ScoreFormat::Md)]
        format: ops::solve::ScoreFormat,
        /// Write score.md / score.json into this folder
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Also fail when a plan breaks the witness contract or a task has no plan
        #[arg(long)]
        witness: bool,
    },
}

fn load_config(cli: &Cli) -> Result<Config> {
    let mut cfg = match &cli.config {
        Some(p) => Config::from_file(p)?,
        None if PathBuf::from("gtb.toml").exists() => {
            Config::from_file(&PathBuf::from("gtb.toml"))?
        }
        None => Config::default(),
    };
    if let Some(t) = cli.threads {
        cfg.run.threads = t;
    }
    Ok(cfg)
}

fn apply_run(cfg: &mut Config, run: &RunArgs) {
    if let Some(s) = run.seed {
        cfg.run.seed = s;
    }
    if let Some(n) = run.n {
        cfg.run.n = n;
    }
}

fn parse_splits(s: &str) -> Result<Vec<(String, usize)>> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let (name, n) = part
            .split_once('=')
            .with_context(|| format!("--splits: {part:?} is not NAME=COUNT"))?;
        let n: usize = n
            .trim()
            .parse()
            .with_context(|| format!("--splits: {n:?} is not a count"))?;
        if name.trim().is_empty()
            || n == 0
            || out.iter().any(|(x, _): &(String, usize)| x == name.trim())
        {
            bail!("--splits: {part:?}: names must be distinct and non-empty, counts positive");
        }
        out.push((name.trim().to_string(), n));
    }
    // the test split is sampled first so that it does not depend on the others
    out.sort_by_key(|(n, _)| match n.as_str() {
        "test" => 0,
        "dev" | "val" | "valid" => 1,
        _ => 2,
    });
    Ok(out)
}

fn run(cli: Cli) -> Result<()> {
    let mut cfg = load_config(&cli)?;
    // bounded before any thread is spawned
    gtb_core::config::check_threads(cfg.run.threads)?;
    if cfg.run.threads > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(cfg.run.threads)
            .build_global()
            .ok();
    }
    match cli.command {
        Command::Build {
            run,
            out,
            explain,
            splits,
            holdout_cities,
            llm,
            wait,
            shard,
            resources,
            llm_args,
        } => {
            apply_run(&mut cfg, &run);
            if resources.is_some() {
                cfg.paths.resources = resources;
            }
            if let Some(o) = out {
                // a build elsewhere keeps all of its outputs together
                cfg.run.work_dir = o.join(".work");
                cfg.run.reports = o.join("validation_reports");
                cfg.run.out = o;
            }
            if let Some(g) = llm {
                cfg.run.generator = g;
            }
            if cfg.run.generator == "openai" {
                llm_args.apply(&mut cfg.llm);
            }
            let splits = splits
                .as_deref()
                .map(parse_splits)
                .transpose()?
                .unwrap_or_default();
            let plan = ops::BuildPlan {
                explain,
                splits,
                verbose: true,
                holdout_cities,
                wait,
                shard,
                ..ops::BuildPlan::new(cfg)
            };
            let s = ops::build(&plan)?;
            print_splits(&s.splits);
        }
        Command::Merge { dirs, out, wait } => {
            let s = ops::merge::merge(&ops::merge::MergeOptions { dirs, out, wait })?;
            print_splits(&s);
        }
        Command::Import {
            adapter,
            input,
            out,
            cities,
            licence,
            map,
            radius_km,
            quiet,
        } => {
            let opts = gtb_store::import::ImportOptions {
                adapter,
                input,
                out,
                cities: cities.map(|c| c.into_iter().collect()),
                licence,
                map: parse_map(&map)?,
                radius_km,
                progress: !quiet,
            };
            let s = ops::import(&cfg, &opts)?;
            print_store(&opts.out, &s);
        }
        Command::Sample { run, out } => {
            apply_run(&mut cfg, &run);
            cfg.validate()?;
            let sk = ops::sample(&cfg)?;
            gtb_core::digest::write_atomic(&out, &gtb_core::jsonl::to_jsonl(&sk))?;
            println!("{} skeletons -> {}", sk.len(), out.display());
        }
        Command::Clusters { target } => {
            let (n, _) = ops::clusters(
                &cfg,
                gtb_clusters::ClusterParams {
                    target,
                    ..Default::default()
                },
            )?;
            if n < target {
                eprintln!(
                    "note: {n} clusters, fewer than --target {target}: every multi-city candidate is used"
                );
            }
            println!("{n} clusters -> {}", cfg.paths.clusters.display());
        }
        Command::Transport { out } => {
            let out = out.unwrap_or_else(|| cfg.paths.transport.clone());
            let n = ops::transport(&cfg, &out)?;
            println!("{n} rows -> {}", out.display());
        }
        Command::Audit {
            file,
            against,
            format,
            out,
            skip_bad,
        } => {
            let opts = ops::audit::AuditOptions {
                file,
                against: against.as_deref().map(gtb_audit::Against::parse),
                format,
                out,
                skip_bad,
            };
            let o = ops::audit::audit(&opts)?;
            match &o.written {
                // Markdown is always shown; the other formats are shown only when not written
                Some(p) if format != gtb_audit::Format::Md => {
                    println!("audit -> {}", p.display())
                }
                Some(p) => {
                    print!("{}", o.text);
                    eprintln!("audit -> {}", p.display());
                }
                None => print!("{}", o.text),
            }
        }
        Command::Export {
            split_dir,
            format,
            out,
            license,
            rows_per_file,
        } => {
            let opts = ops::export::ExportOptions {
                license,
                rows_per_file,
                ..ops::export::ExportOptions::new(&split_dir, format, &out)
            };
            let s = ops::export::export(&opts)?;
            for f in &s.files {
                println!(
                    "{}: {} rows -> {} ({} bytes)",
                    f.split,
                    f.rows,
                    out.join(&f.path).display(),
                    f.bytes
                );
            }
        }
        Command::Solve { tasks, out } => {
            let s = ops::solve::solve_file(&cfg, &tasks, &out)?;
            for (id, why) in &s.unsolved {
                eprintln!("{id}: no plan: {why}");
            }
            print!("{}", s.figures.to_markdown());
            println!(
                "{} of {} tasks have a witness plan -> {}",
                s.solved,
                s.tasks,
                out.display()
            );
        }
        Command::Score {
            tasks,
            plans,
            format,
            out,
            witness,
        } => {
            let opts = ops::solve::ScoreOptions {
                tasks,
                plans,
                format,
                out,
            };
            let (r, text) = ops::solve::score_file(&cfg, &opts)?;
            match &opts.out {
                Some(d) => eprintln!("score -> {}", d.display()),
                None => print!("{text}"),
            }
            if r.invalid > 0 {
                bail!("{} of {} plans are invalid", r.invalid, r.plans);
            }
            if witness && (r.breaking > 0 || r.without_plan + r.missing > 0) {
                bail!(
                    "{} plans break the witness contract; {} tasks have no plan",
                    r.breaking,
                    r.without_plan + r.missing
                );
            }
        }
        Command::Validate { file, resources } => {
            if resources.is_some() {
                cfg.paths.resources = resources;
            }
            let (n, findings) = ops::validate_file(&cfg, &file)?;
            for f in &findings {
                println!("{f}");
            }
            let name = gtb_audit::load::input_name(&file);
            if !findings.is_empty() {
                bail!("{name}: {} problem(s) in {n} task(s)", findings.len());
            }
            println!("{name}: {n} tasks, every check passed");
        }
    }
    Ok(())
}

/// `--map name=名称,city=城市` as store column -> input column.
fn parse_map(pairs: &[String]) -> Result<std::collections::BTreeMap<String, String>> {
    let mut out = std::collections::BTreeMap::new();
    for p in pairs {
        let Some((k, v)) = p.split_once('=') else {
            bail!("--map {p:?}: want FIELD=COLUMN, e.g. name=名称");
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() || v.is_empty() {
            bail!("--map {p:?}: want FIELD=COLUMN, e.g. name=名称");
        }
        if out.insert(k.to_string(), v.to_string()).is_some() {
            bail!("--map: {k} is mapped twice");
        }
    }
    Ok(out)
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

/// One line per split (or shard slice) written.
fn print_splits(splits: &[ops::build::SplitSummary]) {
    for sp in splits {
        let what = match sp.shard {
            Some(sh) => format!("{} shard {sh}", sp.name),
            None => sp.name.clone(),
        };
        println!(
            "{what}: {} tasks -> {} (sha256 {}, {} dropped and replaced)",
            sp.tasks,
            sp.path.display(),
            sp.sha256,
            sp.dropped
        );
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
