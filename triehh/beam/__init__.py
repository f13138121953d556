"""Populations and TrieHH on Apache Beam, for data beyond one machine.

Modules: ``shards`` (one input file read by the in-memory loader's own
functions), ``tables`` (the files an ingestion writes, read back into a
population), ``ingest`` (the ingestion pipeline), ``protocol`` (TrieHH's
rounds as a pipeline over user-partitioned data), ``noisy_protocol`` (the
noisy trie's rounds, the same way), ``partition_selection`` (pipeline_dp's
partition selection on the Beam backend). Only ``ingest``, ``protocol``,
``noisy_protocol`` and ``partition_selection`` import Apache Beam, and
nothing imports them unless asked: ``import triehh`` does not import Beam.
"""
