//! The raw command line (clap). Nothing here does work: `settings` turns these values, with the
//! config file, into one validated `Settings` before any command runs.

mod overrides;

use clap::{Args, Parser, Subcommand};
use gtb_core::config::{Config, Llm};
use overrides::overrides;
use std::path::PathBuf;

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

overrides! {
    /// The run's seed and size; each overrides the config's `[run]`.
    pub struct RunArgs => Config {
        /// Master seed
        #[arg(long)]
        opt seed: Option<u64> => run.seed,
        /// Number of tasks
        #[arg(long)]
        opt n: Option<usize> => run.n,
    }
}

overrides! {
    /// Settings of the LLM generator (`--llm openai`); each overrides the config's `[llm]`.
    pub struct LlmArgs => Llm {
        /// Model name (default: llm.model, else $OPENAI_MODEL)
        #[arg(long, help_heading = "LLM generator")]
        opt model: Option<String> => model,
        /// API base URL ending in /v1 (default: llm.base_url, else $OPENAI_BASE_URL, else OpenAI)
        #[arg(long, help_heading = "LLM generator")]
        opt base_url: Option<String> => base_url,
        /// Environment variable that holds the API key (default OPENAI_API_KEY)
        #[arg(long, value_name = "NAME", help_heading = "LLM generator")]
        opt api_key_env: Option<String> => api_key_env,
        /// Send the key as is in this header instead of `Authorization: Bearer` (Azure: api-key)
        #[arg(long, value_name = "NAME", help_heading = "LLM generator")]
        opt api_key_header: Option<String> => api_key_header,
        /// Extra request header "Name: value" (repeatable); values are never recorded, and enter
        /// cache keys only as a digest
        #[arg(long = "header", value_name = "NAME: VALUE", help_heading = "LLM generator")]
        list headers: Vec<String> => headers,
        /// Extra query parameter name=value of every request (repeatable; Azure: api-version=2024-10-21)
        #[arg(long, value_name = "NAME=VALUE", help_heading = "LLM generator")]
        list query: Vec<String> => query,
        /// JSON object merged into every request body, e.g. '{"enable_thinking": false}' (Qwen3 on
        /// DashScope) or '{"chat_template_kwargs": {"enable_thinking": false}}' (vLLM)
        #[arg(long, value_name = "JSON", help_heading = "LLM generator")]
        opt extra_body: Option<String> => extra_body,
        /// Body field of the completion budget: auto | max_tokens | max_completion_tokens (OpenAI
        /// reasoning models); auto switches when the server asks for max_completion_tokens
        #[arg(long, value_name = "FIELD", help_heading = "LLM generator")]
        opt max_tokens_param: Option<String> => max_tokens_param,
        /// Seconds the run may spend paused by rate limits (HTTP 429, Retry-After honoured) before
        /// it stops with a resumable error (default 3600); a rate limit never changes the output
        #[arg(long, value_name = "SECS", help_heading = "LLM generator")]
        opt rate_limit_budget: Option<u64> => rate_limit_budget_secs,
        /// Ask the server again for cached replies that the checks reject (a plain rerun replays
        /// them); the new replies replace them in the cache
        #[arg(long, help_heading = "LLM generator")]
        switch refresh_rejected: bool => refresh_rejected,
        /// One request per member (member, the default: the paper's way, the task's grounding a
        /// shared prefix) or one request for the whole group (task)
        #[arg(long, value_name = "member|task", help_heading = "LLM generator")]
        opt granularity: Option<String> => granularity,
        /// Sampling temperature
        #[arg(long, help_heading = "LLM generator")]
        opt temperature: Option<f64> => temperature,
        /// Completion token budget per request
        #[arg(long, help_heading = "LLM generator")]
        opt max_tokens: Option<u32> => max_tokens,
        /// auto | json_schema | json_object | text
        #[arg(long, help_heading = "LLM generator")]
        opt response_format: Option<String> => response_format,
        /// Requests in flight at most (lowered adaptively on HTTP 429)
        #[arg(long, help_heading = "LLM generator")]
        opt concurrency: Option<usize> => concurrency,
        /// Requests per minute (0 = unlimited)
        #[arg(long, help_heading = "LLM generator")]
        opt rpm: Option<u32> => requests_per_minute,
        /// Estimated tokens per minute (0 = unlimited)
        #[arg(long, help_heading = "LLM generator")]
        opt tpm: Option<u32> => tokens_per_minute,
        /// Seconds the server may stay silent before a request is abandoned and retried (a
        /// streamed reply that keeps coming is never cut off; a plain reply must arrive within it)
        #[arg(long, value_name = "SECS", help_heading = "LLM generator")]
        opt request_timeout: Option<u64> => timeout_secs,
        /// Ask for plain replies instead of streamed ones (server-sent events)
        #[arg(long, help_heading = "LLM generator")]
        unset no_stream: bool => stream,
        /// The server's context window in tokens per request (default: ask the server:
        /// llama.cpp /props, vLLM /v1/models, Ollama /api/ps); prompts are fitted to it
        #[arg(long, value_name = "TOKENS", help_heading = "LLM generator")]
        opt context_tokens: Option<u32> => context_tokens,
        /// Response cache folder (default llm_cache)
        #[arg(long, help_heading = "LLM generator")]
        opt cache_dir: Option<PathBuf> => cache_dir,
        /// Answer from the cache alone; a cache miss stops the run
        #[arg(long, help_heading = "LLM generator")]
        switch offline_replay: bool => offline_replay,
        /// Price per million prompt tokens (for the cost in the manifest and report)
        #[arg(long, help_heading = "LLM generator")]
        opt price_in: Option<f64> => price_input_per_mtok,
        /// Price per million completion tokens
        #[arg(long, help_heading = "LLM generator")]
        opt price_out: Option<f64> => price_output_per_mtok,
    }
}

