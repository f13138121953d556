"""Independent checks of the library's privacy claims, exact and empirical,
kept outside the library they check.

Exact: :mod:`checks.exact_validation` compares the accountants' deltas with
the exact output law of tiny populations
(``benchmarks/exact_privacy_check.py`` runs it at scale).

Empirical: the privacy audit, what a configuration's runs show of its loss:
:mod:`checks.audit` (the audit of Theorem 1 on one word per user),
:mod:`checks.audit_several_words` (several words per user, redrawn every
round), :mod:`checks.audit_bounds` (its statistics: laws of the target
word's path and their losses) and :mod:`checks.audit_memory` (what it would
allocate, checked first)."""
