"""TFF's IBLT heavy hitters in a sweep: cells, config, checks, run, record
and labels.

IBLT cells (algorithm ``"iblt"``) run TFF's IBLT heavy hitters
(:func:`triehh.baselines.iblt.iblt_discover`) on the users TrieHH samples
for the same seed: their rounds hold TrieHH's batch size m at the cell's
(epsilon, delta) (Corollary 1, as TrieHH calibrates it on the same data),
and their ``k_anonymity`` is TrieHH's theta there unless given. That
(epsilon, delta) only matches the users: an IBLT run is k-anonymous, not
differentially private, and its record says so (``privacy``,
``matched_epsilon``; ``epsilon`` and ``delta`` null).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from triehh.baselines import iblt as iblt_lib
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets
from triehh.runs import records as records_lib
from triehh.theory import mechanism
from triehh.theory import policy

NAME = "iblt"
# Options of an IBLT cell other than its data, matched (epsilon, delta) and
# k-anonymity (string_max_bytes None: the data's max_length).
IBLT_DEFAULTS = {"capacity": None, "string_max_bytes": None,
                 "num_rounds": None, "rounds": "sampled",
                 "secure_sum_bitwidth": None,
                 "repetitions": iblt_lib.DEFAULT_REPETITIONS}


def iblt_config(data: Mapping[str, Any], *, epsilon: float,
                delta: float | None = None, k_anonymity: int | None = None,
                capacity: int | None = None,
                string_max_bytes: int | None = None,
                num_rounds: int | None = None, rounds: str = "sampled",
                secure_sum_bitwidth: int | None = None,
                repetitions: int = iblt_lib.DEFAULT_REPETITIONS) -> dict:
  """An IBLT run's ``config``: everything but the seed that changes it.

  ``epsilon`` and ``delta`` are the TrieHH target whose batch size (and
  theta, for ``k_anonymity`` None) the run uses; ``capacity`` None: each
  round's distinct strings; ``string_max_bytes`` None: the data's
  ``max_length``.
  """
  if string_max_bytes is None:
    string_max_bytes = data["max_length"]
  return {"algorithm": NAME, "data": dict(data), "epsilon": epsilon,
          "delta": delta, "k_anonymity": k_anonymity, "capacity": capacity,
          "string_max_bytes": string_max_bytes, "num_rounds": num_rounds,
          "rounds": rounds, "secure_sum_bitwidth": secure_sum_bitwidth,
          "repetitions": repetitions}


def matched_triehh_params(population: population_lib.Population,
                          config: Mapping):
  """TrieHH's calibration at an IBLT cell's (epsilon, delta) on ``population``
  (:func:`triehh.theory.policy.resolve`, fixed-size batches, as
  ``discover`` resolves them)."""
  return policy.resolve(
      population.num_users, config["data"]["max_length"],
      mechanism.Target(config["epsilon"], delta=config["delta"],
                       sampling="fixed"),
      single_word=population.is_single_word)


def iblt_target(population: population_lib.Population,
                config: Mapping) -> iblt_lib.IBLTTarget:
  """An IBLT cell's :class:`~triehh.baselines.iblt.IBLTTarget`.

  Its rounds hold TrieHH's batch size at the cell's (epsilon, delta) on
  ``population`` (``batch``, a :class:`triehh.Target`), and its
  ``k_anonymity`` is TrieHH's theta there when the cell gives none.

  Raises:
    ValueError: if TrieHH's calibration cannot be met on ``population``
      (for ``k_anonymity`` None; otherwise when the run sizes its rounds).
  """
  k_anonymity = config["k_anonymity"]
  if k_anonymity is None:
    k_anonymity = matched_triehh_params(population, config).theta
  return iblt_lib.IBLTTarget(
      k_anonymity, mechanism.Target(config["epsilon"], config["delta"]),
      capacity=config["capacity"],
      string_max_bytes=config["string_max_bytes"],
      secure_sum_bitwidth=config["secure_sum_bitwidth"],
      num_rounds=config["num_rounds"], rounds=config["rounds"],
      repetitions=config["repetitions"])


def iblt_arguments(population: population_lib.Population,
                   config: Mapping) -> dict:
  """``iblt_discover``'s arguments for an IBLT cell, but the seed: its
  :func:`iblt_target` and the data's ``max_length`` (TrieHH's L, which
  the batch's calibration uses)."""
  return dict(target=iblt_target(population, config),
              max_length=config["data"]["max_length"])


def call_iblt(population: population_lib.Population, config: Mapping,
              seed: int) -> iblt_lib.IBLTResult:
  """``triehh.iblt_discover`` on ``population`` as ``config`` says."""
  return iblt_lib.iblt_discover(population, seed=seed,
                                **iblt_arguments(population, config))


