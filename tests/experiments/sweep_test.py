"""End-to-end tests of the sweep driver: records, flags, resuming after
SIGKILL, two sweeps on one directory, and worker processes."""

import collections
import json
import os
import random
import re
import subprocess
import sys
import time

import pytest

from experiments import sweep
from tests.experiments import drivers
from triehh.core import memory
from triehh.runs import algorithms
from triehh.runs import records
from triehh.runs import runner

SMALL = ("--num_users=20000", "--noprogress")
SMALL_SFP = ("--cms_k=16", "--cms_m=256")
VARYING = ("seconds", "client_seconds", "server_seconds")
# For the tests of processes (kills, two sweeps at once, a terminal): cells
# with fixed-size batches, whose calibration (Theorem 1) is immediate, where
# the Poisson accountant's takes a second or more per cell in every process.
FIXED = "--sampling=fixed"


def run_sweep(*flags, timeout=600):
  return drivers.run_module("experiments.sweep", *flags, timeout=timeout)


def read(path) -> list[dict]:
  return [json.loads(line) for line in
          (path / "results.jsonl").read_text().splitlines()]


def steady(record: dict) -> dict:
  """``record`` but its times (at the top and in its params)."""
  out = {k: v for k, v in record.items() if k not in VARYING}
  out["params"] = {k: v for k, v in record["params"].items()
                   if k not in VARYING}
  return out


def test_records_equal_those_of_run_triehh_and_run_sfp(tmp_path):
  # The three drivers run in this process, as their entry points would.
  from experiments import run_sfp  # pylint: disable=g-import-not-at-top
  from experiments import run_triehh  # pylint: disable=g-import-not-at-top
  common = ("--num_users=20000", "--num_runs=2", "--seed=5", *SMALL_SFP)
  status, _, err = drivers.run_in_process(
      sweep, "--algorithms=triehh,sfp", "--epsilons=2", *common,
      "--noprogress", f"--output_dir={tmp_path / 'sweep'}")
  assert status == 0, err
  status, _, err = drivers.run_in_process(
      run_triehh, "--epsilon=2", "--num_users=20000", "--num_runs=2",
      "--seed=5", f"--output_dir={tmp_path / 'single'}")
  assert status == 0, err
  status, _, err = drivers.run_in_process(
      run_sfp, "--epsilon=2", *common, f"--output_dir={tmp_path / 'single'}")
  assert status == 0, err
  swept = read(tmp_path / "sweep")
  single = read(tmp_path / "single")
  assert len(swept) == 4
  assert [r["seed"] for r in single] == [5, 6, 5, 6]
  assert [r["run"] for r in single] == [0, 1, 0, 1]
  assert ({json.dumps(steady(r), sort_keys=True) for r in swept}
          == {json.dumps(steady(r), sort_keys=True) for r in single})
  assert any(r["discovered"] for r in swept)