overrides! {
    /// What `gtb build` reads, over the config.
    pub struct BuildInputs => Config {
        /// Preference generator: offline (default) or openai
        #[arg(long)]
        opt llm: Option<String> => run.generator,
        /// A POI store (`gtb import`) for attractions, restaurants and hotel prices instead of
        /// the embedded snapshot (overrides `[paths] resources`)
        #[arg(long, value_name = "STORE")]
        opt resources: Option<PathBuf> => paths.resources,
        /// No witness plans (`[solve] enabled = false`): no plans.jsonl, and a task is not
        /// regenerated for want of one. The search and the world it feeds are most of a large
        /// build's time (the search about 3.5 ms of CPU per task at the median, 15 ms at the
        /// 99th percentile); the task file of such a build can differ from the default's
        #[arg(long)]
        unset no_witness: bool => solve.enabled,
    }
}

overrides! {
    /// The POI store `gtb validate` checks names against, over the config.
    pub struct ValidateInputs => Config {
        /// Check names against this POI store (`gtb import`) instead of the embedded snapshot
        #[arg(long, value_name = "STORE")]
        opt resources: Option<PathBuf> => paths.resources,
    }
}

overrides! {
    /// The POI store plans are made over or scored against (`gtb solve`, `gtb score`,
    /// `gtb poi-table`), over the config.
    pub struct PlanInputs => Config {
        /// A POI store (`gtb import`): its attractions, restaurants and hotels instead of the
        /// embedded snapshot's (overrides `[paths] resources`)
        #[arg(long, value_name = "STORE")]
        opt resources: Option<PathBuf> => paths.resources,
    }
}

