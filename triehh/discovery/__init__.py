"""TrieHH's runs: one run from resolved parameters (:mod:`.run`), the
typed front of TrieHH's privacy objects (:mod:`.discover`: counts, passes,
availability), repeated passes (:mod:`.passes`), users online
(:mod:`.availability`), protected counts of the words found
(:mod:`.counts`), deny lists and word choice. :func:`triehh.discover`
(:mod:`triehh.mechanisms`) comes here for TrieHH.
"""
