#!/usr/bin/env bash
# Python with Hugging Face `datasets`, for the export test (tests/it/export_datasets.rs).
#
#   scripts/engines/python-datasets.sh prepare
#
# prints `GTB_PYTHON_DATASETS=<python>` on success, or `skipped: <why>` with exit 3
# (scripts/engines/python-venv.sh has the venv's rules).
set -euo pipefail
case "${1:-}" in
prepare) exec "$(dirname "$0")/python-venv.sh" datasets 'datasets>=2.18' 'datasets, huggingface_hub' GTB_PYTHON_DATASETS ;;
*) echo "usage: $0 prepare" >&2; exit 2 ;;
esac
