"""The engines that run the mechanisms: ``fast`` (numpy simulation) and
``tff`` (TensorFlow Federated computations), each declaring the mechanisms
it runs (TrieHH and the noisy trie; :mod:`~triehh.engines.registry`).

Modules: :mod:`~triehh.engines.registry` (engines by name, imported on first
use), :mod:`~triehh.engines.rounds` (the round loop and stopping rule every
engine shares; an engine only counts a round's votes),
:mod:`~triehh.engines.cache` (per-population tables that live as long as the
population), :mod:`~triehh.engines.fast` and :mod:`triehh.engines.tff`.
"""
