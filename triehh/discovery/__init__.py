"""One TrieHH run from resolved parameters (:mod:`triehh.discovery.run`).

:func:`triehh.discover` resolves the privacy arguments into
:class:`~triehh.core.results.RunParams` (:mod:`triehh.theory.policy`) and calls
:func:`~triehh.discovery.run.run`; repeated passes (:mod:`triehh.discovery.passes`)
and availability (:mod:`triehh.discovery.availability`) resolve theirs and call it
too, never the facade.
"""
