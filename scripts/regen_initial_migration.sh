#!/usr/bin/env bash
# While nothing is deployed, the schema is one initial revision regenerated from the models.
# Run after adding or changing a model: it rewrites migrations/versions/*_initial.py.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -f migrations/versions/*_initial.py
.venv/bin/alembic -x dummy=1 -c alembic.ini \
  -x url="sqlite:///$tmp/x.db" upgrade head >/dev/null 2>&1 || true
TIERPILOT_DATABASE_URL="sqlite:///$tmp/x.db" .venv/bin/alembic -c alembic.ini revision --autogenerate \
  --rev-id 0001 -m initial >/dev/null
f=$(ls migrations/versions/*_initial.py)
.venv/bin/ruff format -q "$f" && .venv/bin/ruff check -q --fix "$f" || true
echo "regenerated $f"
