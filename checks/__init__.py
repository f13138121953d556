"""Independent checks of the library's privacy claims, kept outside the
library they check: :mod:`checks.exact_validation` compares the
accountants' deltas with the exact output law of tiny populations
(``benchmarks/exact_privacy_check.py`` runs it at scale)."""
