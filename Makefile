# boardd: `make demo` runs the whole pipeline with a simulated board; `make test` runs the checks.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint typecheck pytest bench corpus-check clean

$(STAMP): pyproject.toml
	@command -v $(PY) >/dev/null || { echo "python3 is needed (apt-get install python3 python3-venv)"; exit 1; }
	@$(PY) -c 'import venv, ensurepip' 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,broker]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/boardd demo $(ARGS)

lint: setup
	$(BIN)/ruff check boardd drivers tests bench scripts
	$(BIN)/lint-imports

typecheck: setup
	$(BIN)/mypy

pytest: setup
	scripts/system-deps.sh mosquitto chromium openssl systemd strace
	$(BIN)/pytest $(PYTEST_ARGS)

test: lint typecheck pytest

bench: setup
	$(BIN)/python -m bench

# `boardd replay` over the recorded corpus: byte-identical to tests/replay_corpus.sha256 (about 3 min).
corpus-check: setup
	$(BIN)/python scripts/replay_corpus.py check

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
