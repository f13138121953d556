"""Many runs: records, algorithms as adapters, grids of cells, the runner.

:mod:`~triehh.runs.records` is the only reader and writer of
``results.jsonl``, whose record and fields are in :mod:`~triehh.runs.schema`;
:mod:`~triehh.runs.algorithms` holds one adapter per
algorithm (its config, check, call and record);
:mod:`~triehh.runs.grid` expands flags into cells; :mod:`~triehh.runs.runner`
runs a plan of cells with locks, resume and worker processes.
"""
