"""Tests of a TrieHH cell's config built from its typed privacy
(triehh.runs.algorithms.triehh): the config_key of a cell decides whether a
results.jsonl file resumes it, so a config must be the one written before."""

import pytest

from triehh.discovery import counts as counts_lib
from triehh.runs import records
from triehh.runs.algorithms import triehh as triehh_algorithm
from triehh.theory import mechanism

DATA = {"dataset": "default", "setting": "single", "num_users": 30000,
        "max_length": 10}
MULTI = {"dataset": "default", "setting": "multi", "num_users": 20000,
         "max_length": 8}
FIXED, POISSON = "fixed", "poisson"
Target, Mechanism = mechanism.Target, mechanism.Mechanism

# Each key was computed by the code before configs were built from a Target
# or Mechanism: records.config_key(triehh_config(data, **keywords)) with the
# keywords in the comment (triehh_config then took the privacy as loose
# keywords, sampling "fixed" by default). Results files written then must
# resume.
KEYS_BEFORE = [
    # epsilon=4.0
    (DATA, Target(4.0, sampling=FIXED), {}, "92d6b4f4abb69e58"),
    # epsilon=1.0, delta=1e-9
    (DATA, Target(1.0, delta=1e-9, sampling=FIXED), {}, "1d9a2490862f6e44"),
    # theta=20, gamma=2.0
    (DATA, Mechanism(theta=20, gamma=2.0, sampling=FIXED), {},
     "5fa56623b879f153"),
    # theta=3, batch_size=100, num_sub_rounds=2
    (DATA, Mechanism(theta=3, batch_size=100, num_sub_rounds=2,
                     sampling=FIXED), {}, "2cd0180569e96c17"),
    # epsilon=4.0, max_num_prefixes=5, allow_no_guarantee=True
    (DATA, Target(4.0, max_num_prefixes=5, allow_no_guarantee=True,
                  sampling=FIXED), {}, "fd8e0d214f138bda"),
    # epsilon=2.0, sampling="poisson"
    (DATA, Target(2.0, sampling=POISSON), {}, "8b8d2362d60ef1f2"),
    # theta=15, sampling="poisson", sampling_rate=0.05
    (DATA, Mechanism(theta=15, sampling_rate=0.05, sampling=POISSON), {},
     "845f7a57394886f6"),
    # epsilon=4.0, sampling="poisson", counts=True, count_share=0.25,
    # count_sample_rate=0.5
    (DATA, Target(4.0, sampling=POISSON),
     {"counting": counts_lib.Counting(0.25, 0.5)}, "5c301619a3e22151"),
    # epsilon=4.0, word_choice="per_run" (MULTI)
    (MULTI, Target(4.0, word_choice="per_run", sampling=FIXED), {},
     "ab8c36e003cd409b"),
    # epsilon=4.0, sampling="poisson", adjacency="add_or_remove_one",
    # population_size=40000
    (DATA, Target(4.0, sampling=POISSON, adjacency="add_or_remove_one",
                  population_size=40000), {}, "fe8ab54aae8c7738"),
    # engine="tff", epsilon=4.0, tff_secure_sum=True
    (DATA, Target(4.0, sampling=FIXED),
     {"engine": "tff", "tff_secure_sum": True}, "afc2e767524e7bb4"),
    # engine="tff", epsilon=4.0, tff_secure_sum=False,
    # tff_max_user_contribution=2, allow_no_guarantee=True (MULTI)
    (MULTI, Target(4.0, allow_no_guarantee=True, sampling=FIXED),
     {"engine": "tff", "tff_secure_sum": False,
      "tff_max_user_contribution": 2}, "deb535635594fde0"),
]


@pytest.mark.parametrize("data, privacy, options, key", KEYS_BEFORE)
def test_a_config_keeps_the_key_it_had_before_typed_privacy(data, privacy,
                                                            options, key):
  config = triehh_algorithm.triehh_config(data, privacy, **options)
  assert records.config_key(config) == key
  # Read back, the config gives the same privacy (its sampling named).
  assert triehh_algorithm.privacy_of(config) == privacy
  assert triehh_algorithm.counting_of(config) == options.get("counting")


