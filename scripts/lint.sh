#!/usr/bin/env bash
# Lint and type checks, used by `make test`, CI and you.
set -euo pipefail
cd "$(dirname "$0")/.."
ruff check .
ruff format --check .
ecocompute schema export --check
mypy