#[derive(Args, Debug)]
pub struct BuildArgs {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub inputs: BuildInputs,
    /// Output folder (test.jsonl, manifest.json)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Show which stages would run, and why, without running them
    #[arg(long)]
    pub explain: bool,
    /// Leakage-free named splits, e.g. train=5000,dev=500,test=650
    #[arg(long)]
    pub splits: Option<String>,
    /// With --splits: this many destination cities appear only in the test split
    #[arg(long, default_value_t = 0)]
    pub holdout_cities: usize,
    /// When another build holds the output folder, wait for it instead of failing at once
    #[arg(long)]
    pub wait: bool,
    /// Build slice I of N (0-based) of the same build into --out; `gtb merge` joins them
    #[arg(long, value_name = "I/N")]
    pub shard: Option<gtb_build::Shard>,
    #[command(flatten)]
    pub llm: LlmArgs,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The --out folders of the shard builds
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Output folder
    #[arg(long)]
    pub out: PathBuf,
    /// When another build holds the output folder, wait for it instead of failing at once
    #[arg(long)]
    pub wait: bool,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Source format
    #[arg(value_enum)]
    pub adapter: gtb_store::import::Adapter,
    /// Input file or folder
    pub input: PathBuf,
    /// Store folder to write (pois.parquet, dropped.jsonl, manifest.json)
    #[arg(long)]
    pub out: PathBuf,
    /// Keep only these cities (comma-separated; 北京市 or 北京)
    #[arg(long, value_delimiter = ',')]
    pub cities: Option<Vec<String>>,
    /// Licence of the input, recorded in the manifest (default: the source's own)
    #[arg(long)]
    pub licence: Option<String>,
    /// table: store column = input column, comma-separated (name=名称,city=城市,...)
    #[arg(long, value_delimiter = ',', value_name = "FIELD=COLUMN")]
    pub map: Vec<String>,
    /// osm: a POI outside every city boundary goes to the nearest city within this radius
    #[arg(long, default_value_t = 60.0, value_name = "KM")]
    pub radius_km: f64,
    /// Do not show a progress bar
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct SampleArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Output JSONL file
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct ClustersArgs {
    /// Number of clusters to aim at
    #[arg(long, default_value_t = 175)]
    pub target: usize,
}

#[derive(Args, Debug)]
pub struct TransportArgs {
    /// Output file (default: the configured transport.csv)
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Task file (JSONL); `-` reads standard input
    pub file: PathBuf,
    #[command(flatten)]
    pub inputs: ValidateInputs,
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Task file (JSONL); `-` reads standard input
    pub file: PathBuf,
    /// Compare with another task file, or `paper` for the paper's published figures
    #[arg(long, value_name = "REF")]
    pub against: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = gtb_audit::Format::Md)]
    pub format: gtb_audit::Format,
    /// Write audit.md / audit.json / audit.html into this folder
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Skip malformed lines (they are counted in the report) instead of failing
    #[arg(long)]
    pub skip_bad: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Build output folder (test.jsonl + manifest.json), the --splits layout, or a JSONL file
    pub split_dir: PathBuf,
    /// parquet: DIR/<split>.parquet; hf: DIR/data/<split>-*.parquet + DIR/README.md
    #[arg(long, value_enum, default_value_t = gtb_ops::export::ExportFormat::Hf)]
    pub format: gtb_ops::export::ExportFormat,
    /// Output folder (new, empty, or an earlier export, which is replaced)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Licence id written in the dataset card
    #[arg(long, default_value = gtb_ops::export::DEFAULT_LICENSE)]
    pub license: String,
    /// hf: rows per Parquet file
    #[arg(long, default_value_t = gtb_ops::export::DEFAULT_ROWS_PER_FILE)]
    pub rows_per_file: u64,
}

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Task file (JSONL)
    pub tasks: PathBuf,
    /// File to write (JSONL, one line per task)
    #[arg(long)]
    pub out: PathBuf,
    /// plans: gtb's plans file; official: the release's inference records (its multi_eval
    /// reads them)
    #[arg(long, value_enum, default_value_t = gtb_ops::solve::SolveFormat::Plans)]
    pub format: gtb_ops::solve::SolveFormat,
    #[command(flatten)]
    pub inputs: PlanInputs,
}

#[derive(Args, Debug)]
pub struct PoiTableArgs {
    /// File to write (the release's all_poi_by_city.json layout)
    #[arg(long)]
    pub out: PathBuf,
    /// The table of a split's world (its poi2category): the real venues and every modelled
    /// stand-in under the category it names, labelled modelled (docs/HARNESS.md)
    #[arg(long)]
    pub world: bool,
    #[command(flatten)]
    pub inputs: PlanInputs,
}

