"""Reproducing the paper: its numbers, figures and REPORT.md from run records.

Modules: ``numbers`` (the paper's published values and ours: curves,
discovery rates, intervals, Table 1), ``figures`` (matplotlib PNGs),
``markdown`` (REPORT.md). ``experiments.reproduce_paper`` runs the sweeps
and calls them.
"""
