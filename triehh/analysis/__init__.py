"""What is made from runs: summaries, the privacy audit, the reproduction of
the paper and the comparison beyond it.

:mod:`~triehh.analysis.summary` (means and intervals over records),
:mod:`~triehh.analysis.audit` (the empirical privacy audit),
:mod:`~triehh.analysis.reproduction` (the paper's tables and figures),
:mod:`~triehh.analysis.beyond` (the comparison beyond the paper).
"""
