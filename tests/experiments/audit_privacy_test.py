"""Tests of the experiments.audit_privacy driver."""

import csv
import os
import signal
import subprocess
import time

import numpy as np
import pytest

from experiments import audit_privacy
from tests.experiments import drivers

SMALL = ("--num_users=1000", "--theta=12", "--batch_size=32",
         "--max_length=1", "--runs_per_side=0")


def run(*flags: str) -> subprocess.CompletedProcess:
  """The driver run in this process, as its entry point would run it."""
  status, out, err = drivers.run_in_process(audit_privacy, *flags)
  return subprocess.CompletedProcess(flags, status, out, err)


def test_prints_theorem_and_audited_epsilon():
  out = run(
      "--num_users=1000", "--theta=12",
      "--batch_size=32", "--max_length=1", "--runs_per_side=0",
      "--variants=correct,double_vote")
  assert out.returncode == 0, out.stderr
  rows = {line.split()[0]: line.split() for line in out.stdout.splitlines()
          if line.split() and line.split()[0] in ("correct", "double_vote")}
  theorem, exact = float(rows["correct"][5]), float(rows["correct"][7])
  assert exact <= theorem
  assert float(rows["double_vote"][7]) > float(rows["double_vote"][5])


def test_monte_carlo_columns():
  out = run(
      "--num_users=400", "--theta=4",
      "--batch_size=40", "--max_length=1", "--runs_per_side=50")
  assert out.returncode == 0, out.stderr
  row = [line for line in out.stdout.splitlines()
         if line.split()[:1] == ["correct"]][0].split()
  assert float(row[8]) <= float(row[5])  # MC lower bound <= theorem's eps
  assert "confidence" in out.stdout


def test_bad_input_is_one_error_line():
  for flags in (["--num_users=100", "--theta=3", "--batch_size=10"],
                ["--num_users=100", "--theta=4", "--batch_size=10",
                 "--variants=bogus"],
                ["--num_users=10000", "--epsilon=1"]):
    out = run(*flags)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize("flags, needle", [
    (["--num_users=x"], "--num_users"),
    (["--confidence=2", "--runs_per_side=10"], "--confidence"),
    (["--variants="], "--variants=: is empty"),
    (["--runs_per_side=0", "stray"], "unexpected arguments"),
    (["--epsilon=inf", "--runs_per_side=0"], "epsilon"),
])
def test_cli_convention_bad_flags(flags, needle):
  out = run(*flags)
  assert "Traceback" not in out.stderr
  assert out.returncode == 1, out.stderr
  lines = out.stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
  assert needle in lines[0]
  assert out.stdout == ""


def test_help_lists_its_flags():
  out = drivers.run_module("experiments.audit_privacy", "--help")
  assert out.returncode == 0, out.stderr
  for flag in ("--num_users", "--epsilon", "--theta", "--batch_size",
               "--variants", "--runs_per_side", "--confidence",
               "--adjacency", "--mechanism", "--audit_words"):
    assert f"  {flag}:" in out.stdout, flag
  assert "triehh-audit" in out.stdout


def test_ctrl_c_exits_130_without_a_traceback():
  proc = subprocess.Popen(
      drivers.interruptible(
          "experiments.audit_privacy", "--num_users=10000", "--epsilon=2",
          "--runs_per_side=1000000"), cwd=drivers.ROOT,
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
      env=dict(os.environ, PYTHONUNBUFFERED="1"))
  # The header is printed once the flags are checked; the runs follow.
  assert "lower bound" in proc.stdout.readline()
  assert "variant" in proc.stdout.readline()
  time.sleep(1)
  proc.send_signal(signal.SIGINT)
  _, err = proc.communicate(timeout=60)
  assert proc.returncode == 130, err
  assert "Traceback" not in err and err.strip() == "interrupted"


def _exact_eps(out: str) -> float:
  return float([line for line in out.splitlines()
                if line.split()[:1] == ["correct"]][0].split()[7])