# The keys of the cells of TrieHH's grid_values, each computed as above by
# the code before (grid.expand(data=(DATA,), **grid), one key per cell).
GRID_KEYS_BEFORE = [
    ({"epsilons": (1.0, 4.0), "deltas": (None, 1e-8)},
     ["45ddaee21fc422c5", "0f8f9cc2429d3388", "92d6b4f4abb69e58",
      "6820a1419371521b"]),
    ({"theta": {"theta": 3, "batch_size": 100}}, ["f9b34c694d46ebdc"]),
    ({"triehh_options": {"sampling": "poisson", "counts": True},
      "count_shares": (0.1, 0.5)},
     ["1b1213221fdec6ad", "867f2c7306b44da0"]),
    ({"engines": ("fast", "tff"),
      "tff_options": {"secure_sum": True, "workers": ["h:1"],
                      "max_user_contribution": 1}},
     ["92d6b4f4abb69e58", "f961ed94304ad818"]),
    ({"epsilons": (2.0,),
      "triehh_options": {"sampling": "poisson", "num_sub_rounds": 2,
                         "word_choice": "per_run"}},
     ["3198f0848768d5ef"]),
]


@pytest.mark.parametrize("grid, keys", GRID_KEYS_BEFORE)
def test_sweep_cells_keep_their_keys(grid, keys):
  adapter = triehh_algorithm.ADAPTER
  values = adapter.grid_values({**adapter.grid_options, "epsilons": (4.0,),
                                "deltas": (None,), **grid})
  assert [records.config_key(adapter.config(DATA, **v))
          for v, _ in values] == keys


def test_keyword_values_and_the_typed_call_give_one_config():
  adapter = triehh_algorithm.ADAPTER
  assert adapter.config(DATA, epsilon=4.0) == triehh_algorithm.triehh_config(
      DATA, Target(4.0, sampling=FIXED))
  assert adapter.config(
      DATA, theta=15, sampling="poisson", sampling_rate=0.05, counts=False,
      count_share=None, count_sample_rate=None) == (
          triehh_algorithm.triehh_config(
              DATA, Mechanism(theta=15, sampling_rate=0.05,
                              sampling=POISSON)))


@pytest.mark.parametrize("privacy, options, error, match", [
    (Target(4.0), {}, ValueError, "name the cell's sampling"),
    (Target(4.0, sampling=FIXED, schedule=[[0]]), {}, ValueError,
     "cannot hold a schedule"),
    (4.0, {}, TypeError, "triehh.Target or a triehh.Mechanism"),
    (Mechanism(theta=5, batch_size=100, sampling=FIXED),
     {"counting": counts_lib.Counting()}, ValueError,
     "counts=True needs epsilon"),
    (Target(4.0, sampling=FIXED, allow_no_guarantee=True),
     {"counting": counts_lib.Counting()}, ValueError,
     "allow_no_guarantee=True"),
])
def test_a_config_that_cannot_be_written_is_refused(privacy, options, error,
                                                    match):
  with pytest.raises(error, match=match):
    triehh_algorithm.triehh_config(DATA, privacy, **options)


@pytest.mark.parametrize("values, error, match", [
    ({"epsilon": 4.0, "thetas": 3}, TypeError, "takes no thetas"),
    ({"epsilon": 4.0, "count_share": 0.2}, ValueError,
     "count_share=0.2 is for counts=True"),
    ({"epsilon": 4.0, "sampling_rate": 0.1}, ValueError,
     "give either \\(epsilon, delta\\) or theta with sampling_rate"),
])
def test_bad_keyword_values_are_refused_naming_them(values, error, match):
  with pytest.raises(error, match=match):
    triehh_algorithm.ADAPTER.config(DATA, **values)
