#!/usr/bin/env bash
# Submit a sharded build to Slurm: an array of SHARD_COUNT shard tasks, then the merge, which
# starts only when all of them succeeded. Run from the repository (or set GTB_DEPLOY to the
# deploy/ folder); the variables are exported to the jobs.
#
#   SHARD_COUNT=16 SHARDS_DIR=/shared/gtb/shards OUT=/shared/gtb/output GTB=$PWD/target/release/gtb \
#   GTB_ARGS="--n 100000 --seed 1 --llm openai --model Qwen/Qwen3-8B --base-url http://vllm-host:8000/v1 --cache-dir /shared/gtb/llm_cache" \
#   deploy/slurm/submit.sh
#
# A failed shard: resubmit only it (sbatch --array=<I> --export=ALL deploy/slurm/shard.sbatch),
# then the merge (sbatch --export=ALL deploy/slurm/merge.sbatch).
set -euo pipefail
: "${SHARD_COUNT:?set SHARD_COUNT (number of shards)}"
: "${SHARDS_DIR:?set SHARDS_DIR (shared folder for the shards)}"
: "${OUT:?set OUT (output folder)}"
export SHARD_COUNT SHARDS_DIR OUT
export GTB_DEPLOY=${GTB_DEPLOY:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
shards=$(sbatch --parsable --export=ALL --array="0-$((SHARD_COUNT - 1))" "$GTB_DEPLOY/slurm/shard.sbatch")
shards=${shards%%;*}
merge=$(sbatch --parsable --export=ALL --dependency="afterok:$shards" "$GTB_DEPLOY/slurm/merge.sbatch")
echo "shards: job $shards (array 0-$((SHARD_COUNT - 1))), merge: job $merge"