@pytest.mark.parametrize("flags, message", [
    (("--top_t=30",), "--top_t applies to SFP cells only"),
    (("--top_ts=20,80",), "--top_ts applies to SFP cells only"),
    (("--cms_k=8",), "--cms_k applies to SFP cells only"),
    (("--tff_workers=localhost:8000",), "--tff_workers applies to "
     "--engines=tff only"),
    (("--algorithms=sfp", "--engines=fast,tff"), "--engines applies to "
     "TrieHH cells only"),
    (("--algorithms=sfp", "--theta=3"), "--theta applies to TrieHH"),
    (("--theta=20", "--batch_size=5000", "--epsilons=2"),
     "--epsilons applies to no cell"),
    (("--dictionary_path=words.txt",), "applies to --settings=oov only"),
    (("--settings=oov",), "needs a text data set"),
    (("--datasets=default,file", "--data_path=data/example_users.csv",
      "--settings=single,oov", "--zipf_exponent=1.1"),
     "--zipf_exponent applies to --datasets=synthetic"),
    (("--epsilon=2", "--epsilons=2,4"), "give --epsilons or --epsilon"),
    (("--epsilons=1,1",), "--epsilons=1,1: lists 1 twice"),
    (("--epsilons=0,1",), "--epsilons=0,1: '0' is not a positive finite"),
    (("--algorithms=triehh,bogus",), "--algorithms=triehh,bogus: unknown "
     "value 'bogus': use triehh, sfp, iblt"),
    (("--show=3",), "--show is not a flag of this command: a sweep prints "
     "and writes no words"),
    (("--words_out=words.csv",), "--words_out is not a flag of this "
     "command: a sweep prints and writes no words"),
    (("--datasets=file",), "needs --data_path"),
    (("--k_anonymities=5",), "--k_anonymities applies to IBLT cells only; "
     "add iblt to --algorithms"),
    (("--algorithms=triehh,sfp", "--iblt_capacity=100",
      "--iblt_round_draw=disjoint"), "--iblt_capacity, --iblt_round_draw "
     "applies to IBLT cells only"),
    (("--iblt_secure_sum_bitwidth=32",), "--iblt_secure_sum_bitwidth "
     "applies to IBLT cells only"),
    (("--algorithms=iblt", "--k_anonymities=0"), "--k_anonymities=0: '0' "
     "is not a whole number from 1 to 2,147,483,647"),
    (("--algorithms=sfp", "--sfp_length=3"), "flag --sfp_length=3: must be "
     "even"),
    (("--algorithms=iblt", "--k_anonymities=theta,3,theta"),
     "--k_anonymities=theta,3,theta: lists theta twice"),
    (("--algorithms=iblt", "--iblt_secure_sum_bitwidth=63"),
     "--iblt_secure_sum_bitwidth"),
    (("--algorithms=iblt", "--theta=3"), "--theta applies to TrieHH"),
])
def test_a_flag_that_applies_to_no_cell_is_an_error(tmp_path, flags, message):
  code, out, err = drivers.run_in_process(
      sweep, *flags, f"--output_dir={tmp_path}")
  assert code == 1, (out, err)
  lines = err.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("error:"), err
  assert message in lines[0]
  assert not (tmp_path / "results.jsonl").exists()


@pytest.mark.parametrize("flags, cell, message", [
    # The first cells are fine: without the check they would run first.
    # (Fixed-size batches: checked at once, where the Poisson accountant
    # takes about a second per cell.)
    (("--epsilons=8,4,0.01", FIXED), "triehh/fast default/single eps=0.01",
     "too few"),
    (("--theta=2", "--batch_size=500"), "triehh/fast default/single theta=2",
     "Theorem 1 needs theta"),
    (("--algorithms=triehh,sfp", "--epsilons=8", "--sfp_length=50000",
      *SMALL_SFP), "sfp default/single eps=8", "SFP needs at least 25000 "
     "users"),
    (("--algorithms=triehh,iblt", "--epsilons=8", "--iblt_capacity=5"),
     "iblt default/single k=theta m at eps=8", "capacity=5 is below the"),
])
def test_a_bad_cell_fails_before_any_run(tmp_path, flags, cell, message):
  code, out, err = drivers.run_in_process(
      sweep, *SMALL, *flags, f"--output_dir={tmp_path}")
  assert code == 1, (out, err)
  lines = err.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith(f"error: cell [{cell}"), err
  assert message in lines[0]
  results = tmp_path / "results.jsonl"
  assert not results.exists() or results.read_text() == ""


def test_a_plan_too_large_for_memory_is_refused_at_once(tmp_path,
                                                         monkeypatch):
  monkeypatch.setattr(memory, "available_bytes", lambda: 2**20)
  monkeypatch.setattr(runner, "run_plan", lambda *args, **kwargs: 1 / 0)
  code, out, err = drivers.run_in_process(
      sweep, "--epsilons=4", "--num_users=10000", "--num_runs=1000000",
      f"--output_dir={tmp_path}", "--noprogress")
  assert (code, out) == (1, "")
  assert err == (
      "error: --num_runs=1,000,000 runs of each of 1 cell (100 bytes of plan "
      "per run) would need about 95.4 MiB of memory, more than the 1.0 MiB "
      "available; use --num_runs <= 10,485 (or fewer cells); the rest can "
      "run later from the next seed\n")


