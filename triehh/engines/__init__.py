"""The engines that run TrieHH: ``fast`` (numpy simulation) and ``tff``
(TensorFlow Federated computations).

Modules: :mod:`~triehh.engines.registry` (engines by name, imported on first
use), :mod:`~triehh.engines.rounds` (the round loop and stopping rule every
engine shares; an engine only counts a round's votes),
:mod:`~triehh.engines.cache` (per-population tables that live as long as the
population), :mod:`~triehh.engines.fast` and :mod:`triehh.engines.tff`.
"""
