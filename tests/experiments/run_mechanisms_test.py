"""triehh-run --mechanism: every registered mechanism, its flags made from
its privacy object's fields (experiments.mechanism_flags)."""

import csv
import dataclasses
import json
import os
import re

import pytest
from absl import flags
from absl.testing import flagsaver

import triehh
from experiments import cli
from experiments import mechanism_flags
from experiments import run_triehh
from tests.experiments import drivers
from tests.mechanisms import toy_mechanism
from triehh.data import datasets
from triehh.data import ingested
from triehh.mechanisms import registry
from triehh.theory.adjacency import Adjacency

FLAGS = flags.FLAGS
BUILT_IN = ("noisy_trie", "partition_selection", "sfp", "iblt", "two_servers")
EXAMPLE = os.path.join(drivers.ROOT, "data", "example_users.csv")


def run(*args):
  return drivers.run_in_process(run_triehh, *args)


def default_population(num_users: int):
  """The population of ``--num_users=N`` (the default data set)."""
  return datasets.load_data(datasets.options(
      "default", "single", {"num_users": num_users, "max_length": 10})
                            ).population


def privacy_of(*args):
  """The privacy object triehh-run builds from ``args``."""
  with flagsaver.flagsaver():
    cli.parse_flags(["triehh-run", *args], run_triehh)
    made = mechanism_flags.current()[FLAGS.mechanism]
    return mechanism_flags.privacy_object(made)


def section(help_text: str, mechanism: str) -> str:
  """The part of ``--help`` under ``--mechanism=<mechanism>:``."""
  start = help_text.index(f"\n--mechanism={mechanism}:\n")
  end = min(i for i in (help_text.find("\n--mechanism=", start + 1),
                        help_text.find("\n(--helpfull", start + 1))
            if i > 0)
  return help_text[start:end]


# ---- the flags, from the fields ----------------------------------------------


def test_every_field_is_a_flag_listed_under_its_mechanism():
  code, out, err = run("--help")
  assert (code, err) == (0, "")
  assert ("  --mechanism: <triehh|noisy_trie|partition_selection|sfp|iblt|"
          "two_servers>: "
          in out)
  made = mechanism_flags.current()
  assert sorted(made) == sorted(BUILT_IN)
  for name in BUILT_IN:
    kind = registry.get(name).privacy_types[0]
    fields = {f.name for f in dataclasses.fields(kind) if f.init}
    assert {f.name for f in made[name].fields} == fields
    text = section(out, name)
    for field in made[name].fields:
      assert field.flags, (name, field.name)  # none is left without a flag
      for flag in field.flags:
        listed = re.search(rf"\n  --(\[no\])?{flag}:", text)
        shared = f"--{flag}" in text.split("\n  --", 1)[0]  # its note
        assert listed or shared, (name, flag)
  # The help of a field is its docstring's entry.
  assert ("  --false_positive_rate: alpha, the chance that a candidate no "
          "user votes for\n    passes, per candidate and level.\n"
          "    (default: '1e-05')") in section(out, "noisy_trie")
  assert "also reads --epsilon, --delta, --population_size" in " ".join(
      section(out, "noisy_trie").split())
  assert "  --k_anonymity:" in section(out, "iblt")
  assert "(required with --mechanism=iblt)" in section(out, "iblt")
  # A field's flag has the name the other drivers give its idea.
  assert "  --cms_k:" in section(out, "sfp")
  assert "  --sfp_length:" in section(out, "sfp")
  assert "  --partition_strategy:" in section(out, "partition_selection")
  # No other driver's flags.
  for other in ("--runs_per_side", "--epsilons", "--k_anonymities", "--k",
                "--length", "--strategy"):
    assert f"  {other}:" not in out, other


