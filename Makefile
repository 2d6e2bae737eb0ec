# Every target creates .venv at the repo root when missing and installs into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DATA ?= .dsh-data
PORT ?= 8765

.PHONY: run test lint typecheck pytest system-deps bench chaos clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/dsh serve --overlay examples/web-schedule/overlay.toml --data $(DATA) --model scripted --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check hookspecs src tests bench examples
	$(BIN)/ruff format --check hookspecs src tests bench examples

typecheck: $(STAMP)
	$(BIN)/mypy

system-deps:
	bash scripts/system-deps

pytest: $(STAMP) system-deps
	rm -f .coverage .coverage.*
	$(BIN)/coverage run -m pytest $(PYTEST_ARGS)
	$(BIN)/coverage combine --quiet
	$(BIN)/coverage report --include='src/dsh_schedule/*,src/dsh_schedule_ui/*' --fail-under=100
	$(BIN)/coverage report --include='src/dsh_host/*,hookspecs/*' --skip-covered

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

# The long reliability run: 200 SIGKILLs of real `dsh serve` processes, the fault, clock and
# bad-input suites at full size; docs/reliability.md is rendered from the figures even when a
# test failed (it then says so), and make fails with pytest's status.
CHAOS_RESULTS := build/reliability
chaos: $(STAMP)
	rm -rf $(CHAOS_RESULTS)
	DSH_CHAOS_KILLS=$${DSH_CHAOS_KILLS:-200} DSH_RELIABILITY_RESULTS=$(CHAOS_RESULTS) \
		$(BIN)/python -m pytest tests/chaos tests/reliability -m chaos -p no:cacheprovider; \
	status=$$?; \
	$(BIN)/python -m tests.chaos.report $(CHAOS_RESULTS) docs/reliability.md --status $$status \
		|| status=1; \
	exit $$status

clean:
	rm -rf $(VENV) .coverage .coverage.* .mypy_cache .ruff_cache .pytest_cache build dist
