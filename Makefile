# Settle: `make run` to try it, `make test` to prove it.
SHELL := /bin/bash

# The newest of Python 3.13, 3.12 and 3.11 that runs here, unless PYTHON names one.
# (`python3.x -c ''` rather than `command -v`: a pyenv shim exists for every version
# pyenv knows, and fails when that version is not selected.)
ifeq ($(origin PYTHON),undefined)
PYTHON := $(firstword $(foreach v,3.13 3.12 3.11,$(shell python$(v) -c '' 2>/dev/null && echo python$(v))))
endif
PYTHON_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)
# A venv belongs to one interpreter: when PYTHON names another, the venv is made anew.
# CI keeps one venv per Python with VENV=.venv-3.11 and so on.
export VENV ?= .venv
PY := $(VENV)/bin/python
VENV_PYTHON := $(VENV)/.python-$(PYTHON_VERSION)

# Development defaults, for `make run`, `make manage` and `make test` only; a deployment
# sets its own (docs/configuration.md), and `bin/settle` uses the environment as it is.
export DEBUG ?= true
export SECRET_KEY ?= settle-local-development-key
# `make run` is read for one thing, the operator's login: installing and migrating say
# nothing unless they fail. pip's newer-version notice and setuptools' editable-build
# warning (a Python warning, in pip's build subprocess) are not the newcomer's business.
export PIP_DISABLE_PIP_VERSION_CHECK ?= 1
QUIET_BUILD := PYTHONWARNINGS=ignore

.PHONY: run worker beat manage test test-replication bench bench-scale install install-test clean

$(VENV_PYTHON):
	@test -n "$(PYTHON_VERSION)" || { echo "Settle needs Python 3.11, 3.12 or 3.13 on PATH," \
	  "or PYTHON=/path/to/python3.x; '$(or $(PYTHON),python3.x)' does not run"; exit 1; }
	@echo "Installing Settle into $(VENV) with $(PYTHON) (a minute, the first time)"
	@rm -rf $(VENV)
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip
	@touch $@

$(VENV)/.installed: pyproject.toml $(VENV_PYTHON)
	@$(QUIET_BUILD) $(PY) -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed client/pyproject.toml
	$(QUIET_BUILD) $(PY) -m pip install --quiet -e '.[test]'
	$(QUIET_BUILD) $(PY) -m pip install --quiet -e './client[mcp]'
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

run: install
	@$(PY) manage.py migrate --noinput --verbosity 0
	@$(PY) manage.py collectstatic --noinput --verbosity 0
	@bin/serve

# The production processes, one each (deploy/Procfile runs the same three).
worker: install
	$(VENV)/bin/celery -A board worker --loglevel INFO

# Exactly one beat for a whole deployment: docs/deploy.md, "Why one beat".
beat: install
	mkdir -p var
	$(VENV)/bin/celery -A board beat --loglevel INFO --schedule var/celerybeat-schedule

# Any manage.py command with the development defaults: make manage ARGS="issue_token bot".
# A second shell beside `make run` sees the public URL bin/serve gives the server (the
# first address of SETTLE_BIND, else 127.0.0.1:PORT, else :8000), so `endpoint add` works.
comma := ,
serve_bind := $(firstword $(subst $(comma), ,$(or $(SETTLE_BIND),127.0.0.1:$(or $(PORT),8000))))
manage: export SETTLE_PUBLIC_URL ?= http://$(patsubst 0.0.0.0:%,127.0.0.1:%,$(patsubst :%,127.0.0.1:%,$(serve_bind)))
manage: install
	$(PY) manage.py $(ARGS)

# On every core (pytest-xdist): TEST_WORKERS=0 runs in this one process. `load` keeps
# pytest-django's order on each worker (plain db tests before transactional ones, which
# empty the tables migrations fill; the browser's session last): by file (loadfile) order
# broke three tests. (xdist 3.8's xdist_group marks do nothing on pytest 9.2.)
TEST_WORKERS ?= $(shell nproc 2>/dev/null || echo 2)
test: install-test
	$(PY) -m pytest -n $(TEST_WORKERS) --dist load $(PYTEST_ARGS)

# Benchmarks are named bench_*.py so the test suite never collects them. Then the write
# path over HTTP: gunicorn (2 workers) driven by wrk, the C load generator from Debian.
bench: install-test
	$(PY) -m pytest tests/bench -o python_files='bench_*.py' -s $(PYTEST_ARGS)
	@command -v wrk >/dev/null || { echo "make bench needs wrk: sudo apt-get install wrk"; exit 1; }
	$(PY) tests/bench/http_bench.py
	$(PY) tests/bench/primary_cost.py

# Read replicas and failover on private PostgreSQL clusters (SPEC 12.1): a marker of their
# own, left out of `make test` (pyproject.toml's addopts), run by .ci/run's PostgreSQL leg.
test-replication: install-test
	$(PY) -m pytest -p no:xdist -m replication tests/replication $(PYTEST_ARGS)

# The console, the retention jobs and the agent side at millions of entries (issue 39):
# a dataset loaded once per size (PostgreSQL `<database>_scale_<N>`, SQLite
# var/scale-<N>.sqlite3), served by gunicorn, timed against a 50,000-entry baseline.
# SCALE_ENTRIES=N picks the size (default 5,000,000 on PostgreSQL, 1,000,000 on SQLite);
# SCALE_EXPLAIN=1 also writes the slow statements' plans (PostgreSQL). The table goes to
# var/bench-scale-<engine>-<N>.md.
bench-scale: install-test
	$(PY) tests/bench/bench_scale.py

clean:
	rm -rf .venv .venv-* var