@pytest.mark.parametrize("args, want", [
    (["--mechanism=noisy_trie"], triehh.NoisyTarget(4.0)),
    (["--mechanism=noisy_trie", "--epsilon=2", "--delta=1e-9",
      "--false_positive_rate=1e-6", "--chars_per_level=2",
      "--population_size=2e5", "--noise_multipliers=2,2,1.5"],
     triehh.NoisyTarget(2.0, delta=1e-9, false_positive_rate=1e-6,
                        chars_per_level=2, population_size=200_000,
                        noise_multipliers=(2.0, 2.0, 1.5))),
    # A client's upload budget per run: the planned noisy trie; 0: none.
    (["--mechanism=noisy_trie", "--upload_budget_bytes=1e6"],
     triehh.NoisyTarget(4.0, upload_budget=triehh.UploadBudget(1_000_000))),
    (["--mechanism=noisy_trie", "--upload_budget_bytes=0"],
     triehh.NoisyTarget(4.0)),
    (["--mechanism=noisy_trie", "--upload_budget_bytes=1e6",
      "--upload_sampling_rate=0.5"],
     triehh.NoisyTarget(4.0, upload_budget=triehh.UploadBudget(
         1_000_000, sampling_rate=0.5))),
    (["--mechanism=partition_selection", "--partition_strategy=laplace_thresholding",
      "--max_partitions_contributed=2", "--population_size=1e5"],
     triehh.PartitionSelectionTarget(
         4.0, strategy="laplace_thresholding", max_partitions_contributed=2,
         population_size=100_000)),
    (["--mechanism=sfp"], triehh.SFPTarget(4.0)),
    # The run's --epsilon stands for SFP's central epsilon unless the local
    # one is given.
    (["--mechanism=sfp", "--epsilon_local=2", "--top_t=5", "--cms_k=16",
      "--cms_m=64", "--sfp_length=8", "--fragment_alphabet=abc",
      "--check_puzzle_hash", "--stitching=paper", "--word_budget=0.25"],
     triehh.SFPTarget(epsilon_local=2.0, top_t=5, k=16, m=64, length=8,
                      fragment_alphabet="abc", check_puzzle_hash=True,
                      stitching="paper", word_budget=0.25)),
    (["--mechanism=iblt", "--k_anonymity=5", "--batch_size=300",
      "--rounds=disjoint", "--secure_sum_bitwidth=20", "--repetitions=4"],
     triehh.IBLTTarget(5, 300, rounds="disjoint", secure_sum_bitwidth=20,
                       repetitions=4)),
    # IBLT's batch from --epsilon/--delta: TrieHH's fixed-size batch.
    (["--mechanism=iblt", "--k_anonymity=5", "--epsilon=2", "--delta=1e-7"],
     triehh.IBLTTarget(5, triehh.Target(2.0, delta=1e-7,
                                        sampling="fixed"))),
])
def test_the_privacy_object_is_built_from_the_flags(args, want):
  assert privacy_of(*args) == want


# ---- runs --------------------------------------------------------------------


def _ingest(tmp_path) -> str:
  """The folder triehh-ingest writes for the example file."""
  pytest.importorskip("apache_beam", reason="apache-beam is not installed")
  from experiments import ingest  # pylint: disable=g-import-not-at-top
  folder = str(tmp_path / "pop")
  code, _, err = drivers.run_in_process(ingest, f"--input={EXAMPLE}",
                                        f"--output_dir={folder}")
  assert code == 0, err
  return folder


def test_the_noisy_trie_runs_on_an_ingested_folder_and_writes_its_words(
    tmp_path):
  folder = _ingest(tmp_path)
  words_out = str(tmp_path / "words.csv")
  code, out, err = run("--mechanism=noisy_trie", "--dataset=ingested",
                       f"--data_path={folder}", f"--words_out={words_out}",
                       "--cache_dir=", "--seed=0")
  assert (code, err) == (0, ""), err
  # An ingested folder's alphabet is its spec's characters, fixed before
  # the data: public, as the noisy trie needs.
  population = ingested.read_population(folder).population
  assert not population.alphabet_from_data
  want = triehh.discover(population, triehh.NoisyTarget(4.0), seed=0)
  assert want.words
  assert "mechanism: noisy_trie (fast engine)" in out
  assert f"privacy: {want.guarantee.describe()}\n" in out
  assert (f"run 0 (seed 0): {len(want.words)} word"
          f"{'' if len(want.words) == 1 else 's'} released in "
          f"{len(want.per_round)} rounds") in out
  assert f"  {', '.join(want.words)}\n" in out
  assert f"released words and their guarantee written to {words_out}" in out
  with open(words_out, encoding="utf-8") as f:
    lines = f.read().splitlines()
  notes = dict(line[2:].split(": ", 1) for line in lines if line[0] == "#")
  assert notes["mechanism"] == "noisy_trie"
  assert float(notes["epsilon"]) == want.guarantee.epsilon
  rows = list(csv.reader([line for line in lines if line[0] != "#"]))
  assert rows == [["rank", "word"]] + [[str(i), w]
                                       for i, w in enumerate(want.words, 1)]


