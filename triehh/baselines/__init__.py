"""Baselines that TrieHH is compared with.

* :mod:`triehh.baselines.count_mean_sketch`: Apple's Count Mean Sketch, a
  locally differentially private frequency oracle.
* :mod:`triehh.baselines.sfp`: Apple's Sequence Fragment Puzzle (SFP), the
  heavy-hitter discovery the paper compares with, over Count Mean Sketches.
* :mod:`triehh.baselines.amplification`: the local epsilon SFP may use so
  that the shuffled reports meet a central ``(epsilon, delta)``.
* :mod:`triehh.baselines.iblt`: TensorFlow Federated's IBLT heavy hitters
  with k-anonymity, on TrieHH's sampled users.
* :mod:`triehh.baselines.partition_selection`: pipeline_dp's central DP
  partition selection.

Each takes a typed target checked when it is built
(:class:`~triehh.baselines.sfp.SFPTarget`,
:class:`~triehh.baselines.iblt.IBLTTarget`,
:class:`~triehh.baselines.partition_selection.PartitionSelectionTarget`)
and returns a :class:`triehh.core.release.Release` with its guarantee.
"""

import typing

from triehh.core import lazy_names

if typing.TYPE_CHECKING:  # the same names, for type checkers and import checks
  from triehh.baselines.amplification import central_epsilon
  from triehh.baselines.amplification import sfp_local_epsilon
  from triehh.baselines.count_mean_sketch import CountMeanSketch
  from triehh.baselines.count_mean_sketch import HashFamily
  from triehh.baselines.count_mean_sketch import Sketch
  from triehh.baselines.iblt import iblt_discover
  from triehh.baselines.iblt import IBLTResult
  from triehh.baselines.iblt import IBLTTarget
  from triehh.baselines.partition_selection import PartitionSelectionResult
  from triehh.baselines.partition_selection import PartitionSelectionTarget
  from triehh.baselines.partition_selection import select_words
  from triehh.baselines.sfp import sfp_discover
  from triehh.baselines.sfp import SFPParams
  from triehh.baselines.sfp import SFPResult
  from triehh.baselines.sfp import SFPTarget

# Imported on first use: a driver reading SFP's flag defaults does not load
# the IBLT baseline (and its privacy policy, scipy).
_PUBLIC = {
    "central_epsilon": "triehh.baselines.amplification",
    "sfp_local_epsilon": "triehh.baselines.amplification",
    "CountMeanSketch": "triehh.baselines.count_mean_sketch",
    "HashFamily": "triehh.baselines.count_mean_sketch",
    "Sketch": "triehh.baselines.count_mean_sketch",
    "iblt_discover": "triehh.baselines.iblt",
    "IBLTResult": "triehh.baselines.iblt",
    "IBLTTarget": "triehh.baselines.iblt",
    "PartitionSelectionResult": "triehh.baselines.partition_selection",
    "PartitionSelectionTarget": "triehh.baselines.partition_selection",
    "select_words": "triehh.baselines.partition_selection",
    "sfp_discover": "triehh.baselines.sfp",
    "SFPParams": "triehh.baselines.sfp",
    "SFPResult": "triehh.baselines.sfp",
    "SFPTarget": "triehh.baselines.sfp",
}

__all__ = [
    "CountMeanSketch", "HashFamily", "SFPParams", "SFPResult", "Sketch",
    "central_epsilon", "sfp_discover", "sfp_local_epsilon",
    "IBLTResult", "IBLTTarget", "PartitionSelectionResult",
    "PartitionSelectionTarget", "SFPTarget", "iblt_discover",
    "select_words",
]

__getattr__, __dir__ = lazy_names.attribute_functions(
    __name__, globals(), _PUBLIC)
