"""Tests of triehh.engines.tff.process: TrieHH as a TFF building block."""

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tensorflow_federated")

import tensorflow as tf
import tensorflow_federated as tff

import triehh
from triehh.core import alphabet as alphabet_lib
from triehh.core import population as population_lib
from triehh.engines.tff import clients
from triehh.engines.tff import computations
from triehh.engines.tff import counting
from triehh.engines.tff import process
from triehh.engines.tff import runtime

ROOT = pathlib.Path(__file__).resolve().parents[3]

# One word per user; three rounds of 30 of them find "to", "a" and "at"
# (theta 3).
WORDS = (["to"] * 8 + ["tea"] * 7 + ["ten"] * 4 + ["a"] * 6 + ["at"] * 5
         + ["on"] * 5 + ["no", "ant", "toe", "oat", "net", "tan"])
ALPHABET = "".join(sorted(set("".join(WORDS))))
L = 3
THETA = 3
SCHEDULE = [np.random.default_rng(seed).choice(len(WORDS), 30, replace=False)
            for seed in range(3)]


def datasets(user_words):
  """One client dataset per user: its words, one element per occurrence."""
  return [tf.data.Dataset.from_tensor_slices(
      [w] if isinstance(w, str) else [k for k, c in w.items() for _ in
                                      range(c)]) for w in user_words]


def run_rounds(proc, user_words, schedule):
  """Runs one ``next`` per scheduled round; the states and outputs."""
  state, steps = proc.initialize(), []
  for users in schedule:
    state, output = proc.next(state, datasets([user_words[u] for u in users]))
    steps.append((state, output))
  return steps


@pytest.fixture(scope="module")
def discovered(tff_runtime_module):
  """discover(engine="tff") on the scheduled users, and the constructor's
  calls it made."""
  calls = []
  build = process.build_triehh_process

  def spy(*args, **kwargs):
    calls.append(kwargs)
    return build(*args, **kwargs)

  with pytest.MonkeyPatch.context() as patch:
    patch.setattr(process, "build_triehh_process", spy)
    result = triehh.discover(WORDS,
                             triehh.Mechanism(
                                 theta=THETA, batch_size=30,
                                 allow_no_guarantee=True, schedule=SCHEDULE),
                             engine="tff", max_length=L)
  return result, calls


@pytest.fixture(scope="module")
def by_hand(tff_runtime_module):
  """The public constructor (SumFactory) over the same users, by hand."""
  proc = process.build_triehh_process(ALPHABET, L, THETA)
  with tff_runtime_module.get_runtime().install():
    return run_rounds(proc, WORDS, SCHEDULE)


def test_own_loop_gives_discovers_trie(discovered, by_hand):
  result, calls = discovered
  assert calls and all(c["client_data"] == clients.ONE_WORD for c in calls)
  assert result.trie.depth == 3 and result.heavy_hitters  # non-trivial
  for depth, (state, output) in enumerate(by_hand, start=1):
    assert bool(output.level_done)
    assert int(np.sum(output.votes)) == result.votes_per_round[depth - 1]
    assert process.decode_frontier(state, ALPHABET) == result.trie.prefixes(
        depth)
  state = by_hand[-1][0]
  assert list(process.decode_state(state, ALPHABET).items()) == list(
      result.heavy_hitters.items())
  assert process.decode_state(state, ALPHABET) == {"to": 6, "a": 4, "at": 3}


def test_several_word_clients_vote_like_discovers_top_words(tff_context):
  users = [{"to": 3, "tea": 1}, {"tea": 2, "at": 5}, {"on": 1},
           {"at": 2, "to": 1}] * 6
  schedule = [np.arange(len(users))] * 3
  result = triehh.discover(users,
                           triehh.Mechanism(
                               theta=4, batch_size=len(users),
                               allow_no_guarantee=True, schedule=schedule),
                           engine="tff", max_length=L, max_user_contribution=2)
  proc = process.build_triehh_process(ALPHABET, L, 4, max_user_contribution=2)
  state = run_rounds(proc, users, schedule)[-1][0]
  assert process.decode_state(state, ALPHABET) == result.heavy_hitters
  assert result.heavy_hitters == {"at": 12, "to": 12, "on": 6}
  assert process.decode_frontier(state, ALPHABET) == ["tea"]


