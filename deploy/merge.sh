#!/usr/bin/env bash
# The merge after every shard of deploy/run-shard.sh finished: joins SHARDS_DIR/shard-0 ..
# shard-<N-1> into OUT (test.jsonl byte-identical to the unsharded build, reports, manifest).
# gtb merge refuses a missing, duplicated or foreign shard and names it.
#
#   SHARD_COUNT   number of shards N
#   SHARDS_DIR    the folder the shards wrote into
#   OUT           output folder of the merged split
#   GTB           the gtb binary (default: gtb on PATH)
set -euo pipefail
: "${SHARD_COUNT:?set SHARD_COUNT (number of shards)}"
: "${SHARDS_DIR:?set SHARDS_DIR (the folder of the shards)}"
: "${OUT:?set OUT (output folder)}"
GTB=${GTB:-gtb}
dirs=()
for ((i = 0; i < SHARD_COUNT; i++)); do
    dirs+=("$SHARDS_DIR/shard-$i")
done
exec "$GTB" merge "${dirs[@]}" --out "$OUT"
