"""TrieHH as TensorFlow Federated computations (the ``tff`` engine).

Modules: :mod:`triehh.tff.computations` (the federated process),
:mod:`triehh.tff.engine` (the driver behind ``engine="tff"``),
:mod:`triehh.tff.runtime` (TFF workers and execution contexts) and
:mod:`triehh.tff.worker` (``python -m triehh.tff.worker --port=N`` starts a
worker). Importing this package does not import TensorFlow; its modules do
(except :mod:`triehh.tff.worker`).
"""
