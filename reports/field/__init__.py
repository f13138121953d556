"""Where TrieHH stands in the field: one benchmark of TrieHH (fixed and
Poisson sampling), the noisy trie and central partition selection on the
same populations, with their guarantees.

Modules: ``populations`` (the data), ``mechanisms`` (one run of a
mechanism, scored), ``runs`` (the grid, and running the runs not yet in
``results.jsonl``), ``rows`` (the report's numbers, from the records),
``report`` (``FIELD.md``) and ``figures`` (its PNGs).
``experiments.field`` parses its flags and calls them.
"""