class DoublingSum(tff.aggregators.UnweightedAggregationFactory):
  """Sums the votes and doubles the sum; counts its rounds in its state and
  reports them as its measurements; records the value types it is given."""

  def __init__(self):
    self.value_types = []

  def create(self, value_type):
    self.value_types.append(value_type)

    @tff.tensorflow.computation
    def zero():
      return tf.constant(0, tf.int32)

    @tff.federated_computation
    def init_fn():
      return tff.federated_eval(zero, tff.SERVER)

    @tff.tensorflow.computation(tff.TensorType(np.int32), value_type)
    def step(rounds, total):
      return rounds + 1, total * 2

    @tff.federated_computation(init_fn.type_signature.result,
                               tff.FederatedType(value_type, tff.CLIENTS))
    def next_fn(state, value):
      out = tff.federated_map(step, (state, tff.federated_sum(value)))
      return tff.templates.MeasuredProcessOutput(out[0], out[1], out[0])

    return tff.templates.AggregationProcess(init_fn, next_fn)


def test_a_custom_aggregation_factory_is_honoured(tff_context, by_hand):
  factory = DoublingSum()
  # Doubled votes against 2 theta keep what the plain sum keeps at theta.
  proc = process.build_triehh_process(ALPHABET, L, 2 * THETA,
                                      aggregation_factory=factory)
  assert factory.value_types == [tff.TensorType(
      np.int32, [process.DEFAULT_VOTE_CAPACITY * (len(ALPHABET) + 1)])]
  for round_num, ((state, output), (want, want_output)) in enumerate(
      zip(run_rounds(proc, WORDS, SCHEDULE), by_hand), start=1):
    assert state.aggregator == round_num == output.measurements
    np.testing.assert_array_equal(output.votes, 2 * want_output.votes)
    np.testing.assert_array_equal(state.frontier, want.frontier)
  assert process.decode_state(state, ALPHABET) == {
      w: 2 * v for w, v in process.decode_state(want, ALPHABET).items()}


def test_secure_sum_factory_gives_the_plain_sum(tff_context, by_hand):
  factory = tff.aggregators.SecureSumFactory(upper_bound_threshold=1,
                                             lower_bound_threshold=0)
  proc = process.build_triehh_process(ALPHABET, L, THETA,
                                      aggregation_factory=factory)
  for (state, output), (want, _) in zip(run_rounds(proc, WORDS, SCHEDULE),
                                        by_hand):
    assert output.measurements["secure_upper_clipped_count"] == 0
    for field in ("frontier", "heavy_hitters", "heavy_hitter_counts"):
      np.testing.assert_array_equal(getattr(state, field),
                                    getattr(want, field), err_msg=field)


def test_the_root_state_and_a_frontier_beyond_the_vote_capacity(tff_context):
  proc = process.build_triehh_process(ALPHABET, L, THETA, vote_capacity=1)
  root = proc.initialize()
  assert process.decode_state(root, ALPHABET) == {}
  assert process.decode_frontier(root, ALPHABET) == [""]
  state, _ = proc.next(root, datasets(WORDS))
  assert len(process.decode_frontier(state, ALPHABET)) > 1
  with pytest.raises(runtime.ComputationError, match="vote_capacity=1"):
    proc.next(state, datasets(WORDS))


def test_dataset_clients_lower_case_skip_empty_and_drop_unknown(tff_context):
  spec = clients.ProcessSpec(len(ALPHABET) + 1, L, 1,
                             client_mode=clients.DATASET, characters=ALPHABET)
  votes = computations.client_votes_computation(spec)
  root = np.zeros((1, 0), dtype=np.int32)

  def voted(*words):
    got = votes(root, tf.data.Dataset.from_tensor_slices(
        tf.constant(words, tf.string)))
    return "".join((ALPHABET + "$")[i] * int(n) for i, n in enumerate(got))

  assert voted("O", "t", "o", "", "", "") == "o"  # "O" and "o" are one word
  assert voted("to", "at") == "t"  # a tie: the first seen
  assert voted("to", "a!") == ""  # "!" is outside the alphabet: no vote
  assert voted("ton!", "to") == "t"  # only the first L characters count
  assert votes(root, tf.data.Dataset.from_tensor_slices(
      tf.constant([], tf.string))).sum() == 0


