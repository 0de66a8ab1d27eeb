# The two commands of cardgen: `make demo` and `make test` (`make lint` is its first part). All set up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo lint test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python tools/startup_code.py
	touch $(STAMP)

demo: install
	$(BIN)/cardgen build

# The linters, in well under a minute: ruff, mypy and the one-way import check (no module imports a later stage).
# .pre-commit-config.yaml runs this same target before each commit.
lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python tools/import_graph.py

# The linters first (a slip fails in seconds, not after the suite), then the tests.
test: lint
	$(BIN)/python -m pytest -n 2 -q

bench: install
	$(BIN)/python bench/run.py

clean:
	rm -rf output
