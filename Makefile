# The two commands: `make serve` and `make test`. Everything else is a step of those.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PORT

.PHONY: install install-dev migrate seed serve test lint typecheck clean

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
serve: seed
	exec $(BIN)/gunicorn --config gunicorn.conf.py 'app:create_app()'

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check app tests migrations

typecheck: install-dev
	$(BIN)/mypy

test: install-dev lint typecheck
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) instance/*.sqlite3*