def test_an_upload_budget_runs_the_planned_trie_and_says_its_uploads():
  code, out, err = run("--mechanism=noisy_trie", "--num_users=3000",
                       "--upload_budget_bytes=2e5", "--cache_dir=",
                       "--seed=0")
  assert (code, err) == (0, ""), err
  want = triehh.discover(default_population(3000), triehh.NoisyTarget(
      4.0, upload_budget=triehh.UploadBudget(200_000)), seed=0)
  assert want.words and want.upload_bytes > 0
  assert f"privacy: {want.guarantee.describe()}\n" in out
  per_round = ", ".join(f"{b:,}" for b in want.upload_bytes_per_round)
  assert (f"  a client uploaded, per round: {per_round} bytes; per run: "
          f"{want.upload_bytes:,} bytes\n") in out
  assert "upload_budget=UploadBudget(bytes_per_run=200000" in out


def test_a_sampled_budget_says_each_rounds_rate_and_the_expected_bytes():
  code, out, err = run("--mechanism=noisy_trie", "--num_users=3000",
                       "--upload_budget_bytes=2e5",
                       "--upload_sampling_rate=0.5", "--cache_dir=",
                       "--seed=0")
  assert (code, err) == (0, ""), err
  want = triehh.discover(default_population(3000), triehh.NoisyTarget(
      4.0, upload_budget=triehh.UploadBudget(200_000, sampling_rate=0.5)),
                         seed=0)
  first, second = want.upload_bytes_per_round[:2]
  assert want.upload_bytes < sum(want.upload_bytes_per_round)
  assert (f"  a client uploaded, per round: {first:,} (q=0.5), {second:,} "
          "(q=0.5), ") in out  # a q given is kept in every round
  assert (f" bytes; per run: {want.upload_bytes:,} bytes in "
          "expectation\n") in out


def test_skellam_shares_run_from_the_command_line():
  """--distributed_noise --dropout: the clients' Skellam shares, for the
  planned trie (a budget) and the classic one, as triehh.discover runs
  them; another mechanism refuses the flags."""
  for budget, target in (
      (["--upload_budget_bytes=2e5"], triehh.NoisyTarget(
          4.0, upload_budget=triehh.UploadBudget(200_000))),
      ([], triehh.NoisyTarget(4.0))):
    code, out, err = run("--mechanism=noisy_trie", "--num_users=3000",
                         *budget, "--distributed_noise", "--dropout=0.05",
                         "--cache_dir=", "--seed=0")
    assert (code, err) == (0, ""), err
    want = triehh.discover(default_population(3000), target, seed=0,
                           noise="distributed", dropout=0.05)
    assert want.words and "Skellam shares" in want.guarantee.describe()
    assert f"privacy: {want.guarantee.describe()}\n" in out
  code, out, err = run("--mechanism=noisy_trie", "--num_users=3000",
                       "--dropout=0.05", "--cache_dir=")
  assert (code, out) == (1, "")
  assert err == ("error: --dropout is the bound of --distributed_noise; "
                 "give both, or neither\n")
  code, out, err = run("--mechanism=partition_selection", "--num_users=3000",
                       "--distributed_noise", "--cache_dir=")
  assert (code, out) == (1, "")
  assert err == ("error: --distributed_noise is a flag of "
                 "--mechanism=noisy_trie, not of "
                 "--mechanism=partition_selection\n")


def test_the_noisy_trie_refuses_an_alphabet_read_off_the_data():
  code, out, err = run("--mechanism=noisy_trie", "--dataset=synthetic",
                       "--num_users=1000", "--cache_dir=")
  assert (code, out) == (1, "")  # refused as the data is built
  assert err == (
      "error: --mechanism=noisy_trie needs a public alphabet, fixed before "
      "the data is seen, and --dataset=synthetic reads its alphabet off the "
      "users' words (a candidate built from it can release a character "
      "only one user types): run it on a data set whose alphabet is fixed, "
      "as the default one's and an ingested folder's are\n")