def iblt_record(result: iblt_lib.IBLTResult, data: datasets.Dataset,
                run: int, seed: int, values: Mapping[str, float],
                config: Mapping, config_key: str = ""
                ) -> records_lib.RunRecord:
  """The results.jsonl record of one IBLT run: no (epsilon, delta); IBLT's
  own fields as its params (:class:`~triehh.runs.schema.IBLTParams`)."""
  p = result.params
  matched = matched_triehh_params(data.population, config)
  return records_lib.RunRecord(
      algorithm=NAME, dataset=data.name, setting=data.setting, n_users=p.n,
      run=run, seed=seed, epsilon=None, delta=None, has_guarantee=False,
      target_epsilon=None, target_delta=None, accounting=policy.NO_GUARANTEE,
      rounds=p.num_rounds, num_participants=p.users_sampled,
      discovered=list(result.heavy_hitters),
      reported_counts=list(result.heavy_hitters.values()),
      metrics=dict(values), seconds=result.seconds, config=dict(config),
      config_key=config_key, params=records_lib.IBLTParams(
          privacy=p.privacy, matched_epsilon=matched.target_epsilon,
          matched_delta=matched.target_delta, k_anonymity=p.k_anonymity,
          capacity=p.capacity, string_max_bytes=p.string_max_bytes,
          secure_sum_bitwidth=p.secure_sum_bitwidth, round_draw=p.rounds,
          repetitions=p.repetitions, sketch_shape=list(p.sketch_shape),
          bytes_per_client=p.bytes_per_client,
          memory_estimate_bytes=p.memory_estimate_bytes,
          batch_size=p.batch_size, max_length=p.max_length,
          distinct_users=p.distinct_users,
          seconds_per_client=result.seconds_per_client,
          round_seconds=list(result.round_seconds),
          num_not_decoded=p.num_not_decoded, num_truncated=p.num_truncated,
          truncated=list(p.truncated)))


class IBLT:
  """The IBLT adapter (:class:`triehh.runs.algorithms.Algorithm`)."""

  name = NAME
  # k_anonymities: IBLT's k-anonymity thresholds (None: TrieHH's theta at
  # the cell's epsilon and delta); iblt_options: capacity, string_max_bytes,
  # num_rounds, rounds, secure_sum_bitwidth, repetitions (IBLT_DEFAULTS).
  # IBLT cells vary with epsilons and deltas (TrieHH's batch size there)
  # even when TrieHH cells are given theta.
  grid_options = {"k_anonymities": (None,), "iblt_options": None}

  def grid_values(self, grid: Mapping[str, Any]) -> list[tuple[dict, dict]]:
    options = dict(IBLT_DEFAULTS, **(grid["iblt_options"] or {}))
    return [(dict(epsilon=epsilon, delta=delta, k_anonymity=k, **options),
             {})
            for epsilon, delta, k in itertools.product(
                grid["epsilons"], grid["deltas"], grid["k_anonymities"])]

  def config(self, data: Mapping[str, Any], **values: Any) -> dict:
    return iblt_config(data, **values)

  def uses_tensorflow(self, config: Mapping[str, Any]) -> bool:
    return True

  def check(self, cell, population: population_lib.Population,
            seeds: Sequence[int] = (0,)) -> None:
    """TrieHH's calibration it takes m (and theta) from, then its options
    (k-anonymity, capacity, string_max_bytes, rounds, secure-sum bit width)
    and, for each of ``seeds``, that the capacity covers every round and
    that the largest round fits in memory
    (:func:`triehh.baselines.iblt.plan_run`, which imports TensorFlow)."""
    c = cell.config
    arguments = iblt_arguments(population, c)
    for seed in seeds:
      try:
        iblt_lib.plan_run(population, seed=seed, **arguments)
      except MemoryError as err:
        raise MemoryError(
            f"{err} (here the batch size is TrieHH's at epsilon="
            f"{c['epsilon']:g}: a smaller epsilon or population gives fewer "
            "users per round)") from err

  def call(self, population: population_lib.Population,
           config: Mapping[str, Any], seed: int,
           engine_options: Mapping[str, Any] | None = None
           ) -> iblt_lib.IBLTResult:
    del engine_options  # TFF's IBLT computation takes none from a cell
    return call_iblt(population, config, seed)

  def record(self, result, dataset: datasets.Dataset, run: int, seed: int,
             config: Mapping[str, Any],
             engine_options: Mapping[str, Any] | None = None,
             ks: Sequence[int] = metrics.DEFAULT_KS, *, config_key: str = ""
             ) -> records_lib.RunRecord:
    del engine_options
    # Truncated outputs are scored as false positives.
    values = metrics.precision_recall_f1(result.scored(), dataset.truth, ks)
    return iblt_record(result, dataset, run, seed, values, config, config_key)

  def cell_label_parts(self, config: Mapping[str, Any]) -> list[str]:
    k = config["k_anonymity"]  # its epsilon only sizes the rounds
    parts = [f"k={'theta' if k is None else k}",
             f"m at eps={config['epsilon']:g}"]
    if config.get("delta") is not None:
      parts.append(f"delta={config['delta']:g}")
    return parts

  def label(self, values: Mapping[str, Any]) -> str:
    matched = values.get("matched_epsilon")
    at = f" at epsilon={matched:g}" if matched is not None else ""
    delta = values.get("matched_delta")
    at += f", delta={delta:.3g}" if delta is not None else ""
    return ", ".join([
        f"{NAME} ({values['k_anonymity']}-anonymity, not DP)",
        f"{values['dataset']} {values['setting']}",
        f"n={values['n_users']:,}",
        f"m={values['batch_size']:,} (TrieHH's{at})"])


ADAPTER = IBLT()
