# Developer entry points (the README's two commands need none of these).
PY ?= .venv/bin/python

.PHONY: test mutation mutation-survivors mutation-sample

test:
	$(PY) -m pytest

# every mutant of the core modules; writes docs/develop/mutation.md (about 80 min on 2 cores)
mutation:
	$(PY) tools/mutation/run.py

# only the previous run's survivors again (after adding tests), merged into docs/develop/mutation.md
mutation-survivors:
	$(PY) tools/mutation/run.py --survivors

# the sample CI runs: 100 mutants at random from all non-equivalent core mutants, seeded by the commit; fails below 85 %
mutation-sample:
	$(PY) tools/mutation/run.py --sample 100
