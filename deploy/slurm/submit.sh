#!/usr/bin/env bash
# Submit a sharded build to Slurm: an array of SHARD_COUNT shard tasks, then the merge, which
# starts only when all of them succeeded. Run from the repository (or set GTB_DEPLOY to the
# deploy/ folder); the variables are exported to the jobs.
#
#   SHARD_COUNT=16 SHARDS_DIR=/shared/gtb/shards OUT=/shared/gtb/output GTB=$PWD/target/release/gtb \
#   GTB_ARGS="--n 100000 --seed 1 --llm openai --model Qwen/Qwen3-8B --base-url http://vllm-host:8000/v1 --cache-dir /shared/gtb/llm_cache" \
#   GTB_SBATCH_ARGS="--partition=cpu --time=08:00:00" GTB_SHARD_SBATCH_ARGS="--cpus-per-task=4 --mem=8G" \
#   deploy/slurm/submit.sh
#
# sbatch options (split on spaces, passed as words; they override the #SBATCH defaults of
# shard.sbatch and merge.sbatch, which ask for 1 CPU and 2G so that any node can run them):
#   GTB_SBATCH_ARGS         for the shard tasks and the merge (partition, account, qos, time...)
#   GTB_SHARD_SBATCH_ARGS   for the shard tasks only (after GTB_SBATCH_ARGS: they win)
#   GTB_MERGE_SBATCH_ARGS   for the merge only
# Resuming:
#   SHARD_ARRAY             the array indices to submit (default 0-<N-1>); e.g. SHARD_ARRAY=3 to
#                           resubmit only shard 3 (same variables otherwise), the merge after it
#   GTB_MERGE_AFTER         job ids the merge also waits for to end (afterany), e.g. the first
#                           array job while its other shards still run
# Check: before submitting, every request is checked against the cluster (sinfo: a node of the
# partition with that many CPUs and that much memory, the partition's time limit; then
# `sbatch --test-only`). A request no node can satisfy is refused here, with what was asked and
# what the largest node has, instead of pending forever (squeue: PD (PartitionConfig)).
#   deploy/slurm/submit.sh --check   only checks (exit 0: fits, 1: does not)
#   GTB_SBATCH_NO_CHECK=1            skips the check
set -euo pipefail
check_only=0
case ${1:-} in
--check) check_only=1 ;;
"") ;;
*) echo "usage: [variables] $0 [--check]" >&2; exit 2 ;;
esac
: "${SHARD_COUNT:?set SHARD_COUNT (number of shards)}"
: "${SHARDS_DIR:?set SHARDS_DIR (shared folder for the shards)}"
: "${OUT:?set OUT (output folder)}"
export SHARD_COUNT SHARDS_DIR OUT
export GTB_DEPLOY=${GTB_DEPLOY:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
array=${SHARD_ARRAY:-0-$((SHARD_COUNT - 1))}

read -r -a common <<<"${GTB_SBATCH_ARGS:-}"
read -r -a shard_extra <<<"${GTB_SHARD_SBATCH_ARGS:-}"
read -r -a merge_extra <<<"${GTB_MERGE_SBATCH_ARGS:-}"
shard_args=(${common[@]+"${common[@]}"} ${shard_extra[@]+"${shard_extra[@]}"})
merge_args=(${common[@]+"${common[@]}"} ${merge_extra[@]+"${merge_extra[@]}"})
shard_script="$GTB_DEPLOY/slurm/shard.sbatch"
merge_script="$GTB_DEPLOY/slurm/merge.sbatch"

# --- the check ----------------------------------------------------------------------------

# memory as sbatch reads it (default unit M) -> MB
to_mb() {
    local v=${1^^} n unit
    n=${v%%[KMGT]*}
    unit=${v#"$n"}
    unit=${unit:0:1}
    [[ $n =~ ^[0-9]+$ ]] || { echo -1; return; }
    case $unit in
    K) echo $(((n + 1023) / 1024)) ;;
    "" | M) echo "$n" ;;
    G) echo $((n * 1024)) ;;
    T) echo $((n * 1024 * 1024)) ;;
    esac
}

