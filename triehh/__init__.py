"""triehh: federated heavy-hitter discovery with differential privacy.

TrieHH (Zhu, Kairouz, McMahan, Sun, Li; AISTATS 2020) as an exact fast
simulator and as TensorFlow Federated computations, with the paper's
privacy and utility theory. The empirical audit of the privacy loss checks
the library from outside it: ``from checks.audit import audit``.
"""

import typing

from triehh.core import lazy_names

if typing.TYPE_CHECKING:  # the same names, for type checkers and import checks
  from triehh.api import count_words
  from triehh.api import discover
  from triehh.api import engine_names
  from triehh.api import register_engine
  from triehh.baselines.amplification import sfp_local_epsilon
  from triehh.baselines.iblt import iblt_discover
  from triehh.baselines.iblt import IBLTTarget
  from triehh.baselines.partition_selection import PartitionSelectionTarget
  from triehh.baselines.sfp import sfp_discover
  from triehh.baselines.sfp import SFPResult
  from triehh.baselines.sfp import SFPTarget
  from triehh.core.alphabet import Alphabet
  from triehh.core.metrics import discovery_rates
  from triehh.core.metrics import precision_recall_f1
  from triehh.core.metrics import top_k
  from triehh.core.population import Population
  from triehh.core.results import DiscoveryResult
  from triehh.core.results import RunParams
  from triehh.core.results import Unprotected
  from triehh.core.results import WordCounts
  from triehh.core.trie import Trie
  from triehh.discovery.availability import OnlineUsers
  from triehh.discovery.availability import discover_online
  from triehh.discovery.availability import diurnal
  from triehh.discovery.availability import OnlineResult
  from triehh.discovery.counts import Counting
  from triehh.discovery.counts import CountTarget
  from triehh.discovery.passes import discover_passes
  from triehh.discovery.passes import Passes
  from triehh.discovery.passes import PassesResult
  from triehh.mechanisms.two_servers import TwoServerTarget
  from triehh.theory.adjacency import Adjacency
  from triehh.theory.mechanism import Guarantee
  from triehh.theory.mechanism import Mechanism
  from triehh.theory.mechanism import NoisyTarget
  from triehh.theory.mechanism import Target
  from triehh.theory.upload_budget import UploadBudget
  from triehh.theory.privacy import calibrate
  from triehh.theory.privacy import Calibration
  from triehh.theory.privacy import guarantee
  from triehh.theory.utility import discovery_rate
  from triehh.theory.utility import min_population

# Each public name and the module that defines it. They are imported on
# first use (PEP 562), so that ``import triehh`` stays cheap: a command-line
# tool pays only for what it calls (pandas, scipy.stats and TensorFlow are
# heavy). ``tests/package_test.py`` checks that every name resolves.
_PUBLIC = {
    "count_words": "triehh.api",
    "discover": "triehh.api",
    "engine_names": "triehh.api",
    "register_engine": "triehh.api",
    "sfp_local_epsilon": "triehh.baselines.amplification",
    "iblt_discover": "triehh.baselines.iblt",
    "IBLTTarget": "triehh.baselines.iblt",
    "PartitionSelectionTarget": "triehh.baselines.partition_selection",
    "sfp_discover": "triehh.baselines.sfp",
    "SFPResult": "triehh.baselines.sfp",
    "SFPTarget": "triehh.baselines.sfp",
    "Alphabet": "triehh.core.alphabet",
    "discovery_rates": "triehh.core.metrics",
    "precision_recall_f1": "triehh.core.metrics",
    "top_k": "triehh.core.metrics",
    "Population": "triehh.core.population",
    "DiscoveryResult": "triehh.core.results",
    "RunParams": "triehh.core.results",
    "Unprotected": "triehh.core.results",
    "WordCounts": "triehh.core.results",
    "Trie": "triehh.core.trie",
    "OnlineUsers": "triehh.discovery.availability",
    "discover_online": "triehh.discovery.availability",
    "diurnal": "triehh.discovery.availability",
    "OnlineResult": "triehh.discovery.availability",
    "Counting": "triehh.discovery.counts",
    "CountTarget": "triehh.discovery.counts",
    "discover_passes": "triehh.discovery.passes",
    "Passes": "triehh.discovery.passes",
    "PassesResult": "triehh.discovery.passes",
    "TwoServerTarget": "triehh.mechanisms.two_servers",
    "Adjacency": "triehh.theory.adjacency",
    "Guarantee": "triehh.theory.mechanism",
    "Mechanism": "triehh.theory.mechanism",
    "NoisyTarget": "triehh.theory.mechanism",
    "Target": "triehh.theory.mechanism",
    "UploadBudget": "triehh.theory.upload_budget",
    "calibrate": "triehh.theory.privacy",
    "Calibration": "triehh.theory.privacy",
    "guarantee": "triehh.theory.privacy",
    "discovery_rate": "triehh.theory.utility",
    "min_population": "triehh.theory.utility",
}

__version__ = "0.1.0"

__all__ = [
    "Alphabet", "Calibration", "DiscoveryResult", "Population", "RunParams",
    "Trie", "Unprotected", "calibrate", "discover", "discovery_rate",
    "discovery_rates",
    "engine_names", "guarantee", "min_population", "precision_recall_f1",
    "register_engine", "top_k",
    "SFPResult", "iblt_discover", "sfp_discover", "sfp_local_epsilon",
    "IBLTTarget", "PartitionSelectionTarget", "SFPTarget",
    "OnlineResult", "PassesResult", "discover_online", "discover_passes",
    "diurnal", "WordCounts", "count_words",
    "Adjacency", "Counting", "CountTarget", "Guarantee", "Mechanism",
    "NoisyTarget", "OnlineUsers", "Passes", "Target", "TwoServerTarget",
    "UploadBudget",
]


# Names that left the package, and the import that gives each now: reading
# one is an AttributeError that says where it is (tests/package_test.py).
_MOVED = {
    # The empirical privacy audit, an independent check of the library.
    "audit": "from checks.audit import audit",
}

__getattr__, __dir__ = lazy_names.attribute_functions(
    __name__, globals(), _PUBLIC, _MOVED)
