#!/usr/bin/env bash
# The LLM stage on the real engine (issue 29's benchmark): llama.cpp's llama-server serving
# Gemma 3 270M (prepared by scripts/engines/llama.sh, as for `make llm-e2e`), one member per
# request against one request per task, each at concurrency 1 and 2, on the same tasks
# (`--n N --seed SEED` of the shipped gtb.toml, default archetypes). Each run gets a fresh
# server (so its prefix cache holds only that run's prompts) and a fresh response cache.
# Prints one table: per accepted task, requests, rejections by reason, corrections, template
# lines, prompt tokens sent / computed / cached, completion tokens and wall time.
#
#   scripts/bench-llm-engine.sh [N] [SEED] [RUNS]
#
# RUNS is a list of GRANULARITY:CONCURRENCY[:MAX_TOKENS], by default
# "member:2 task:2:3072 member:1 task:1:3072": a whole-group prompt of a three-city task does
# not fit a 8,192-token window beside the default completion budget (8,192, of which half is
# kept for the reply), so per task the budget is 3,072 (a six-member reply takes about 2,000);
# a member's reply keeps at most 1,536 whatever the budget (`prompt::MEMBER_REPLY_TOKENS`).
#
# A run that takes longer than GTB_BENCH_RUN_TIMEOUT seconds (default 1500) is stopped; its
# row then shows the server's own counts (/metrics) and no accepted task.
#
# Results (each run's llm_report.json and build log) stay in $GTB_BENCH_DIR (default
# target/bench-llm-engine). It takes the CPU for a long time (tens of minutes on two cores).
set -euo pipefail
n=${1:-3}
seed=${2:-3}
runs=${3:-"member:2 task:2:3072 member:1 task:1:3072"}
cd "$(dirname "$0")/.."
root=$(pwd)
out=${GTB_BENCH_DIR:-$root/target/bench-llm-engine}
set +e
vars=$(scripts/engines/llama.sh prepare)
rc=$?
set -e
if [ "$rc" -eq 3 ]; then echo "llm engine benchmark $vars"; exit 0; fi
[ "$rc" -eq 0 ] || { echo "error: scripts/engines/llama.sh prepare failed (exit $rc)" >&2; exit "$rc"; }
eval "$(grep -E '^(LLAMA_SERVER_ARGS)=' <<<"$vars" | sed 's/=\(.*\)/="\1"/')"
cargo build --release --quiet --bin gtb
gtb="$root/target/release/gtb"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
stop() { scripts/engines/llama.sh stop "$port" >/dev/null 2>&1 || true; }
trap stop EXIT
mkdir -p "$out"
for run in $runs; do
    IFS=: read -r g c max_tokens <<<"$run"
    extra=()
    [ -n "$max_tokens" ] && extra=(--max-tokens "$max_tokens")
    dir="$out/$g-c$c"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp gtb.toml "$dir/"
    port=$(free_port)
    rm -f "${GTB_ENGINE_CACHE:-$HOME/.cache/gtb/llm-e2e}/run/llama-server-$port.log"
    # the e2e test's server: 16,384 tokens of KV over 2 slots (8,192 a request), the Gemma template
    # shellcheck disable=SC2086
    scripts/engines/llama.sh start "$port" $LLAMA_SERVER_ARGS -c 16384 -np 2 -n 1024 --metrics \
        --no-jinja --chat-template gemma --alias gemma-3-270m >/dev/null
    echo "== $g, concurrency $c: gtb build --n $n --seed $seed (log: $dir/build.log)"
    t0=$(date +%s.%N)
    set +e
    (cd "$dir" && OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_MODEL=gemma-3-270m \
        timeout -s INT -k 60 "${GTB_BENCH_RUN_TIMEOUT:-1500}" "$gtb" build --config gtb.toml --llm openai --n "$n" --seed "$seed" \
        --concurrency "$c" --granularity "$g" "${extra[@]}" >build.log 2>&1)
    echo $? >"$dir/exit"
    set -e
    python3 -c "import time,sys; print(round(time.time() - float(sys.argv[1]), 1))" "$t0" >"$dir/wall"
    curl -s "http://127.0.0.1:$port/metrics" >"$dir/metrics.txt" || true
    # requests the server processed (each takes a slot, which its log says)
    grep -c "launch_slot_.*processing task" \
        "${GTB_ENGINE_CACHE:-$HOME/.cache/gtb/llm-e2e}/run/llama-server-$port.log" \
        >"$dir/requests" 2>/dev/null || true
    stop
    if [ -f "$dir/output/test.jsonl" ]; then
        (cd "$dir" && "$gtb" validate --config gtb.toml output/test.jsonl >validate.log 2>&1 \
            && echo ok >validate || echo failed >validate)
    fi
done
python3 scripts/bench_llm_engine_table.py "$out" $runs