# a Slurm time (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, infinite/UNLIMITED) -> minutes (-1: no limit)
to_min() {
    local t=$1 d=0 h=0 m=0 s=0 rest
    case ${t,,} in infinite | unlimited | "" | n/a) echo -1; return ;; esac
    if [[ $t == *-* ]]; then
        d=${t%%-*}
        rest=${t#*-}
        IFS=: read -r h m s <<<"$rest"
    else
        local parts
        IFS=: read -r -a parts <<<"$t"
        case ${#parts[@]} in
        1) m=${parts[0]} ;;
        2) m=${parts[0]} s=${parts[1]} ;;
        *) h=${parts[0]} m=${parts[1]} s=${parts[2]} ;;
        esac
    fi
    echo $(((10#${d:-0} * 24 + 10#${h:-0}) * 60 + 10#${m:-0} + (10#${s:-0} > 0 ? 1 : 0)))
}

# The resources one task of SCRIPT asks for with ARGS...: its #SBATCH lines, then ARGS (the
# last given wins, as in sbatch). Sets req_cpus, req_mem_mb, req_part, req_time, req_text.
read_request() {
    local script=$1
    shift
    local words=() line
    while IFS= read -r line; do
        [[ $line == "#SBATCH "* ]] || continue
        read -r -a w <<<"${line#\#SBATCH }"
        words+=("${w[@]}")
    done <"$script"
    words+=("$@")
    req_cpus=1 req_mem="" req_mem_per_cpu="" req_part="" req_time=""
    local i=0 opt val
    while ((i < ${#words[@]})); do
        opt=${words[$i]} val=""
        case $opt in
        --*=*) val=${opt#*=} opt=${opt%%=*} ;;
        --cpus-per-task | --mem | --mem-per-cpu | --partition | --time) val=${words[$((i + 1))]:-} i=$((i + 1)) ;;
        -c | -p | -t) val=${words[$((i + 1))]:-} i=$((i + 1)) ;;
        -c* | -p* | -t*) val=${opt:2} opt=${opt:0:2} ;;
        esac
        case $opt in
        --cpus-per-task | -c) req_cpus=$val ;;
        --mem) req_mem=$val req_mem_per_cpu="" ;;
        --mem-per-cpu) req_mem_per_cpu=$val req_mem="" ;;
        --partition | -p) req_part=$val ;;
        --time | -t) req_time=$val ;;
        esac
        i=$((i + 1))
    done
    req_mem_mb=0
    if [[ -n $req_mem ]]; then
        req_mem_mb=$(to_mb "$req_mem")
    elif [[ -n $req_mem_per_cpu ]]; then
        req_mem_mb=$(($(to_mb "$req_mem_per_cpu") * req_cpus))
    fi
    req_text="--cpus-per-task=$req_cpus"
    [[ -n $req_mem ]] && req_text+=" --mem=$req_mem"
    [[ -n $req_mem_per_cpu ]] && req_text+=" --mem-per-cpu=$req_mem_per_cpu"
    req_text+=" --partition=${req_part:-<default>}"
    [[ -n $req_time ]] && req_text+=" --time=$req_time"
    return 0
}

