#!/usr/bin/env bash
# One shard of a sharded gtb build: the command every launcher (Slurm, Kubernetes, local.sh)
# runs for shard SHARD_INDEX of SHARD_COUNT. Rerunning it resumes: fresh stages are reused and
# LLM answers already in the cache are replayed, so only what was missing is asked again.
#
#   SHARD_INDEX   0-based index of this shard (Slurm: SLURM_ARRAY_TASK_ID, k8s: JOB_COMPLETION_INDEX)
#   SHARD_COUNT   number of shards N (the same for every shard and the merge)
#   SHARDS_DIR    shared folder; this shard writes SHARDS_DIR/shard-<I>
#   GTB           the gtb binary (default: gtb on PATH)
#   GTB_ARGS      the build's arguments, the same for every shard, split on spaces
#                 (e.g. "--n 2000 --seed 1 --llm openai --model M --base-url URL --cache-dir DIR")
#   GTB_THREADS   worker threads (default 0: all cores the process may use)
set -euo pipefail
: "${SHARD_INDEX:?set SHARD_INDEX (0-based shard index)}"
: "${SHARD_COUNT:?set SHARD_COUNT (number of shards)}"
: "${SHARDS_DIR:?set SHARDS_DIR (shared folder for the shards)}"
GTB=${GTB:-gtb}
read -r -a build_args <<<"${GTB_ARGS:-}"
out="$SHARDS_DIR/shard-$SHARD_INDEX"
mkdir -p "$SHARDS_DIR"
echo "gtb shard $SHARD_INDEX/$SHARD_COUNT -> $out" >&2
exec "$GTB" --threads "${GTB_THREADS:-0}" build --shard "$SHARD_INDEX/$SHARD_COUNT" --out "$out" "${build_args[@]}"
