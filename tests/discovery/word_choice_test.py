"""Tests of triehh.discovery.word_choice: the once-per-run word draw."""

from absl.testing import parameterized
import numpy as np
from scipy import stats

from triehh.core import choices
from triehh.core import population as population_lib
from triehh.discovery import word_choice

# Three kinds of users, each with its own local frequencies.
KINDS = ({"ab": 1, "b": 3}, {"c": 2, "d": 2, "ce": 6}, {"f": 5})
PER_KIND = 4000


def population():
  users = [dict(kind) for kind in KINDS for _ in range(PER_KIND)]
  return population_lib.Population.from_user_words(users, max_length=3)


class DrawOnceTest(parameterized.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.pop = population()

  def test_words_follow_local_frequencies(self):
    drawn = word_choice.draw_once(self.pop, np.random.default_rng(0))
    self.assertTrue(drawn.is_single_word)
    self.assertEqual(drawn.num_users, self.pop.num_users)
    words = drawn.vocabulary[drawn.user_word]
    for i, kind in enumerate(KINDS):
      got = words[i * PER_KIND:(i + 1) * PER_KIND]
      observed = [int(np.sum(got == w)) for w in kind]
      self.assertEqual(sum(observed), PER_KIND)  # only the user's own words
      if len(kind) == 1:
        continue
      total = sum(kind.values())
      expected = [PER_KIND * c / total for c in kind.values()]
      p_value = stats.chisquare(observed, expected).pvalue
      self.assertGreater(p_value, 1e-3, msg=(kind, observed))

  def test_a_skewed_draw_is_detected(self):
    # The test above can fail: uniform choice instead of local frequency.
    drawn = word_choice.draw_once(self.pop, np.random.default_rng(0))
    got = drawn.vocabulary[drawn.user_word][:PER_KIND]
    observed = [int(np.sum(got == w)) for w in KINDS[0]]
    self.assertLess(stats.chisquare(observed, [PER_KIND / 2] * 2).pvalue, 1e-6)

  def test_same_seed_same_words_and_the_run_stream_untouched(self):
    def draw(seed):
      rng = np.random.default_rng(seed)
      drawn = word_choice.draw_once(self.pop, word_choice.per_run_generator(rng))
      return drawn.vocabulary[drawn.user_word], rng

    a, run_rng = draw(4)
    b, _ = draw(4)
    c, _ = draw(5)
    np.testing.assert_array_equal(a, b)
    self.assertFalse(np.array_equal(a, c))
    # The run's generator is not advanced by the draw.
    self.assertEqual(run_rng.integers(2**62),
                     np.random.default_rng(4).integers(2**62))

  def test_a_later_spawned_stream_is_another_one(self):
    # An engine spawning from the run's generator after the word draw (the
    # TFF engine's client draw) must not reuse the draw's stream.
    rng = np.random.default_rng(4)
    first = word_choice.per_run_generator(rng).integers(2**62, size=4)
    later = rng.spawn(1)[0].integers(2**62, size=4)
    self.assertFalse(np.array_equal(first, later))

  def test_one_word_population_is_returned_as_is(self):
    one = population_lib.Population.from_user_words(["ab", "b"])
    self.assertIs(word_choice.draw_once(one, np.random.default_rng(0)), one)

  def test_users_keep_their_indices_and_dropped_count(self):
    pop = population_lib.Population.from_user_words(
        [{"ab": 1}, {"a!": 2}, {"b": 1, "bb": 1}], max_length=3,
        alphabet="ab", unknown="drop")
    drawn = word_choice.draw_once(pop, np.random.default_rng(1))
    self.assertEqual(drawn.num_dropped_users, 1)
    self.assertEqual(drawn.vocabulary[drawn.user_word[0]], "ab")
    self.assertIn(drawn.vocabulary[drawn.user_word[1]], ("b", "bb"))
    self.assertEqual(drawn.alphabet, pop.alphabet)

  def test_bad_word_choice(self):
    with self.assertRaisesRegex(ValueError, "word_choice must be one of"):
      choices.check_word_choice("per_user")
    self.assertEqual(choices.check_word_choice("per_run"), "per_run")