def test_workers_beyond_the_cpus_are_capped_and_said(tmp_path, monkeypatch):
  monkeypatch.setattr(runner, "cpu_count", lambda: 1)
  code, out, err = drivers.run_in_process(
      sweep, "--epsilons=4,8", FIXED, *SMALL, "--num_runs=1",
      "--workers=1000", f"--output_dir={tmp_path}")
  assert code == 0, err
  lines = out.splitlines()
  assert lines[0] == "sweep: --workers=1000 capped at 1: 1 CPU"
  assert lines[1].endswith("0 already in "
                           f"{tmp_path / 'results.jsonl'}, 2 to run")
  assert len(read(tmp_path)) == 2


def test_a_slow_step_before_the_runs_is_said(tmp_path, monkeypatch):
  monkeypatch.setattr(sweep, "SLOW_SECONDS", 0.0)
  code, _, err = drivers.run_in_process(
      sweep, "--epsilons=4,8", FIXED, *SMALL, "--num_runs=1",
      f"--output_dir={tmp_path}")
  assert code == 0, err
  said = [line for line in err.splitlines() if line.startswith("sweep: ")]
  assert re.fullmatch(r"sweep: building the grid's cells and the plan took "
                      r"\d+\.\d s", said[-2]), said
  assert said[-1].startswith("sweep: checked 1/2 cells before any run, "
                             "elapsed "), said


def test_the_timers_before_the_runs_follow_the_environment(monkeypatch,
                                                           capsys):
  # A loaded machine takes over two seconds a cell: the suite (as a script
  # parsing stderr) sets TRIEHH_PROGRESS_AFTER=inf, which the sweep's own
  # lines before the runs follow too.
  clock = [0.0]
  monkeypatch.setattr(sweep.time, "monotonic", lambda: clock[0])
  monkeypatch.setattr(sweep, "SLOW_SECONDS", None)

  def checked_lines(after: str) -> list[str]:
    monkeypatch.setenv("TRIEHH_PROGRESS_AFTER", after)
    clock[0] = 0.0
    on_checked = sweep.CheckProgress(3)
    for checked in (1, 2, 3):
      clock[0] += 100.0
      on_checked(checked)
    return capsys.readouterr().err.splitlines()

  assert checked_lines("inf") == []
  assert checked_lines("2") == [
      "sweep: checked 1/3 cells before any run, elapsed 0:01:40, eta "
      "0:03:20",
      "sweep: checked 2/3 cells before any run, elapsed 0:03:20, eta "
      "0:01:40"]


def test_a_delta_above_1_over_n_is_refused_in_flags_or_run_opted_in(
    tmp_path):
  code, out, err = drivers.run_in_process(
      sweep, "--algorithms=triehh", "--deltas=0.01", FIXED, *SMALL,
      f"--output_dir={tmp_path / 'refused'}")
  assert code == 1, (out, err)
  assert err == (
      "error: the --deltas value 0.01 is above 1/n = 1/20,000 = 5e-05, which "
      "protects nobody (publishing one user's data at random meets it): "
      "give each of --deltas at most 1/n (1/n^2 is the default), or pass "
      "--allow_delta_above_1_over_n to run it anyway\n")
  code, out, err = drivers.run_in_process(
      sweep, "--algorithms=partition_selection", "--delta=0.01", *SMALL,
      f"--output_dir={tmp_path / 'refused'}")
  assert code == 1 and err.startswith("error: cell [partition_selection "), err
  assert "]: --delta=0.01 is above 1/n" in err and "give --delta at" in err
  assert "allow_delta_above_1_over_n=True" not in err
  code, out, err = drivers.run_in_process(
      sweep, "--algorithms=iblt", "--delta=0.01",
      "--allow_delta_above_1_over_n", *SMALL,
      f"--output_dir={tmp_path / 'none'}")
  assert code == 1 and err == (
      "error: --allow_delta_above_1_over_n applies to no cell: only TrieHH, "
      "SFP, partition-selection and the noisy trie's cells refuse a delta "
      "above 1/n\n")
  code, out, err = drivers.run_in_process(
      sweep, "--algorithms=triehh,partition_selection,noisy_trie",
      "--deltas=0.01", "--allow_delta_above_1_over_n", FIXED, *SMALL,
      f"--output_dir={tmp_path / 'opted_in'}")
  assert code == 0, err
  got = read(tmp_path / "opted_in")
  assert sorted(r["algorithm"] for r in got) == [
      "noisy_trie", "partition_selection", "triehh"]
  for record in got:
    assert record["config"]["delta"] == 0.01
    assert record["config"]["allow_delta_above_1_over_n"] is True, record


