#!/usr/bin/env bash
# A sharded build on one machine: SHARD_COUNT local processes run deploy/run-shard.sh (the
# command the Slurm and Kubernetes jobs run), then deploy/merge.sh. Same variables as those
# two scripts; each shard's log goes to SHARDS_DIR/shard-<I>.log.
#
#   SHARD_COUNT=4 SHARDS_DIR=shards OUT=output GTB=target/release/gtb \
#   GTB_ARGS="--n 2000 --seed 1" deploy/local.sh
set -euo pipefail
: "${SHARD_COUNT:?set SHARD_COUNT (number of shards)}"
: "${SHARDS_DIR:?set SHARDS_DIR (folder for the shards)}"
: "${OUT:?set OUT (output folder)}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$SHARDS_DIR"
pids=()
for ((i = 0; i < SHARD_COUNT; i++)); do
    SHARD_INDEX=$i "$here/run-shard.sh" >"$SHARDS_DIR/shard-$i.log" 2>&1 &
    pids+=("$!")
done
failed=()
for ((i = 0; i < SHARD_COUNT; i++)); do
    if ! wait "${pids[$i]}"; then
        failed+=("$i")
    fi
done
if ((${#failed[@]} > 0)); then
    for i in "${failed[@]}"; do
        echo "shard $i/$SHARD_COUNT failed; last lines of $SHARDS_DIR/shard-$i.log:" >&2
        tail -n 5 "$SHARDS_DIR/shard-$i.log" >&2
    done
    echo "rerun the failed shard(s) (SHARD_INDEX=<I> deploy/run-shard.sh resumes), then deploy/merge.sh" >&2
    exit 1
fi
exec "$here/merge.sh"
