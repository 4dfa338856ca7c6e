# The set-up commands of the README: `make run`, `make test`, and `make check` for every day.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test
# The front end's lint (ESLint) at the versions package-lock.json pins; nothing is built.
STAMP_NODE := node_modules/.installed
# pytest-xdist workers; each starts its own Redis and PostgreSQL (tests/fixtures/servers.py).
# They take tests one at a time, longest first (tests/conftest.py), so none ends long after
# the others. Two on this 2-core machine: a third kept both cores busy with more work (its
# own browser, servers and solved dailies) and ended no sooner (docs/performance.md).
TEST_WORKERS ?= 2
# The tests `make check` leaves out (markers registered in pyproject.toml).
CHECK_MARKERS := not browser and not processes and not slow

.PHONY: run test check lint install install-test hooks chromium nginx postgresql bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(STAMP_RUN)

$(STAMP_NODE): package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm; }
	npm ci --silent --no-audit --no-fund
	touch $@

install: $(STAMP_RUN)

install-test: $(STAMP_TEST)

# The checks of .pre-commit-config.yaml, run on each commit from now on.
hooks: install-test
	$(BIN)/pre-commit install

run: install
	$(BIN)/rally serve

lint: install-test $(STAMP_NODE)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	npx --no-install eslint web/static/js

# Browser tests drive Debian's chromium (Playwright's own browser download cannot work here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium; }

# The proxy tests run Debian's nginx (in /usr/sbin, which a user's PATH may lack) in the
# foreground with a prefix of their own; the package's own service is not needed.
nginx:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nginx; }

# The tests run throwaway clusters of Debian's PostgreSQL (initdb and postgres, in
# /usr/lib/postgresql/*/bin); the package's own server is not needed.
postgresql:
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql; }

check: lint postgresql
	$(BIN)/python -m pytest -n 2 -m "$(CHECK_MARKERS)"

test: lint chromium nginx postgresql
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --maxschedchunk 1

bench: install
	$(BIN)/python -m bench.engine
	$(BIN)/python -m bench.solver

clean:
	rm -rf $(VENV) node_modules .pytest_cache .hypothesis .ruff_cache .mypy_cache
