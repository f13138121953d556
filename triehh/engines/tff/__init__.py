"""TrieHH as TensorFlow Federated computations (the ``tff`` engine).

Modules: :mod:`triehh.engines.tff.computations` (the federated process),
:mod:`triehh.engines.tff.engine` (the driver behind ``engine="tff"``),
:mod:`triehh.engines.tff.runtime` (TFF workers and execution contexts) and
:mod:`triehh.engines.tff.worker` (``python -m triehh.engines.tff.worker --port=N`` starts a
worker). Importing this package does not import TensorFlow; its modules do
(except :mod:`triehh.engines.tff.worker`).
"""
