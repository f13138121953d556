"""One TrieHH run from resolved parameters (:mod:`triehh.discovery.run`).

:func:`triehh.discover` resolves the privacy arguments into
:class:`~triehh.results.RunParams` (:mod:`triehh.policy`) and calls
:func:`~triehh.discovery.run.run`; repeated passes (:mod:`triehh.passes`)
and availability (:mod:`triehh.availability`) resolve theirs and call it
too, never the facade.
"""
