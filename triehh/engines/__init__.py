"""The engines that run TrieHH: ``fast`` (numpy simulation) and ``tff``
(TensorFlow Federated computations)."""