def test_exact_loss_is_labelled_a_lower_bound_and_adjacency_defaults():
  code, out, err = drivers.run_in_process(audit_privacy, *SMALL)
  assert code == 0, err
  header = out.splitlines()[0]
  assert header.startswith("adjacency: replace. exact eps: exact loss (a "
                           "lower bound over the audited family of "
                           "populations, not a certificate)"), header
  _, replaced, _ = drivers.run_in_process(audit_privacy, *SMALL,
                                          "--adjacency=replace")
  _, added, _ = drivers.run_in_process(audit_privacy, *SMALL,
                                       "--adjacency=add")
  assert added.splitlines()[0].startswith("adjacency: add. ")
  assert _exact_eps(out) == _exact_eps(replaced) != _exact_eps(added)


def test_help_says_lower_bound_and_default_adjacency():
  out = drivers.run_module("experiments.audit_privacy", "--help")
  assert "lower bounds over that family" in out.stdout
  # --adjacency is shared with run_triehh (dp_accounting's relations); the
  # audit's help shows its own values, replace (its default) and add.
  flag = " ".join(out.stdout.split("  --adjacency: ")[1].split("\n  --")[0]
                 .split())
  assert flag.startswith("<replace|add>: The audited family")
  assert "'replace' (D' replaces one user's word" in flag
  assert "(default: 'replace')" in flag
  assert "REPLACE_ONE" not in out.stdout


def _tiny_sentiment140(tmp_path) -> str:
  """A Sentiment140 file (six quoted fields a row) of 400 users with one to
  three tweets each."""
  rng = np.random.default_rng(0)
  words = ["ab", "abc", "ac", "ba", "bad", "cab"]
  path = tmp_path / "s140.csv"
  with open(path, "w", newline="", encoding="latin-1") as f:
    writer = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for user in range(400):
      for tweet in range(int(rng.integers(1, 4))):
        text = " ".join(rng.choice(words, size=int(rng.integers(1, 4))))
        writer.writerow(["0", f"{user}{tweet}", "Mon Apr 06 22:19:45 PDT "
                         "2009", "NO_QUERY", f"user{user}", text])
  return str(path)


def test_several_words_rows_for_both_accountings(tmp_path):
  path = _tiny_sentiment140(tmp_path)
  code, out, err = drivers.run_in_process(
      audit_privacy, "--mechanism=several_words", f"--data_path={path}",
      "--theta=8", "--batch_size=36", "--max_length=3", "--audit_words=3")
  assert code == 0, err
  assert "lower bound over this family" in out and "as is (n = " in out
  rows = {line.split()[0]: line.split() for line in out.splitlines()
          if line.split()[:1] in (["ours"], ["paper's"])}
  ours, paper = rows["ours"], rows["paper's"]
  assert ours[2:4] == paper[3:5] == ["8", "36"]
  # Ours claims L * delta_1, the paper delta_1: 4 levels apart.
  assert float(ours[5]) == pytest.approx(4 * float(paper[6]), rel=1e-2)
  assert float(ours[5]) == float(ours[6]) == float(paper[7])
  assert 0 < float(ours[8]) <= float(ours[4])  # exact eps <= claim


@pytest.mark.parametrize("flags, needle", [
    (["--variants=theta_one"], "--variants is for --mechanism=one_word"),
    (["--data_path=/no/such/file.csv"], "no such file"),
    (["--theta=4"], "--theta needs --batch_size"),
])
def test_several_words_bad_flags_are_one_error_line(flags, needle):
  out = run("--mechanism=several_words", *flags)
  assert out.returncode == 1, out.stderr
  lines = out.stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
  assert needle in lines[0] and out.stdout == ""


@pytest.mark.parametrize("flag", ["--data_path=/no/such/file.csv",
                                  "--data_seed=5"])
def test_one_word_refuses_the_several_word_data_flags(flag):
  # They were ignored (exit 0): the one-word audit reads no data.
  out = run("--runs_per_side=0", flag)
  assert out.returncode == 1, out.stderr
  assert out.stderr.strip() == (
      f"error: {flag.split('=')[0]} is for --mechanism=several_words (the "
      "one-word audit draws its own tiny populations)")


def test_one_word_refuses_audit_words():
  # It was ignored (exit 0), where --data_seed is refused.
  out = run("--runs_per_side=0", "--audit_words=5")
  assert (out.returncode, out.stdout) == (1, ""), out.stderr
  assert out.stderr.strip() == (
      "error: --audit_words is for --mechanism=several_words (the one-word "
      "audit has one target word)")
