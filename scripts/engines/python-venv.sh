#!/usr/bin/env bash
# A Python venv with one requirement, for an engine test: the shared body of
# scripts/engines/python-<name>.sh, which call it as
#
#   scripts/engines/python-venv.sh NAME REQUIREMENT IMPORTS VAR
#
# (IMPORTS: the modules that must import, comma-separated). It prints `VAR=<python>` on
# success. The venv lives outside the clone (${GTB_ENGINE_CACHE:-~/.cache/gtb}/python-NAME) and
# is reused while it imports IMPORTS. When python3 or pip cannot provide it (no network, no
# PyPI) it prints `skipped: <why>` and exits 3, so that the caller reports a skip, never a pass.
set -euo pipefail

NAME=${1:?usage: $0 NAME REQUIREMENT IMPORTS VAR}
REQUIREMENT=${2:?usage: $0 NAME REQUIREMENT IMPORTS VAR}
IMPORTS=${3:?usage: $0 NAME REQUIREMENT IMPORTS VAR}
VAR=${4:?usage: $0 NAME REQUIREMENT IMPORTS VAR}
CACHE=${GTB_ENGINE_CACHE:-$HOME/.cache/gtb}/python-$NAME
PY=$CACHE/venv/bin/python

skip() { echo "skipped: $*"; exit 3; }
ready() { [ -x "$PY" ] && "$PY" -c "import $IMPORTS" >/dev/null 2>&1; }

if ! ready; then
    command -v python3 >/dev/null || skip "python3 is not installed"
    mkdir -p "$CACHE"
    python3 -m venv "$CACHE/venv" >&2 2>"$CACHE/venv.log" ||
        skip "python3 -m venv failed: $(tail -n1 "$CACHE/venv.log")"
    "$PY" -m pip install --quiet --disable-pip-version-check --timeout 30 --retries 1 \
        "$REQUIREMENT" >&2 2>"$CACHE/pip.log" ||
        skip "pip cannot install $REQUIREMENT: $(tail -n1 "$CACHE/pip.log")"
    ready || skip "$REQUIREMENT installed but does not import"
fi
echo "$VAR=$PY"
