"""Beyond the paper: TFF's IBLT, repeated passes with a deny list, and users
who are not always online, on the same users, with their guarantees.

Modules: ``runs`` (the settings, the plan of runs and running those not yet
recorded in ``results.jsonl``), ``rows`` (the report's numbers, from the
records), ``report`` (``BEYOND.md``) and ``figures`` (its PNGs).
``experiments.beyond`` parses its flags and calls them; docs/beyond.md
describes the comparison.
"""
