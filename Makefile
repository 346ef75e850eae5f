# make demo : set up and run the main job      make test : set up and run the test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,demo]'
	$(PY) -m pip install -q --no-deps torchvision==0.28.0
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q -n 2 tests

demo: $(STAMP)
	$(PY) examples/train_digits.py --out runs/digits

bench: $(STAMP)
	$(PY) bench/run.py

lint: $(STAMP)
	$(PY) -m pip install -q ruff && $(VENV)/bin/ruff check ember tests bench examples

clean:
	rm -rf $(VENV) build *.egg-info
