#!/usr/bin/env bash
# Python with Hugging Face `datasets`, for the export test (tests/it/export_datasets.rs).
#
#   scripts/engines/python-datasets.sh prepare
#
# prints `GTB_PYTHON_DATASETS=<python>` on success. The venv lives outside the clone
# (${GTB_ENGINE_CACHE:-~/.cache/gtb}/python-datasets) and is reused while it imports `datasets`.
# When python3 or pip cannot provide it (no network, no PyPI) it prints `skipped: <why>` and
# exits 3, so that the caller reports a skip, never a pass.
set -euo pipefail

REQUIREMENT='datasets>=2.18'
CACHE=${GTB_ENGINE_CACHE:-$HOME/.cache/gtb}/python-datasets
PY=$CACHE/venv/bin/python

skip() { echo "skipped: $*"; exit 3; }
ready() { [ -x "$PY" ] && "$PY" -c 'import datasets, huggingface_hub' >/dev/null 2>&1; }

case "${1:-}" in
prepare)
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
    echo "GTB_PYTHON_DATASETS=$PY"
    ;;
*)
    echo "usage: $0 prepare" >&2
    exit 2
    ;;
esac