def test_sfp_is_the_librarys_run_of_its_target(tmp_path):
  words_out = str(tmp_path / "words.json")
  code, out, err = run("--mechanism=sfp", "--num_users=20000", "--top_t=10",
                       "--cache_dir=", f"--words_out={words_out}",
                       "--seed=0")
  assert (code, err) == (0, ""), err
  want = triehh.discover(default_population(20000),
                         triehh.SFPTarget(4.0, top_t=10), seed=0)
  with open(words_out, encoding="utf-8") as f:
    written = json.load(f)
  assert written["words"] == list(want.words) and want.words
  assert written["mechanism"]["name"] == "sfp"
  assert written["mechanism"]["parameters"]["top_t"] == 10
  assert written["guarantee"]["epsilon"] == want.guarantee.epsilon
  assert f"privacy: {want.guarantee.describe()}\n" in out


@pytest.mark.parametrize("engine", ["fast", "beam"])
def test_partition_selection_runs_on_each_of_its_engines(tmp_path, engine):
  if engine == "beam":
    pytest.importorskip("apache_beam", reason="apache-beam is not installed")
  words_out = str(tmp_path / "words.json")
  code, out, err = run("--mechanism=partition_selection", f"--engine={engine}",
                       "--num_users=20000", "--cache_dir=",
                       f"--words_out={words_out}")
  assert (code, err) == (0, ""), err
  assert f"mechanism: partition_selection ({engine} engine)" in out
  with open(words_out, encoding="utf-8") as f:
    written = json.load(f)
  guarantee = written["guarantee"]
  assert (guarantee["epsilon"], guarantee["delta"]) == (4.0, 1 / 20000**2)
  # "the" is held by thousands of the 20,000 users: far above any
  # threshold at epsilon 4 (its chance of staying out is below 1e-100).
  assert "the" in written["words"]
  assert set(written["words"]) <= set(
      default_population(20000).vocabulary.tolist())


def test_iblt_runs_on_tff_as_the_library_runs_it(tmp_path):
  words_out = str(tmp_path / "words.json")
  code, out, err = run("--mechanism=iblt", "--k_anonymity=3",
                       "--num_users=5000", "--cache_dir=", "--seed=0",
                       f"--words_out={words_out}")
  assert (code, err) == (0, ""), err
  want = triehh.discover(
      default_population(5000),
      triehh.IBLTTarget(3, triehh.Target(4.0, sampling="fixed")), seed=0)
  assert "mechanism: iblt (tff engine)" in out
  with open(words_out, encoding="utf-8") as f:
    assert json.load(f)["words"] == list(want.words)
  assert want.words


def _record(line: str) -> dict:
  record = json.loads(line)
  return {k: v for k, v in record.items() if "seconds" not in k}


def test_naming_triehh_runs_it_as_before(tmp_path):
  outputs = []
  for name, extra in (("plain", ()), ("named", ("--mechanism=triehh",))):
    code, out, err = run(*extra, "--num_users=20000", "--cache_dir=",
                         "--num_runs=2", "--seed=0",
                         f"--output_dir={tmp_path / name}")
    assert (code, err) == (0, ""), err
    lines = (tmp_path / name / "results.jsonl").read_text().splitlines()
    # The printed lines, but the timings and the results file's path.
    shown = [re.sub(r"[\d.]+ m?s\b", "T", line) for line in out.splitlines()
             if "results appended" not in line]
    outputs.append(([_record(line) for line in lines], shown))
  assert outputs[0] == outputs[1]
  assert len(outputs[0][0]) == 2 and outputs[0][0][0]["algorithm"] == "triehh"


# ---- refusals ----------------------------------------------------------------


