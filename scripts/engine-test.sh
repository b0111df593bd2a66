#!/usr/bin/env bash
# Run the engine tests of one engine: prepare it (scripts/engines/<engine>.sh prepare prints
# NAME=VALUE lines), then run the ignored tests of tests/it whose names match FILTER with those
# variables set. When the engine cannot be had, say "skipped: <why>" and run nothing: a skip is
# never reported as a pass.
#
#   scripts/engine-test.sh python-datasets export_datasets::
set -euo pipefail
engine=${1:?usage: $0 ENGINE FILTER}
filter=${2:?usage: $0 ENGINE FILTER}
cd "$(dirname "$0")/.."
set +e
vars=$("scripts/engines/$engine.sh" prepare)
rc=$?
set -e
if [ "$rc" -eq 3 ]; then
    echo "$engine tests ($filter) $vars"
    exit 0
elif [ "$rc" -ne 0 ]; then
    echo "error: scripts/engines/$engine.sh prepare failed (exit $rc)" >&2
    exit "$rc"
fi
env_args=()
while IFS= read -r line; do
    case "$line" in *=*) env_args+=("$line") ;; esac
done <<<"$vars"
env "${env_args[@]}" cargo test --release -p gtb --test it -- --ignored "$filter"
