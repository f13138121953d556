"""The empirical privacy audit: what a configuration's runs show of its loss.

:mod:`~triehh.analysis.audit` (the audit of Theorem 1 on one word per user),
:mod:`~triehh.analysis.audit_several_words` (several words per user, redrawn
every round), :mod:`~triehh.analysis.audit_bounds` (its statistics: laws of
the target word's path and their losses) and
:mod:`~triehh.analysis.audit_memory` (what it would allocate, checked first).
The writers of the reports and summaries made from runs are the package
``reports``, outside the library.
"""