#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// Task file (JSONL)
    pub tasks: PathBuf,
    /// Plans file (JSONL lines with task_id, plan and optional compromises), or the release's
    /// inference records (an agent's run with the official harness)
    pub plans: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t = gtb_ops::score::ScoreFormat::Md)]
    pub format: gtb_ops::score::ScoreFormat,
    /// Write score.md / score.json into this folder
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also fail when a plan breaks the witness contract or a task has no plan
    #[arg(long)]
    pub witness: bool,
    /// A witness plans file (`gtb solve`): report the plans' utility as a share of it
    #[arg(long, value_name = "PLANS")]
    pub against: Option<PathBuf>,
    /// Score against a split's world table (`poi2category/all_poi_by_city.json` of a build):
    /// stand-in labels count with the category they name, as the release's evaluator scores
    /// them with that table (docs/HARNESS.md); without it, against the real venues only
    #[arg(long, alias = "world")]
    pub credit_stand_ins: bool,
    #[command(flatten)]
    pub inputs: PlanInputs,
}

/// `gtb tools`: the long tail of a split's world.
#[derive(Args, Debug)]
pub struct ToolsArgs {
    #[command(subcommand)]
    pub command: ToolsCommand,
}

#[derive(Subcommand, Debug)]
pub enum ToolsCommand {
    /// An OpenAI-compatible endpoint that stands in for the release harness's tool simulator
    /// (point its TOOL_API_BASE at http://HOST:PORT/v1): a call that misses the split's cache is
    /// answered from the split's world, or with an explicit no-data answer, never an invented one
    Serve(ServeArgs),
    /// Answer the calls a finished run missed (the harness's <tool>_missed.json files) from the
    /// split's world and add them to the split's sandbox cache, so that a rerun hits
    Fill(FillArgs),
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The split folder (a build's --out: sandbox_cache/, manifest.json)
    #[arg(long, value_name = "DIR")]
    pub split: PathBuf,
    /// Address to listen on (loopback by default; another address serves the network)
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0: any free port, printed at start)
    #[arg(long, default_value_t = 8765)]
    pub port: u16,
}

#[derive(Args, Debug)]
pub struct FillArgs {
    /// The split folder (a build's --out)
    pub split_dir: PathBuf,
    /// Folder of the run's <tool>_missed.json files (the harness writes them into its
    /// SANDBOX_CACHE_DIR)
    #[arg(long, value_name = "DIR")]
    pub missed: PathBuf,
    /// When a build holds the split folder, wait for it instead of failing at once
    #[arg(long)]
    pub wait: bool,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per process; boxing would only add noise
pub enum Command {
    /// Run the pipeline: prepare -> sample -> generate -> validate -> write
    Build(BuildArgs),
    /// Join the slices of `gtb build --shard I/N` runs into the split the unsharded build
    /// writes (same bytes), with its reports and manifest
    Merge(MergeArgs),
    /// Import real POIs (a release POI file, the ChinaTravel database, an OpenStreetMap
    /// extract or your own table) into a store that `gtb build --resources` reads
    Import(ImportArgs),
    /// Sample task skeletons only
    Sample(SampleArgs),
    /// Build the destination clusters from city coordinates
    Clusters(ClustersArgs),
    /// Model transport.csv from the rail network, airports and roads (deterministic)
    Transport(TransportArgs),
    /// Run every validator on a task file
    Validate(ValidateArgs),
    /// Statistics of any GroupTravelBench-style task file (paper Tables 5, 8, 9, conflicts,
    /// diversity), optionally side by side with another file or the paper's figures
    Audit(AuditArgs),
    /// Export a build's splits as Parquet, or as a Hugging Face dataset (Parquet + card)
    Export(ExportArgs),
    /// Witness plans: per task a plan in the release's format that is valid and keeps every
    /// hard constraint (after declared compromises), or why there is none (a proof, or a
    /// search that ran out)
    Solve(SolveArgs),
    /// Score a plans file, or the release's inference records, as the release does (nine
    /// validity rules, group utility, fairness) and check the witness contract; non-zero exit
    /// when a plan is invalid
    Score(ScoreArgs),
    /// Write the POI table plans are scored against (real attractions, restaurants, hotels) in
    /// the release's all_poi_by_city.json layout, for its evaluator
    PoiTable(PoiTableArgs),
    /// The tool sandbox of a split: `serve` answers the release harness's simulated tool calls
    /// from the split's world, `fill` adds a run's missed calls to the split's cache
    Tools(ToolsArgs),
}