@pytest.mark.parametrize("args, said", [
    (["--mechanism=noisy_trie", "--top_t=5"],
     "--top_t is a field of --mechanism=sfp, not of --mechanism=noisy_trie"),
    (["--top_t=5"],
     "--top_t is a field of --mechanism=sfp, not of --mechanism=triehh"),
    (["--mechanism=triehh", "--k_anonymity=3"], "--k_anonymity is a field "
     "of --mechanism=iblt, not of --mechanism=triehh"),
    (["--mechanism=partition_selection", "--theta=3"],
     "--theta is a flag of --mechanism=triehh, not of "
     "--mechanism=partition_selection"),
    (["--mechanism=sfp", "--population_size=1000"],
     "--population_size is read by --mechanism=triehh, noisy_trie, "
     "partition_selection and two_servers, not by --mechanism=sfp"),
    (["--mechanism=noisy_trie", "--output_dir=out"],
     "--output_dir is a flag of --mechanism=triehh, not of "
     "--mechanism=noisy_trie (results.jsonl records are TrieHH's; write the "
     "release with --words_out)"),
    (["--mechanism=sfp", "--sfp_length=3"],
     "--sfp_length must be even (2-character fragments), got 3"),
    (["--mechanism=sfp", "--epsilon=2", "--epsilon_local=1"],
     "give either the central --epsilon or --epsilon_local, not both"),
    (["--mechanism=partition_selection", "--partition_strategy=best"],
     "flag --partition_strategy=best: value should be one of "
     "<truncated_geometric|laplace_thresholding|gaussian_thresholding>"),
    (["--mechanism=iblt"], "--mechanism=iblt needs --k_anonymity"),
    (["--mechanism=iblt", "--k_anonymity=3", "--batch_size=100",
      "--delta=1e-6"],
     "give --batch_size (IBLT's users per round) or --epsilon/--delta (a "
     "TrieHH target whose batch sizes the rounds), not both: --delta given "
     "with --batch_size"),
    (["--mechanism=sfp", "--engine=tff"],
     "--engine=tff does not run --mechanism=sfp; fast does"),
    (["--mechanism=noisy_trie", "--tff_rpc_timeout=5"],
     "--tff_rpc_timeout is a flag of the TFF engine, and "
     "--mechanism=noisy_trie runs on --engine=fast"),
    (["--mechanism=iblt", "--k_anonymity=3", "--tff_rpc_timeout=5"],
     "--tff_rpc_timeout is not read by --mechanism=iblt on the TFF engine "
     "(it reads --tff_workers only)"),
    (["--mechanism=bogus"], "flag --mechanism=bogus: value should be one of "
     "<triehh|noisy_trie|partition_selection|sfp|iblt|two_servers>"),
    (["--mechanism=noisy_trie", "--noise_multipliers=2,x"],
     "flag --noise_multipliers=2,x: 'x' is not a number"),
    (["--mechanism=noisy_trie", "--words_out=w.txt"],
     "--words_out=w.txt: give a .csv or .json file (the extension chooses "
     "the format), not .txt"),
    (["--mechanism=noisy_trie", "--upload_budget_bytes=1e6",
      "--chars_per_level=2"],
     "--chars_per_level given with --upload_budget_bytes: the budget's plan "
     "chooses the characters per round, the noise multipliers and the "
     "false-positive rates; give the budget alone"),
    (["--mechanism=noisy_trie", "--upload_budget_bytes=-5"],
     "--upload_budget_bytes must be a number of bytes >= 0 (0: no budget), "
     "got -5"),
    (["--mechanism=noisy_trie", "--upload_sampling_rate=0.5"],
     "--upload_sampling_rate given without --upload_budget_bytes: it is the "
     "planned rounds' sampling rate; give a budget too"),
    (["--mechanism=noisy_trie", "--upload_budget_bytes=1e6",
      "--upload_sampling_rate=2"],
     "--upload_sampling_rate must be in (0, 1], got 2.0"),
    (["--mechanism=triehh", "--upload_budget_bytes=1e6"],
     "--upload_budget_bytes is read by --mechanism=noisy_trie, not by "
     "--mechanism=triehh"),
])
def test_a_bad_flag_is_refused_in_flag_terms_before_any_data(args, said):
  code, out, err = run(*args)
  assert (code, out, err) == (1, "", f"error: {said}\n")


def test_a_check_of_the_privacy_object_names_the_flag():
  code, _, err = run("--mechanism=noisy_trie", "--false_positive_rate=2")
  assert code == 1
  assert err.startswith("error: --false_positive_rate must be in (0, 1)")
  assert not re.search(r"(?<!-)false_positive_rate", err)


# ---- a mechanism registered in the process ----------------------------------


@dataclasses.dataclass(frozen=True)
class FloorTarget(toy_mechanism.ToyTarget):
  """The toy's target, and fields more.

  Attributes:
    min_users: words held by fewer users are never released.
    adjacency: the neighbours asked for (the name TrieHH's flag reads).
    seed: named as the run's own flag.
    weights: no flag holds a mapping.
  """

  min_users: int = 0
  adjacency: Adjacency | None = None
  seed: int = 0
  weights: dict[str, float] | None = None


class FloorToy(toy_mechanism.ToyMechanism):
  name = "toy_floor"
  privacy_types = (FloorTarget,)


