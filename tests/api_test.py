"""Tests of the public API: triehh.discover and friends."""

import math

from absl.testing import parameterized
import numpy as np

import triehh
from triehh import synthetic


def zipf_words(n, seed=0):
  return synthetic.english_population(n, seed=seed, distribution="zipf")


class DiscoverTest(parameterized.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.pop = zipf_words(40_000)

  def test_calibrated_run_reports_its_guarantee(self):
    result = triehh.discover(self.pop, epsilon=4.0, seed=1)
    p = result.params
    n = self.pop.num_users
    cal = triehh.calibrate(n, 11, 4.0, 1 / n**2)
    self.assertEqual((p.theta, p.batch_size), (cal.theta, cal.batch_size))
    self.assertEqual(p.levels, 11)
    self.assertLessEqual(p.epsilon, 4.0)
    self.assertLessEqual(p.delta, 1 / n**2)
    self.assertEqual((p.epsilon, p.delta),
                     triehh.guarantee(n, 11, p.theta, p.gamma))
    self.assertIn("the", result.heavy_hitters)
    self.assertEqual(result.rounds, len(result.votes_per_round))
    self.assertEqual(result.num_participants, p.batch_size * result.rounds)

  def test_same_seed_same_result(self):
    a = triehh.discover(self.pop, epsilon=4.0, seed=5)
    b = triehh.discover(self.pop, epsilon=4.0, seed=5)
    self.assertEqual(a.heavy_hitters, b.heavy_hitters)
    self.assertEqual(a.trie.to_dict(), b.trie.to_dict())

  def test_strings_mappings_and_population_agree(self):
    words = [str(w) for w in self.pop.vocabulary[self.pop.user_word]]
    as_strings = triehh.discover(words, epsilon=4.0, seed=2)
    as_maps = triehh.discover([{w: 1} for w in words], epsilon=4.0, seed=2)
    as_pop = triehh.discover(self.pop, epsilon=4.0, seed=2)
    self.assertEqual(as_strings.heavy_hitters, as_pop.heavy_hitters)
    # One-word mappings draw a (trivial) word rank per user, so the random
    # stream differs; the trie is still a valid TrieHH outcome.
    self.assertTrue(set(as_maps.heavy_hitters) <= set(words))

  def test_theta_and_gamma_directly(self):
    result = triehh.discover(self.pop, theta=10, gamma=2.0)
    n = self.pop.num_users
    self.assertEqual(result.params.batch_size, math.floor(2.0 * math.sqrt(n)))
    self.assertIsNone(result.params.target_epsilon)
    self.assertTrue(result.params.has_guarantee)

  def test_outside_theorem_needs_opt_in(self):
    with self.assertRaisesRegex(ValueError, "allow_no_guarantee"):
      triehh.discover(self.pop, theta=2, batch_size=1000)
    result = triehh.discover(self.pop, theta=2, batch_size=1000,
                             allow_no_guarantee=True)
    self.assertFalse(result.params.has_guarantee)
    self.assertIn("no differential privacy guarantee", result.params.guarantee)

  def test_cap_is_flagged_and_enforced(self):
    result = triehh.discover(self.pop, epsilon=4.0, max_num_prefixes=5)
    self.assertIn("prefix cap", result.params.guarantee)
    for level in result.trie.levels:
      self.assertLessEqual(level.prefixes.shape[0] + level.terminated.shape[0], 5)

  @parameterized.named_parameters(
      ("both", dict(epsilon=1.0, theta=10, gamma=2.0), "not both"),
      ("theta_alone", dict(theta=10), "exactly one"),
      ("nothing", dict(), "give epsilon"),
      ("bad_engine", dict(epsilon=1.0, engine="gpu"), "unknown engine"),
      ("small_population_epsilon", dict(epsilon=0.1), "at least n ="),
      ("bad_cap", dict(epsilon=4.0, max_num_prefixes=0), "max_num_prefixes"),
  )
  def test_bad_arguments(self, kwargs, message):
    with self.assertRaisesRegex(ValueError, message):
      triehh.discover(self.pop, **kwargs)

  def test_max_length_mismatch(self):
    with self.assertRaisesRegex(ValueError, "max_length=10"):
      triehh.discover(self.pop, epsilon=4.0, max_length=8)

  def test_engine_names(self):
    self.assertIn("fast", triehh.engine_names())

  def test_several_words_per_user(self):
    rng = np.random.default_rng(0)
    vocab = [str(w) for w in self.pop.vocabulary[:200]]
    users = [{vocab[i]: int(c) for i, c in zip(
        rng.zipf(1.3, size=3) % 200, rng.integers(1, 5, size=3))}
             for _ in range(30_000)]
    result = triehh.discover(users, epsilon=4.0, seed=0)
    self.assertGreater(len(result.heavy_hitters), 5)
    self.assertTrue(set(result.heavy_hitters) <= set(vocab))


class OptionalEngineTest(parameterized.TestCase):

  def test_missing_dependency_is_named(self):
    from triehh import api
    saved = dict(api._OPTIONAL_ENGINE_ERRORS)  # pylint: disable=protected-access
    engines = dict(api._ENGINES)  # pylint: disable=protected-access
    try:
      api._ENGINES.pop("tff", None)  # pylint: disable=protected-access
      api._OPTIONAL_ENGINE_ERRORS["tff"] = ImportError(  # pylint: disable=protected-access
          "No module named 'tensorflow_federated'")
      with self.assertRaisesRegex(ValueError, "needs TensorFlow Federated"):
        triehh.discover(["ab"] * 10, theta=1, batch_size=10, engine="tff",
                        allow_no_guarantee=True)
    finally:
      api._OPTIONAL_ENGINE_ERRORS.clear()  # pylint: disable=protected-access
      api._OPTIONAL_ENGINE_ERRORS.update(saved)  # pylint: disable=protected-access
      api._ENGINES.clear()  # pylint: disable=protected-access
      api._ENGINES.update(engines)  # pylint: disable=protected-access