def test_output_dir_is_required():
  code, _, err = drivers.run_in_process(sweep, "--epsilons=2")
  assert code == 1 and "needs --output_dir" in err


def test_cells_of_several_data_sets_and_settings(tmp_path):
  code, _, err = drivers.run_in_process(
      sweep, "--datasets=default,file", "--settings=single,multi",
      f"--data_path={os.path.join(drivers.ROOT, 'data', 'example_users.csv')}",
      "--theta=2", "--batch_size=20", "--allow_no_guarantee",
      "--num_users=20000", "--noprogress", "--num_runs=2", "--cache_dir=",
      f"--output_dir={tmp_path}")
  assert code == 0, err
  got = read(tmp_path)
  cells = collections.Counter(
      (r["config"]["data"]["dataset"], r["setting"]) for r in got)
  # default has the single setting only; the file has both.
  assert cells == {("default", "single"): 2, ("file", "single"): 2,
                   ("file", "multi"): 2}
  assert err.count("cell ") == 3


def test_rerun_skips_recorded_runs_and_extends_num_runs(tmp_path):
  flags = (*SMALL, "--epsilons=2,4", f"--output_dir={tmp_path}")
  status, first, err = drivers.run_in_process(sweep, *flags, "--num_runs=2")
  assert status == 0, err
  assert "4 to run" in first
  _, again, _ = drivers.run_in_process(sweep, *flags, "--num_runs=2")
  assert "4 already in" in again and "0 to run" in again
  _, more, _ = drivers.run_in_process(sweep, *flags, "--num_runs=3")
  assert "2 to run" in more
  got = read(tmp_path)
  pairs = [(r["config_key"], r["seed"]) for r in got]
  assert len(pairs) == len(set(pairs)) == 6
  assert sorted(collections.Counter(k for k, _ in pairs).values()) == [3, 3]


def _pairs(path) -> list[tuple[str, int]]:
  """(config_key, seed) of the complete lines of results.jsonl."""
  try:
    data = (path / "results.jsonl").read_bytes()
  except FileNotFoundError:
    return []
  complete = data[:data.rfind(b"\n") + 1].decode().splitlines()
  return [(json.loads(l)["config_key"], json.loads(l)["seed"])
          for l in complete]