@pytest.fixture
def toys():
  registry.register(toy_mechanism.MECHANISM)
  registry.register(FloorToy())
  try:
    yield
  finally:
    registry.unregister(FloorToy.name)
    registry.unregister(toy_mechanism.NAME)


def test_a_mechanism_registered_in_the_process_runs_from_its_flags(
    toys, tmp_path):
  del toys
  code, out, err = run("--help")
  assert (code, err) == (0, "")
  assert ("<triehh|noisy_trie|partition_selection|sfp|iblt|two_servers|"
          "toy_gaussian|toy_floor>" in out.replace("\n    ", ""))  # wrapped
  toy = section(out, "toy_gaussian")
  assert ("  --words: the public candidate words (fixed before the data is "
          "seen).\n    (default: 'the,of,and,to,a,in,is,you,that,it')") in toy
  assert "  --threshold_sigmas:" in toy and "  --min_users:" not in toy
  # A field added to a privacy object is a flag, with its docstring's help.
  assert ("  --min_users: words held by fewer users are never released.\n"
          "    (default: '0')") in section(out, "toy_floor")
  assert privacy_of("--mechanism=toy_floor", "--min_users=3",
                    "--words=the,of") == FloorTarget(4.0, words=("the", "of"),
                                                     min_users=3)
  # An enum field reads the flag of its name, as a member; a field named as
  # the run's own flag, or of a type no flag holds, keeps its default.
  assert privacy_of("--mechanism=toy_floor", "--adjacency=REPLACE_ONE") == (
      FloorTarget(4.0, adjacency=Adjacency.REPLACE_ONE))
  note = " ".join(section(out, "toy_floor").split())
  assert "also reads --epsilon, --delta, --adjacency;" in note
  assert ("seed is no flag (--seed is the run's own): keeps its default; "
          "weights is no flag (no flag holds a dict[str, float] | None): "
          "keeps its default") in note

  words_out = str(tmp_path / "words.json")
  code, out, err = run("--mechanism=toy_gaussian", "--words=the,of,and,zzz",
                       "--threshold_sigmas=2", "--epsilon=2",
                       "--num_users=20000", "--cache_dir=", "--seed=0",
                       f"--words_out={words_out}")
  assert (code, err) == (0, ""), err
  want = triehh.discover(
      default_population(20000),
      toy_mechanism.ToyTarget(2.0, words=("the", "of", "and", "zzz"),
                              threshold_sigmas=2.0), seed=0)
  with open(words_out, encoding="utf-8") as f:
    written = json.load(f)
  assert written["words"] == list(want.words)
  assert set(want.words) == {"the", "of", "and"}  # no user holds zzz
  assert "mechanism: toy_gaussian (fast engine)" in out
  code, out, err = run("--mechanism=noisy_trie", "--words=the")
  assert (code, out, err) == (1, "", "error: --words is a field of "
                              "--mechanism=toy_gaussian and toy_floor, not "
                              "of --mechanism=noisy_trie\n")


def test_an_unregistered_mechanism_is_no_choice_and_has_no_flags():
  assert toy_mechanism.NAME not in registry.names()
  code, out, err = run("--mechanism=toy_gaussian")
  assert (code, out) == (1, "")
  assert err == ("error: flag --mechanism=toy_gaussian: value should be one "
                 "of <triehh|noisy_trie|partition_selection|sfp|iblt|"
                 "two_servers>\n")
  code, out, err = run("--words=the")  # made for no mechanism
  assert (code, out) == (1, "")
  assert err.startswith("error: Unknown command line flag 'words'")


@pytest.mark.parametrize("mechanism", ["noisy_trie", "partition_selection",
                                       "sfp"])
def test_every_mechanism_reads_the_opt_in_flag_and_its_refusal_names_it(
    mechanism):
  args = (f"--mechanism={mechanism}", "--num_users=1000", "--cache_dir=",
          "--delta=0.01")
  assert privacy_of(*args, "--allow_delta_above_1_over_n"
                    ).allow_delta_above_1_over_n
  assert not privacy_of(*args).allow_delta_above_1_over_n
  code, out, err = run(*args)
  assert code == 1
  assert err.startswith("error: --delta=0.01 is above 1/n = 1/1,000"), err
  assert "--allow_delta_above_1_over_n" in err
  assert "allow_delta_above_1_over_n=True" not in err
