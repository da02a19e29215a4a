# The two commands: `make serve` and `make test`. Everything else is a step of those.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PORT

.PHONY: install install-dev migrate seed serve bench accuracy fit-engines cross-validate test unit lint typecheck clean chromium libreoffice spec mutation

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
	$(BIN)/python -m bench.mix

# Replays bench/measurements/ through the HTTP API of a real gunicorn and prints the error of the
# defaults per metric (DATA=dir for another set of rows of the same columns, e.g. a held-out one).
accuracy: install-dev
	$(BIN)/python -m bench.accuracy $(if $(DATA),--data $(DATA)) $(if $(URL),--url $(URL))

# Refits the engine profiles' constants on bench/measurements/ and writes catalog_seed/engines.yaml.
fit-engines: install-dev
	$(BIN)/python -m bench.fit_engines --write

# Leave-one-source-out: refits without each publication's rows and predicts them (minutes).
cross-validate: install-dev
	$(BIN)/python -m bench.fit_engines --cross-validate

# Writes openapi.yaml from the code (app/openapi); tests/test_openapi.py fails while the committed
# file differs from what this writes.
spec: install
	$(BIN)/python -m app.openapi

# Mutation testing of app/sizing (mutmut; not part of `make test`: it runs tests/sizing once per
# mutant, long). Prints the kill rate; `FILES='app.sizing.cost*'` runs the mutants of one module.
mutation: install-dev
	rm -rf mutants
	$(BIN)/mutmut run $(FILES)
	$(BIN)/mutmut export-cicd-stats
	$(BIN)/python -c "import json; s = json.load(open('mutants/mutmut-cicd-stats.json')); \
	  tried = s['killed'] + s['survived'] + s['timeout']; \
	  print(f\"mutation: {s['killed']} of {tried} mutants killed ({s['killed'] / max(tried, 1):.1%}), \
	  {s['survived']} survived, {s['timeout']} timed out, {s['no_tests']} without tests\")"

# The sizing core and the planning services, no HTTP, no database server, no long simulation:
# seconds, for the edit-test loop (`make test` runs everything).
unit: install-dev
	$(BIN)/python -m pytest tests/sizing tests/planning -q -m "not simulation and not slow and not postgres and not browser"

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check app tests migrations

typecheck: install-dev
	$(BIN)/mypy

# Debian's Chromium for tests/browser (Playwright drives it; no browser is downloaded).
chromium:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

# Debian's LibreOffice Calc (headless) recalculates the workbooks of format=xlsx in tests/api/test_workbook.py.
libreoffice:
	command -v soffice >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y libreoffice-calc-nogui)

test: install-dev lint typecheck chromium libreoffice
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) instance/*.sqlite3* mutants
