# Everyday commands. `make simulate` runs the bundled simulation; `make test` runs every check.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install simulate lint typecheck layers test unit bench chaos differential clean

# The sources are compiled after the editable install, which leaves them uncompiled: where
# PYTHONDONTWRITEBYTECODE is set, every start would compile them again in memory.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/python -m compileall -q src
	touch $(STAMP)

install: $(STAMP)

simulate: install
	$(BIN)/kube-pyscheduler simulate

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

layers: install
	$(BIN)/lint-imports

unit: install
	$(BIN)/pytest

# The whole suite: static checks, layer contracts, then every test.
test: lint typecheck layers unit

# Leader failover under a burst, judged from the apiserver's audit log (tests/e2e/chaos.py):
# three runs with two SIGKILLs of the Lease holder and an apiserver restart, then a burst with
# no strike. Exits non-zero on any violation. SCHEDULER=upstream measures kube-scheduler.
SCHEDULER ?= ours
chaos: install
	bash hack/build-e2e-binaries.sh >/dev/null
	$(BIN)/python -m tests.e2e.chaos --scheduler $(SCHEDULER) --repeat 3
	$(BIN)/python -m tests.e2e.chaos --scheduler $(SCHEDULER) --kills 0 --no-apiserver-restart

bench: install
	$(BIN)/python -m bench.simulate_basic

# Upstream kube-scheduler and ours on one real apiserver, the same seeded cases for both;
# disagreements are saved as replayable scenario files. `make differential CASES=2000 SEED=7`
CASES ?= 500
SEED ?= 1
differential: install
	$(BIN)/python -m tests.differential.runner --cases $(CASES) --seed $(SEED)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
