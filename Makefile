# The two commands: `make serve` and `make test`. Everything else is a step of those.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PORT

.PHONY: install install-dev migrate seed serve bench test lint typecheck clean chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install -q -r requirements-dev.txt
	touch $(VENV)/.runtime $@

install: $(VENV)/.runtime
install-dev: $(VENV)/.dev

migrate: install
	$(BIN)/flask --app app migrate

seed: migrate
	$(BIN)/flask --app app seed

# Installs, migrates, seeds an empty catalog, then gunicorn takes over the process.
# Prometheus multiprocess mode needs its directory in the environment before gunicorn starts
# (gunicorn.conf.py empties it): a fresh temporary one unless PROMETHEUS_MULTIPROC_DIR is set.
serve: seed
	export PROMETHEUS_MULTIPROC_DIR="$${PROMETHEUS_MULTIPROC_DIR:-$$(mktemp -d -t fleet-sizer-metrics.XXXXXX)}" && \
	exec $(BIN)/gunicorn --config gunicorn.conf.py 'app:create_app()'

# Load test on loopback (wrk, installed from Debian's packages if missing); not part of `make test`.
bench: install-dev
	$(BIN)/python -m bench.run

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check app tests migrations

typecheck: install-dev
	$(BIN)/mypy

# Debian's Chromium for tests/browser (Playwright drives it; no browser is downloaded).
chromium:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

test: install-dev lint typecheck chromium
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) instance/*.sqlite3*
