"""triehh: federated heavy-hitter discovery with differential privacy.

TrieHH (Zhu, Kairouz, McMahan, Sun, Li; AISTATS 2020) as an exact fast
simulator and as TensorFlow Federated computations, with the paper's
privacy and utility theory, and an empirical audit of the privacy loss
(:func:`audit`).
"""

from triehh.analysis.audit import audit
from triehh.api import discover
from triehh.api import engine_names
from triehh.api import register_engine
from triehh.baselines.amplification import sfp_local_epsilon
from triehh.baselines.iblt import iblt_discover
from triehh.baselines.sfp import sfp_discover
from triehh.baselines.sfp import SFPResult
from triehh.core.alphabet import Alphabet
from triehh.core.metrics import discovery_rates
from triehh.core.metrics import precision_recall_f1
from triehh.core.metrics import top_k
from triehh.core.population import Population
from triehh.core.results import DiscoveryResult
from triehh.core.results import RunParams
from triehh.core.results import Unprotected
from triehh.core.trie import Trie
from triehh.discovery.availability import discover_online
from triehh.discovery.availability import diurnal
from triehh.discovery.availability import OnlineResult
from triehh.discovery.passes import discover_passes
from triehh.discovery.passes import PassesResult
from triehh.theory.privacy import calibrate
from triehh.theory.privacy import Calibration
from triehh.theory.privacy import guarantee
from triehh.theory.utility import discovery_rate
from triehh.theory.utility import min_population

__version__ = "0.1.0"

__all__ = [
    "Alphabet", "Calibration", "DiscoveryResult", "Population", "RunParams",
    "Trie", "Unprotected", "audit", "calibrate", "discover", "discovery_rate", "discovery_rates",
    "engine_names", "guarantee", "min_population", "precision_recall_f1",
    "register_engine", "top_k",
    "SFPResult", "iblt_discover", "sfp_discover", "sfp_local_epsilon",
    "OnlineResult", "PassesResult", "discover_online", "discover_passes",
    "diurnal",
]
