#!/usr/bin/env bash
# Sets up, lints, and runs the whole test suite. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check server tests bench
.venv/bin/ruff format --check server tests bench
# The type checker: strict on the analysis layer and the public APIs ([tool.mypy] in pyproject.toml lists them).
.venv/bin/mypy
# pytest exits 5 when it collected no test: set -e turns that into a failure, never a silent pass.
.venv/bin/pytest -q -p no:cacheprovider
