"""The vocabulary every layer shares; it imports nothing else of triehh.

:mod:`~triehh.core.alphabet` (symbols and encoding),
:mod:`~triehh.core.population` (users and their words),
:mod:`~triehh.core.trie` (the tensor-encoded trie),
:mod:`~triehh.core.results` (a run's parameters and result),
:mod:`~triehh.core.choices` (the names of samplings and word choices),
:mod:`~triehh.core.metrics` and :mod:`~triehh.core.ranking` (scoring found
words), :mod:`~triehh.core.validation` and
:mod:`~triehh.core.population_inputs` (argument checks),
:mod:`~triehh.core.memory` (sizes checked against the available memory),
:mod:`~triehh.core.processes` (children that die with their parent),
:mod:`~triehh.core.files` (files written whole or not at all) and
:mod:`~triehh.core.lazy_names` (public names imported on first use).
"""
