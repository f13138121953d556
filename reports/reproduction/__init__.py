"""Reproducing the paper: its numbers, figures and REPORT.md from run records.

Modules: ``numbers`` (the paper's published values and ours: curves,
discovery rates, intervals, Table 1), ``figures`` (matplotlib PNGs),
``markdown`` (REPORT.md), ``ablations`` (its ablations: the number as
each suspected cause of a difference varies), ``two_sided`` (the numbers
of REPORT.md's section beyond the paper: Poisson sampling against Theorem
1's fixed-size batches), ``two_sided_markdown`` (that section's text).
``experiments.reproduce_paper`` runs the sweeps and calls them.
"""
