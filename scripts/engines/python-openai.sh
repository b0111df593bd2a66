#!/usr/bin/env bash
# Python with the `openai` client, for the serve test (tests/it/tools_serve.rs): the client
# the release harness asks its tool simulator with.
#
#   scripts/engines/python-openai.sh prepare
#
# prints `GTB_PYTHON_OPENAI=<python>` on success, or `skipped: <why>` with exit 3
# (scripts/engines/python-venv.sh has the venv's rules).
set -euo pipefail
case "${1:-}" in
prepare) exec "$(dirname "$0")/python-venv.sh" openai 'openai>=1.40' openai GTB_PYTHON_OPENAI ;;
*) echo "usage: $0 prepare" >&2; exit 2 ;;
esac