def test_sigkill_at_random_moments_then_restart(tmp_path):
  rng = random.Random(20240610)
  flags = ("--num_users=20000", "--epsilons=2,4,8", "--num_runs=40", FIXED,
           "--noprogress", f"--output_dir={tmp_path}")
  kept: set = set()
  for _ in range(2):  # two kills at random moments, then one mid-line
    proc = subprocess.Popen(
        [sys.executable, "-m", "experiments.sweep", *flags], cwd=drivers.ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = len(kept) + rng.randint(1, 25)
    deadline = time.monotonic() + 120
    while (len(_pairs(tmp_path)) < target and proc.poll() is None
           and time.monotonic() < deadline):
      time.sleep(0.005)
    time.sleep(rng.uniform(0, 0.02))
    proc.kill()
    proc.wait()
    pairs = _pairs(tmp_path)
    assert len(pairs) == len(set(pairs)), "a run was recorded twice"
    assert kept <= set(pairs), "a finished run was lost"
    kept = set(pairs)
  # As if the last kill had landed in the middle of a line.
  with open(tmp_path / "results.jsonl", "ab") as f:
    f.write(b'{"algorithm": "triehh", "conf')
  # The run that repairs the file is not killed: it runs in this process.
  code, _, err = drivers.run_in_process(sweep, *flags)
  assert code == 0, err
  assert "unfinished line" in err
  # The fragment above is set aside by the run that repaired the file. A
  # random kill can also land inside a record's write (Linux stops a write
  # at a page boundary of the file for a fatal signal): the next run set
  # that torn line aside before its first append, or, after the last kill,
  # the fragment was appended to it and both went aside as one line.
  side = sorted(p for p in os.listdir(tmp_path) if ".partial-" in p)
  assert 1 <= len(side) <= 2, side
  texts = [(tmp_path / p).read_bytes() for p in side]
  fragment = b'{"algorithm": "triehh", "conf'
  assert texts[-1].endswith(fragment)
  for torn in texts[:-1] + [texts[-1][:-len(fragment)]]:
    assert not torn or (torn.startswith(b'{"') and b"\n" not in torn), torn
  pairs = _pairs(tmp_path)
  assert len(pairs) == len(set(pairs)) == 120
  assert kept <= set(pairs)
  per_key = collections.defaultdict(set)
  for key, seed in pairs:
    per_key[key].add(seed)
  assert len(per_key) == 3
  assert all(seeds == set(range(40)) for seeds in per_key.values())
  records.read(str(tmp_path / "results.jsonl"))  # every line a record


def _ran(stderr: str) -> dict[str, int]:
  """Cell label -> runs this sweep ran (from its one-line-per-cell output)."""
  out = {}
  for line in stderr.splitlines():
    if line.startswith("cell ") and "] " in line and " runs in " in line:
      label = line[line.index("[") + 1:line.index("]")]
      out[label] = int(line.split("] ")[1].split(" runs")[0])
  return out


def test_two_sweeps_on_one_directory_run_each_run_once(tmp_path):
  flags = ("--num_users=20000", "--epsilons=4,8", "--deltas=1e-9,1e-10",
           "--num_runs=15", FIXED, "--noprogress",
           f"--output_dir={tmp_path}")
  procs = [subprocess.Popen(
      [sys.executable, "-m", "experiments.sweep", *flags], cwd=drivers.ROOT,
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
           for _ in range(2)]
  outputs = [p.communicate(timeout=600) for p in procs]
  assert [p.returncode for p in procs] == [0, 0], outputs
  pairs = _pairs(tmp_path)
  assert len(pairs) == len(set(pairs)) == 4 * 15
  ran = [_ran(err) for _, err in outputs]
  # Each cell's runs were all run by one of the two sweeps.
  for label in set(ran[0]) | set(ran[1]):
    counts = sorted([ran[0].get(label, 0), ran[1].get(label, 0)])
    assert counts == [0, 15], (label, ran)


def test_workers_give_the_serial_records(tmp_path):
  flags = (*SMALL, *SMALL_SFP, "--algorithms=triehh,sfp", "--epsilons=2,4",
           "--num_runs=2")
  # The serial sweep runs in this process; the one with worker processes in
  # its own, as a user starts it.
  code, _, err = drivers.run_in_process(
      sweep, *flags, f"--output_dir={tmp_path / 'serial'}")
  parallel = run_sweep(*flags, "--workers=2",
                       f"--output_dir={tmp_path / 'parallel'}")
  assert code == 0, err
  assert parallel.returncode == 0, parallel.stderr
  assert "in 2 processes" in parallel.stdout
  one = sorted(json.dumps(steady(r), sort_keys=True)
               for r in read(tmp_path / "serial"))
  two = sorted(json.dumps(steady(r), sort_keys=True)
               for r in read(tmp_path / "parallel"))
  assert len(one) == 8 and one == two
  assert parallel.stderr.count("cell ") == 4


def run_on_terminal(*flags, timeout=600) -> tuple[int, str]:
  """Runs a sweep with stderr on a pseudo-terminal (120 columns).

  Returns the exit status and what the terminal received.
  """
  import fcntl  # pylint: disable=g-import-not-at-top
  import pty  # pylint: disable=g-import-not-at-top
  import struct  # pylint: disable=g-import-not-at-top
  import termios  # pylint: disable=g-import-not-at-top
  master, slave = pty.openpty()
  fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
  proc = subprocess.Popen(
      [sys.executable, "-m", "experiments.sweep", *flags], cwd=drivers.ROOT,
      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
  os.close(slave)
  chunks = []
  deadline = time.monotonic() + timeout
  while time.monotonic() < deadline:
    try:
      chunk = os.read(master, 65536)
    except OSError:  # EIO: the child closed the terminal
      break
    if not chunk:
      break
    chunks.append(chunk)
  os.close(master)
  code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
  return code, b"".join(chunks).decode("utf-8", "replace")


def test_progress_bar_on_a_terminal(tmp_path):
  code, screen = run_on_terminal(
      "--num_users=20000", "--epsilons=4,8", "--num_runs=3", FIXED,
      f"--output_dir={tmp_path / 'bar'}")
  assert code == 0, screen
  updates = [u for u in screen.replace("\r\n", "\r").split("\r") if "|" in u]
  # tqdm's bar: runs done/left of the total, elapsed<ETA, the current cell.
  assert any(" 0/6 " in u for u in updates), updates
  assert any(" 6/6 " in u for u in updates), updates
  assert any(re.search(r" [1-5]/6 \[\d\d:\d\d<\d\d:\d\d", u)
             for u in updates), updates
  for label in ("triehh/fast default/single eps=4",
                "triehh/fast default/single eps=8"):
    assert any(label in u for u in updates), (label, updates)
  assert "cell 1/2" not in screen  # the bar replaces the per-cell lines
  code, screen = run_on_terminal(
      "--num_users=20000", "--epsilons=4,8", "--num_runs=3", FIXED,
      "--noprogress", f"--output_dir={tmp_path / 'lines'}")
  assert code == 0, screen
  lines = [line for line in screen.splitlines() if line.strip()]
  assert "|" not in screen and "\r" not in screen.replace("\r\n", "")
  assert [line.split(" [")[0] for line in lines] == ["cell 1/2", "cell 2/2"]
  assert "3 runs in" in lines[0] and "3/6 runs done, 3 left" in lines[0]
  assert "eta " in lines[0] and "elapsed " in lines[0]


def test_iblt_cells_run_resume_and_summarize(tmp_path):
  pytest.importorskip("tensorflow_federated")
  from triehh.baselines import iblt  # pylint: disable=g-import-not-at-top
  from triehh.core import metrics  # pylint: disable=g-import-not-at-top
  from triehh.data import synthetic  # pylint: disable=g-import-not-at-top
  from triehh.theory import mechanism  # pylint: disable=g-import-not-at-top
  from triehh.theory import policy  # pylint: disable=g-import-not-at-top
  # 2,000 users, 93 per round at epsilon 8; strings cut at 3 bytes, so
  # some outputs are truncated ("tha" of "that").
  flags = ("--algorithms=triehh,iblt", "--num_users=2000", "--epsilons=8",
           "--k_anonymities=2", "--iblt_string_max_bytes=3",
           "--iblt_num_rounds=2", "--iblt_capacity=100", "--num_runs=2",
           "--seed=3", "--noprogress", f"--output_dir={tmp_path}")
  status, first, err = drivers.run_in_process(sweep, *flags)
  assert status == 0, err
  assert "4 to run" in first
  got = read(tmp_path)
  by_algorithm = collections.defaultdict(list)
  for record in got:
    by_algorithm[record["algorithm"]].append(record)
  assert sorted(r["seed"] for r in by_algorithm["triehh"]) == [3, 4]
  runs = sorted(by_algorithm["iblt"], key=lambda r: r["seed"])
  assert [r["seed"] for r in runs] == [3, 4]
  pop = synthetic.english_population(2000, seed=0)
  truth = pop.ground_truth()
  params = policy.resolve(2000, 10, mechanism.Target(8.0, sampling="fixed"))
  for record in runs:
    own = record["params"]  # IBLT's own fields
    # No (epsilon, delta): k-anonymity, said plainly.
    assert record["epsilon"] is None and record["delta"] is None
    assert record["has_guarantee"] is False
    assert record["accounting"] == "none"
    assert "not (epsilon, delta)-differential privacy" in own["privacy"]
    assert (own["matched_epsilon"], own["matched_delta"]) == (
        8.0, 1 / 2000**2)
    assert record["target_epsilon"] is None
    # The rounds TrieHH's sampling gives for the seed; released: every cut
    # string sent by at least k = 2 users of a round, with its count.
    plan = iblt.plan_run(pop, iblt.IBLTTarget(
        2, params.batch_size, capacity=100, string_max_bytes=3,
        num_rounds=2), seed=record["seed"])
    released, truncated = collections.Counter(), set()
    for _, words in plan.drawn:
      sent = collections.Counter(iblt.cut(str(w), 3)
                                 for w in pop.vocabulary[words])
      for text, count in sent.items():
        if count >= 2:
          released[text] += count
      truncated |= {iblt.cut(str(w), 3) for w in pop.vocabulary[words]
                    if len(str(w)) > 3} & {t for t, c in sent.items()
                                          if c >= 2}
    assert own["num_not_decoded"] == 0
    assert dict(zip(record["discovered"],
                    record["reported_counts"])) == released
    assert record["discovered"], "no output: the test checks nothing"
    assert sorted(own["truncated"]) == sorted(truncated)
    assert own["num_truncated"] == len(truncated) > 0
    scored = {(w + " [truncated]" if w in truncated else w): c
              for w, c in released.items()}
    assert record["metrics"] == pytest.approx(metrics.precision_recall_f1(
        scored, truth, (10, 50, 100)))
    assert own["batch_size"] == params.batch_size
    assert own["k_anonymity"] == 2 and record["rounds"] == 2
    assert record["num_participants"] == 2 * params.batch_size
    assert own["bytes_per_client"] == iblt.client_bytes(
        tuple(own["sketch_shape"]))
    assert own["seconds_per_client"] == pytest.approx(
        record["seconds"] / record["num_participants"])
    assert records.RunRecord.from_dict(record).to_dict() == record
  # Run again: every run is recorded, none is run twice.
  status, again, err = drivers.run_in_process(sweep, *flags)
  assert status == 0, err
  assert "4 already in" in again and "0 to run" in again
  assert read(tmp_path) == got
  # The summary shows IBLT as its own algorithm, with no epsilon.
  from experiments import summarize  # pylint: disable=g-import-not-at-top
  status, summary_out, err = drivers.run_in_process(
      summarize, f"--output_dir={tmp_path}")
  assert status == 0, err
  assert ("iblt (2-anonymity, not DP), default single, n=2,000, "
          f"m={params.batch_size} (TrieHH's at epsilon=8, delta=2.5e-07): "
          "2 runs") in summary_out
  table = summary_out[summary_out.index("Table 2"):]
  (row,) = [line for line in table.splitlines()
            if line.strip().startswith("iblt")]
  assert row.split()[:6] == ["iblt", "(k=2)", "default", "single", "2,000",
                             "none"]


def test_a_registered_mechanism_is_an_algorithm_of_the_sweep(tmp_path):
  # The noisy trie has no adapter of its own: its cells are its privacy
  # object (NoisyTarget) at each epsilon, run through triehh.discover.
  flags = ("--algorithms=noisy_trie", "--epsilons=2,4", "--num_runs=2",
           *SMALL, f"--output_dir={tmp_path}")
  status, out, err = drivers.run_in_process(sweep, *flags)
  assert status == 0, err
  assert "2 cells x 2 runs = 4 runs" in out
  got = read(tmp_path)
  assert [(r["algorithm"], r["engine"]) for r in got] == [
      ("noisy_trie", "fast")] * 4
  assert sorted((r["config"]["epsilon"], r["seed"]) for r in got) == [
      (2.0, 0), (2.0, 1), (4.0, 0), (4.0, 1)]
  for record in got:
    assert record["config"]["false_positive_rate"] == 1e-5  # its default
    assert 0 < record["epsilon"] <= record["config"]["epsilon"]
    assert record["params"]["sigma"] and record["rounds"] >= 1
    assert records.RunRecord.from_dict(record).to_dict() == record
  status, again, err = drivers.run_in_process(sweep, *flags)
  assert status == 0, err
  assert "4 already in" in again and "0 to run" in again
  status, _, err = drivers.run_in_process(sweep, "--algorithms=nothing",
                                          *flags[1:])
  assert "noisy_trie" in algorithms.names()
  assert status == 1 and err == (
      "error: flag --algorithms=nothing: unknown value 'nothing': use "
      f"{', '.join(algorithms.names())}\n")
