"""Privacy, typed and accounted: the privacy objects (:mod:`.mechanism`:
``Target``, ``Mechanism``, ``NoisyTarget``, ``Guarantee``), the neighbouring
relations (:mod:`.adjacency`, :mod:`.coverage`), each mechanism's
accountant and calibration (TrieHH's Theorem 1 / Corollary 1,
:mod:`.privacy`; its two-sided Poisson accountant, :mod:`.poisson`,
:mod:`.poisson_calibration`; the noisy trie's Gaussian PLD,
:mod:`.noisy_trie`; the counting phase, :mod:`.counting`), their
dp_accounting events (:mod:`.dp_events`, :mod:`.pld`), the run's policy
(:mod:`.policy`), the exact checks (:mod:`.exact`,
:mod:`.exact_validation`) and the utility theory (Proposition 2,
:mod:`.utility`)."""
