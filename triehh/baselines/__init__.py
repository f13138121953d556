"""Baselines that TrieHH is compared with.

* :mod:`triehh.baselines.count_mean_sketch`: Apple's Count Mean Sketch, a
  locally differentially private frequency oracle.
* :mod:`triehh.baselines.sfp`: Apple's Sequence Fragment Puzzle (SFP), the
  heavy-hitter discovery the paper compares with, over Count Mean Sketches.
* :mod:`triehh.baselines.amplification`: the local epsilon SFP may use so
  that the shuffled reports meet a central ``(epsilon, delta)``.
"""

from triehh.baselines.amplification import central_epsilon
from triehh.baselines.amplification import sfp_local_epsilon
from triehh.baselines.count_mean_sketch import CountMeanSketch
from triehh.baselines.count_mean_sketch import HashFamily
from triehh.baselines.count_mean_sketch import Sketch
from triehh.baselines.iblt import iblt_discover
from triehh.baselines.sfp import sfp_discover
from triehh.baselines.sfp import SFPParams
from triehh.baselines.sfp import SFPResult

__all__ = [
    "CountMeanSketch", "HashFamily", "SFPParams", "SFPResult", "Sketch",
    "central_epsilon", "sfp_discover", "sfp_local_epsilon",
]