def test_encode_words_follows_the_population_rules():
  alphabet = alphabet_lib.Alphabet.of("abnostué")
  words = ["Sun", "sunny", "été", "a", "ÉTÉS", "sunny!", "sun!", "x"]
  codes, unknown = clients.encode_words(
      tf.strings.lower(tf.constant(words), encoding="utf-8"),
      "".join(alphabet.characters), max_length=4)
  assert unknown.numpy().tolist() == [False] * 6 + [True, True]
  pop = population_lib.Population.from_user_words(words[:6], max_length=4,
                                                  alphabet=alphabet)
  np.testing.assert_array_equal(codes.numpy()[:6],
                                pop.codes[pop.user_word])


def test_bad_arguments_are_rejected():
  with pytest.raises(ValueError, match="client_mode must be one of"):
    process.build_triehh_process(ALPHABET, L, THETA, client_data="words")
  with pytest.raises(ValueError, match="characters, sorted and distinct"):
    clients.ProcessSpec(3, L, 1, client_mode=clients.DATASET,
                        characters="ba")
  for field, value, error, message in [
      ("num_extensions", 1, ValueError, "num_extensions must be >= 2"),
      ("vote_capacity", 2.5, TypeError, "vote_capacity must be an integer"),
      ("secure_sum_bitwidth", 32, ValueError,
       r"secure_sum_bitwidth must be in \[1, 31\]")]:
    kwargs = dict(num_extensions=3, max_length=L, vote_capacity=1)
    with pytest.raises(error, match=message):
      clients.ProcessSpec(**{**kwargs, field: value})
  spec = clients.ProcessSpec(3, L, 1, secure_sum_bitwidth=4)
  with pytest.raises(ValueError, match="not both"):
    computations.aggregation_process(spec, tff.aggregators.SumFactory())


# ---- the README's example ----------------------------------------------------

MARKER = "<!-- example: tff-building-block -->"


def readme_example() -> str:
  """The Python block right after the marker in README.md."""
  readme = ROOT / "README.md"
  if not readme.exists():  # a Bazel target without //:README.md in its data
    pytest.skip("README.md is not among this test's files")
  text = readme.read_text(encoding="utf-8")
  match = re.search(re.escape(MARKER) + r"\s*```python\n(.*?)```", text,
                    re.DOTALL)
  assert match, f"no python block after {MARKER} in README.md"
  return match.group(1)


def test_the_readme_example_runs_and_prints_what_it_says(capsys):
  code = readme_example()
  # Each `print(...)  # shown` line shows what it prints.
  shown = re.findall(r"^print\(.*\)\s+# (.*)$", code, re.MULTILINE)
  assert len(shown) >= 2 and "build_triehh_process" in code
  exec(compile(code, "README.md", "exec"), {})  # pylint: disable=exec-used
  assert capsys.readouterr().out.splitlines() == shown


# A line of TensorFlow's C++ logging ("2024-05-01 10:00:00.123456: I
# tensorflow/core/..."), and the continuation of its CPU-feature line.
TF_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] |"
                         r"^To enable the following instructions")


def run_python(code: str, cwd, **env) -> subprocess.CompletedProcess:
  """Runs ``code`` in a new Python, TF_CPP_MIN_LOG_LEVEL unset unless
  given in ``env``."""
  environment = {k: v for k, v in os.environ.items()
                 if k != "TF_CPP_MIN_LOG_LEVEL"}
  path = environment.get("PYTHONPATH")
  environment["PYTHONPATH"] = str(ROOT) + (os.pathsep + path if path else "")
  return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=dict(
      environment, **env), capture_output=True, text=True, timeout=600,
                        check=False)


def test_the_readme_example_prints_no_tensorflow_logging(tmp_path):
  code = readme_example()
  done = run_python(code, tmp_path)
  assert done.returncode == 0, done.stderr
  shown = re.findall(r"^print\(.*\)\s+# (.*)$", code, re.MULTILINE)
  assert done.stdout.splitlines() == shown
  logged = [line for line in done.stderr.splitlines()
            if TF_LOG_LINE.search(line)]
  assert logged == [], done.stderr


@pytest.mark.parametrize("given, level", [(None, "3"), ("0", "0"),
                                          ("1", "1")])
