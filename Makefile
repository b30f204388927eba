# tierpilot: `make run` starts everything on embedded defaults, `make test` runs every suite.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# what running needs (binary to look for = Debian package) and what only the tests need
RUN_DEBS := redis-server=redis-server
TEST_DEBS := initdb=postgresql chromium=chromium aws=awscli s3cmd=s3cmd rclone=rclone prometheus=prometheus fusermount3=fuse3 haproxy=haproxy slapd=slapd
# test servers: the ones named by these variables, else throwaway ones the suite starts
export TIERPILOT_TEST_POSTGRES_URL
export TIERPILOT_TEST_REDIS_URL

.PHONY: help setup setup-run debs-run debs-test venv venv-dev frontend test-tools run test test-imports test-backend test-sqlite test-postgresql test-frontend test-e2e lint bench api-types clean

help:
	@echo "make run    - install what is missing and start tierpilot (http://127.0.0.1:8000)"
	@echo "make test   - install what is missing and run every test suite"
	@echo "make lint   - ruff, mypy, import contracts, biome, tsc"
	@echo "make bench  - run the benchmarks in bench/"

setup: setup-run debs-test venv-dev test-tools
setup-run: debs-run venv frontend

# Debian packages, installed only when their binary is missing; apt waits up to 10 min for a dpkg lock
# another apt holds and the install is retried 3 times
debs-run:
	@scripts/install-debs $(RUN_DEBS)
debs-test:
	@scripts/install-debs $(TEST_DEBS)

# the venv in two steps: what running needs (`make run`), then the test and lint tools (`make setup`)
venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	@touch $@
venv-dev: $(VENV)/.installed-dev
$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install -q -e '.[dev]'
	@touch $@

frontend: frontend/node_modules/.installed frontend/dist/index.html
frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
frontend/dist/index.html: frontend/node_modules/.installed $(shell find frontend/src frontend/index.html frontend/vite.config.ts -type f 2>/dev/null)
	cd frontend && npm run build --silent

# tools only the test suites start (Azurite for Azure Blob tiers); fake-gcs-server comes with the dev extras
test-tools: tests/tools/node_modules/.installed
tests/tools/node_modules/.installed: tests/tools/package.json tests/tools/package-lock.json
	cd tests/tools && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

run: setup-run
	$(VENV)/bin/tierpilot up

test: setup
	$(MAKE) --no-print-directory test-imports test-backend test-frontend test-e2e

# who may import whom (pyproject.toml [tool.importlinter], docs/architecture.md)
test-imports:
	$(VENV)/bin/lint-imports --no-cache

# the two backend suites side by side: each has its own data dir, databases and Redis server (the PostgreSQL
# suite starts a throwaway redis-server, as tests use fixed database numbers of their suite's server); each
# suite's output is printed in one piece when it ends, and either failing fails this (pytest's 5 included)
test-backend:
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-sqlite test-postgresql

test-sqlite:
	TIERPILOT_TEST_DB=sqlite $(VENV)/bin/pytest -m "not e2e" -q -p no:cacheprovider

test-postgresql:
	TIERPILOT_TEST_DB=postgresql TIERPILOT_TEST_REDIS_URL= $(VENV)/bin/pytest -m "not e2e" -q -p no:cacheprovider

test-frontend:
	cd frontend && npm test --silent

test-e2e:
	TIERPILOT_TEST_DB=sqlite $(VENV)/bin/pytest -m e2e -q -p no:cacheprovider tests/e2e

lint: setup
	$(VENV)/bin/ruff check backend worker tests bench migrations
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	cd frontend && npm run lint --silent && npm run typecheck --silent

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

api-types: venv-dev
	cd frontend && npm run gen:api

clean:
	rm -rf frontend/dist tests/e2e/artifacts .pytest_cache .mypy_cache .ruff_cache