# check WHAT SCRIPT ARGS...: does some node of the partition take one task? Prints why not.
check_request() {
    local what=$1 script=$2
    shift 2
    read_request "$script" "$@"
    local parts=() p
    if [[ -n $req_part ]]; then
        IFS=, read -r -a parts <<<"$req_part"
    else
        p=$(sinfo -h -o '%P' 2>/dev/null | sed -n 's/\*$//p' | head -n 1)
        if [[ -n $p ]]; then
            parts=("$p")
            req_text=${req_text/--partition=<default>/--partition=<default: $p>}
        fi
    fi
    local problems=() fits=0 best_cpu=0 best_cpu_node="" best_mem=0 best_mem_node="" limit part_ok=0
    for p in ${parts[@]+"${parts[@]}"}; do
        if ! sinfo -h -o '%P' 2>/dev/null | sed 's/\*$//' | grep -qx -- "$p"; then
            problems+=("partition '$p' does not exist")
            continue
        fi
        limit=$(sinfo -h -p "$p" -o '%l' | head -n 1)
        if [[ -n $req_time ]] && (($(to_min "$limit") >= 0 && $(to_min "$req_time") > $(to_min "$limit"))); then
            problems+=("--time=$req_time exceeds the time limit of partition $p ($limit)")
            continue
        fi
        part_ok=1
        local n c m
        # %c CPUs, %m memory MB (RealMemory) of each node of the partition
        while read -r n c m; do
            [[ $c =~ ^[0-9]+$ && $m =~ ^[0-9]+$ ]] || continue
            if ((c > best_cpu)); then best_cpu=$c best_cpu_node="$n ($c CPUs, $m MB, partition $p)"; fi
            if ((m > best_mem)); then best_mem=$m best_mem_node="$n ($c CPUs, $m MB, partition $p)"; fi
            if ((c >= req_cpus && m >= req_mem_mb)); then fits=1; fi
        done < <(sinfo -h -N -p "$p" -o '%N %c %m')
    done
    if ((${#parts[@]} == 0)); then
        problems+=("no partition given and no default partition")
    fi
    if ((!fits)); then
        local msg="no node can run the $what: it asks for $req_text"
        if ((${#problems[@]} > 0)); then
            msg+=$'\n'"  $(printf '%s; ' "${problems[@]}")"
            msg=${msg%; }
        fi
        if ((part_ok)); then
            msg+=$'\n'"  no node of partition(s) ${parts[*]} has $req_cpus CPU(s) and ${req_mem_mb} MB: the most CPUs: $best_cpu_node; the most memory: $best_mem_node"
        fi
        msg+=$'\n'"  partitions: $(sinfo -h -o '%P (%D nodes, %c CPUs, %m MB, time %l)' 2>/dev/null | paste -sd ';' | sed 's/;/; /g')"
        echo "$msg"
        return 1
    fi
    # Slurm's own word (limits of the association, QOS, features, GRES...): --test-only.
    local out
    if ! out=$(sbatch --test-only "$@" "$script" 2>&1); then
        echo "Slurm refuses the $what: it asks for $req_text; sbatch --test-only says: $(echo "$out" | grep -v '^$' | tail -n 2 | paste -sd ' ')"
        return 1
    fi
    return 0
}

if [[ ${GTB_SBATCH_NO_CHECK:-0} != 1 ]]; then
    command -v sinfo >/dev/null || { echo "submit.sh: sinfo not found (is this a Slurm login node?)" >&2; exit 1; }
    if ! sinfo -h -o '%P' >/dev/null 2>&1; then
        echo "submit.sh: cannot reach the Slurm controller: $(sinfo 2>&1 | tail -n 1)" >&2
        exit 1
    fi
    failed=0
    if ! why=$(check_request "shard job" "$shard_script" --array="$array" ${shard_args[@]+"${shard_args[@]}"}); then
        echo "submit.sh: $why" >&2
        failed=1
    fi
    if ! why=$(check_request "merge job" "$merge_script" ${merge_args[@]+"${merge_args[@]}"}); then
        echo "submit.sh: $why" >&2
        failed=1
    fi
    if ((failed)); then
        echo "submit.sh: nothing submitted. Set GTB_SBATCH_ARGS / GTB_SHARD_SBATCH_ARGS / GTB_MERGE_SBATCH_ARGS (e.g. \"--cpus-per-task=1 --mem=2G --partition=NAME\") to what a node has." >&2
        exit 1
    fi
    echo "submit.sh: checked: the shard and merge requests fit a node" >&2
fi
((check_only)) && exit 0

shards=$(sbatch --parsable --export=ALL --array="$array" ${shard_args[@]+"${shard_args[@]}"} "$shard_script")
shards=${shards%%;*}
dep="afterok:$shards"
if [[ -n ${GTB_MERGE_AFTER:-} ]]; then
    for j in ${GTB_MERGE_AFTER//,/ }; do dep+=",afterany:$j"; done
fi
merge=$(sbatch --parsable --export=ALL --dependency="$dep" ${merge_args[@]+"${merge_args[@]}"} "$merge_script")
merge=${merge%%;*}
echo "shards: job $shards (array $array), merge: job $merge (after $dep)"
