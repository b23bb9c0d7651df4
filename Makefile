# The two commands: `make run` (fresh machine -> running server) and `make test` (-> whole suite).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
ARGS   ?=

.PHONY: run test check bench fmt clean agent-clis

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "nerve needs Python 3.11 or newer; set PYTHON=python3.x")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the dependency list changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed

run: $(VENV)/.installed
	$(BIN)/nerve serve $(ARGS)

test: $(VENV)/.installed-dev agent-clis
	$(BIN)/python -m pytest $(ARGS)

# The real Claude Code and Codex CLIs the protocol tests drive (tests/agent_clis); reinstalled
# only when the lockfile changes. No npm: their tests skip (and fail under CI=true).
CLIS := tests/agent_clis
agent-clis: $(CLIS)/node_modules/.package-lock.json

$(CLIS)/node_modules/.package-lock.json: $(CLIS)/package-lock.json
	@if command -v npm >/dev/null; then \
		npm ci --no-audit --no-fund --ignore-scripts --loglevel=error --prefix $(CLIS); \
	else echo "npm not found: the agent CLI tests (tests/agent_clis) will skip"; fi

check: $(VENV)/.installed-dev
	$(BIN)/ruff format --check src tests bench
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_module_size.py src tests bench

fmt: $(VENV)/.installed-dev
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

# Benchmarks print tables; the evaluation data is read from ../shared/data (see bench/*.py --help).
bench: $(VENV)/.installed-dev
	$(BIN)/python bench/routing.py
	$(BIN)/python bench/routing_when.py
	$(BIN)/python bench/learning.py
	$(BIN)/python bench/safety.py
	$(BIN)/python bench/language.py
	$(BIN)/python bench/intent.py
	$(BIN)/python bench/locomo.py
	$(BIN)/python bench/memory_store.py
	$(BIN)/python bench/memory_wal.py
	$(BIN)/python bench/memory_api.py
	$(BIN)/python bench/memory_scale.py writes
	$(BIN)/python bench/memory_scale.py startup
	$(BIN)/python bench/memory_scale.py search
	$(BIN)/python bench/memory_transfer.py
	$(BIN)/python bench/gateway.py $(ARGS)
	$(BIN)/python bench/protocols.py
	$(BIN)/python bench/guard.py
	$(BIN)/python bench/guard_http.py
	$(BIN)/python bench/path_memory.py
	$(BIN)/python bench/replicas.py
	$(BIN)/python bench/access.py
	$(BIN)/python bench/mcp_latency.py
	$(BIN)/python bench/voice.py
	$(BIN)/python -m bench.assistant
	$(BIN)/python bench/mcp_tools_tokens.py
	$(BIN)/python bench/soak.py --seconds 60
	$(BIN)/python bench/soak_replicas.py --seconds 60

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
