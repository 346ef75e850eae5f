# make demo : set up and run the main job      make test : set up and run the test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# one virtualenv: the demo's packages (NumPy, tqdm, matplotlib); those and the tests' (torch...);
# the documentation tools
DEMO_STAMP := $(VENV)/.demo-installed
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.docs-installed

.PHONY: test demo docs bench lint clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[demo]'
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test,demo]'
	$(PY) -m pip install -q --no-deps torchvision==0.28.0
	touch $(STAMP) $(DEMO_STAMP)

# The tests run in a random order (pytest-randomly), a new one each time: the seed is printed,
# and `make test SEED=<seed>` repeats an order. `make test JOBS=` runs them in one process.
# (`:=`, so the seed is drawn once: a recursive `?=` would draw a new one at each use)
ifndef SEED
SEED := $(shell $(PYTHON) -c "import random; print(random.randrange(10**6))")
endif
JOBS ?= -n 2

test: $(STAMP)
	@echo "test order seed: $(SEED)   (make test SEED=$(SEED) repeats this order)"
	$(PY) -m pytest -q $(JOBS) -p randomly --randomly-seed=$(SEED) tests

demo: $(DEMO_STAMP)
	$(PY) examples/train_digits.py --out runs/digits

$(DOCS_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[docs]'
	touch $(DOCS_STAMP)

# the API reference from the docstrings, and docs/*.md, into build/docs; a warning fails it
docs: $(DOCS_STAMP)
	$(VENV)/bin/mkdocs build --strict

bench: $(STAMP)
	$(PY) bench/run.py

lint: $(STAMP)
	$(PY) -m pip install -q ruff && $(VENV)/bin/ruff check ember tests bench examples

clean:
	rm -rf $(VENV) build *.egg-info
