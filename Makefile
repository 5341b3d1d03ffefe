# sapsam: every target installs what it needs into .venv first, so a fresh clone needs no setup.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test lint typecheck unit bench clean proto serve

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall whenever the project's metadata changes.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy --strict service/sapsam

# pytest exits 5 when it collects nothing; that is a failure here, and make stops on it.
test: lint typecheck
	$(BIN)/python -m pytest

# Regenerate the committed Python code of the API contract (proto/ -> service/sapsam/api/generated);
# tests/api/test_generated_code.py fails when the committed code differs from what this produces.
proto: $(STAMP)
	$(BIN)/python -m sapsam.api.codegen --proto-root proto --output service/sapsam/api/generated

# Run the game service on 127.0.0.1:50051 (embedded PostgreSQL unless DATABASE_URL is set);
# extra flags go in SERVE_ARGS, e.g. `make serve SERVE_ARGS="--workers 2"`.
serve: $(STAMP)
	$(BIN)/sapsam serve $(SERVE_ARGS)

bench: $(STAMP)
	@for script in bench/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