def test_importing_the_package_quiets_tensorflow_unless_told(tmp_path, given,
                                                              level):
  done = run_python(
      "import os, sys; import triehh.engines.tff; "
      "print(os.environ['TF_CPP_MIN_LOG_LEVEL'], 'tensorflow' in sys.modules)",
      tmp_path, **({} if given is None else {"TF_CPP_MIN_LOG_LEVEL": given}))
  assert (done.returncode, done.stdout) == (0, f"{level} False\n"), (
      done.stderr)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(theta=2.5), TypeError, "theta must be an integer, got 2.5"),
    (dict(theta=0), ValueError, "theta must be >= 1, got 0"),
    (dict(theta=2, max_length=1.5), TypeError,
     "max_length must be an integer, got 1.5"),
])
def test_bad_thresholds_are_named_when_built(kwargs, error, message):
  arguments = {"max_length": 3, **kwargs}
  with pytest.raises(error, match=message):
    process.build_triehh_process("aehiot", **arguments)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(vote_capacity=10**9), ValueError,
     "vote_capacity must be at most 306783378, so that a vote vector of 7 "
     "entries per prefix fits int32; got 1000000000"),
    (dict(max_num_prefixes=10**9), ValueError,
     r"max_num_prefixes \(the vote capacity when vote_capacity is None\) "
     "must be at most 306783378"),
    (dict(max_length=2**31 - 1), ValueError,
     r"max_length must be in \[1, 2147483646\], got 2147483647"),
    (dict(vote_capacity=2.9), TypeError,
     "vote_capacity must be an integer, got 2.9"),
    (dict(vote_capacity="8"), TypeError,
     "vote_capacity must be an integer, got '8'"),
    (dict(max_user_contribution=1.9), TypeError,
     "max_user_contribution must be an integer, got 1.9"),
    (dict(max_user_contribution=True), TypeError,
     "max_user_contribution must be an integer, got True"),
    (dict(max_num_prefixes=2.5), TypeError,
     "max_num_prefixes must be an integer, got 2.5"),
    (dict(num_sub_rounds=2.0), TypeError,
     "num_sub_rounds must be an integer, got 2.0"),
    (dict(counting=counting.CountingSpec(1.0), word_capacity=2.7), TypeError,
     "word_capacity must be an integer, got 2.7"),
    (dict(counting=counting.CountingSpec(1.0, expected_clients=9.5)),
     TypeError, "expected_clients must be an integer, got 9.5"),
    (dict(max_num_prefixes=0), ValueError,
     r"max_num_prefixes must be in \[1, 2147483647\], got 0"),
    (dict(alphabet=5), TypeError,
     "alphabet must be an Alphabet, or a string or iterable of "
     "one-character strings, got 5"),
    (dict(alphabet=[b"a"]), TypeError,
     r"alphabet must be an Alphabet, .* got \[b'a'\]"),
    (dict(aggregation_factory=5), TypeError,
     "aggregation_factory must be a "
     "tff.aggregators.UnweightedAggregationFactory or None, got 5"),
])
def test_bad_arguments_are_named_when_built(kwargs, error, message):
  arguments = {"alphabet": "aehiot", "max_length": 3, "theta": 2, **kwargs}
  with pytest.raises(error, match=f"^{message}"):
    process.build_triehh_process(**arguments)


def test_numpy_integers_are_sizes():
  proc = process.build_triehh_process(
      "aehiot", np.int64(3), np.int32(2), vote_capacity=np.int16(4),
      max_num_prefixes=np.int64(2), num_sub_rounds=np.int8(1),
      max_user_contribution=np.uint8(1),
      counting=counting.CountingSpec(1.0, expected_clients=np.int64(5)),
      word_capacity=np.int32(3))
  assert isinstance(proc, process.TrieHHProcess)


@pytest.mark.parametrize("other", ["aeo", ALPHABET + "z"])
def test_a_state_of_another_alphabet_is_refused(by_hand, other):
  state = by_hand[-1][0]
  assert process.decode_state(state, ALPHABET)  # words to decode
  message = ("alphabet must be the alphabet the process was built with: the "
             "state's heavy_hitters holds codes outside alphabet")
  with pytest.raises(ValueError, match=message):
    process.decode_state(state, other)
  counts = np.zeros(len(process.decode_state(state, ALPHABET)) + 1)
  with pytest.raises(ValueError, match=message):
    process.decode_counts(state, counts, other)


def test_a_frontier_of_another_alphabet_is_refused(by_hand):
  state = by_hand[0][0]
  assert "t" in process.decode_frontier(state, ALPHABET)
  message = (r"^alphabet must be the alphabet the process was built with: "
             r"the state's frontier holds codes outside alphabet 'ae' "
             r"\(characters 0\.\.1, end symbol 2\)$")
  with pytest.raises(ValueError, match=message):
    process.decode_frontier(state, "ae")
