# Settle: `make run` to try it, `make test` to prove it.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# Development defaults; a deployment sets its own (see README, "Configuration").
export DEBUG ?= true
export SECRET_KEY ?= settle-local-development-key

.PHONY: run test bench install install-test clean

$(VENV)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "Settle needs $(PYTHON) on PATH"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_operator
	$(PY) manage.py collectstatic --noinput --verbosity 0
	bin/serve

test: install-test
	$(PY) -m pytest $(PYTEST_ARGS)

# Benchmarks are named bench_*.py so the test suite never collects them. Then the write
# path over HTTP: gunicorn (2 workers) driven by wrk, the C load generator from Debian.
bench: install-test
	$(PY) -m pytest tests/bench -o python_files='bench_*.py' -s $(PYTEST_ARGS)
	@command -v wrk >/dev/null || { echo "make bench needs wrk: sudo apt-get install wrk"; exit 1; }
	$(PY) tests/bench/http_bench.py

clean:
	rm -rf $(VENV) var
