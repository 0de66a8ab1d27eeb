# The two commands of cardgen: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: install
	$(BIN)/cardgen build

# Tests, then the linters: ruff, mypy and the one-way import check (no module imports a later stage).
test: install
	$(BIN)/python -m pytest -n 2 -q
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python tools/import_graph.py

bench: install
	$(BIN)/python bench/run.py

clean:
	rm -rf output
