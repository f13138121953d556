"""Every mechanism, one protocol (:mod:`triehh.mechanisms.protocol`).

Each mechanism is a module here that names its privacy object, its
parameters, its accountant and calibration, and the engines that run it:

===================  ==========================  =============================
mechanism            privacy object              engines
===================  ==========================  =============================
triehh               Target, Mechanism, number   fast, tff (and registered)
noisy_trie           NoisyTarget                 fast, tff (central or
                                                 distributed noise)
partition_selection  PartitionSelectionTarget    fast (pipeline_dp, local),
                                                 beam (pipeline_dp on Beam)
sfp                  SFPTarget                   fast
iblt                 IBLTTarget (k-anonymity,    tff
                     not DP)
two_servers          TwoServerTarget             fast, protocol (two server
                                                 processes, loopback)
===================  ==========================  =============================

A new mechanism is a module with a :class:`~protocol.BaseMechanism`
subclass (or anything meeting :class:`~protocol.MechanismType`) and one
line: ``registry.register(MyMechanism())``. :func:`triehh.discover`,
sweeps (:mod:`triehh.runs`) and the ``triehh-run`` command then run it.
"""

from triehh.mechanisms import registry
from triehh.mechanisms import iblt
from triehh.mechanisms import noisy_trie
from triehh.mechanisms import partition_selection
from triehh.mechanisms import sfp
from triehh.mechanisms import triehh_mechanism
from triehh.mechanisms import two_servers

for _module in (triehh_mechanism, noisy_trie, partition_selection, sfp,
                iblt, two_servers):
  registry.register(_module.MECHANISM)
