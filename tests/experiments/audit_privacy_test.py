"""Tests of the experiments.audit_privacy driver."""

from tests.experiments import drivers


def test_prints_theorem_and_audited_epsilon():
  out = drivers.run_module(
      "experiments.audit_privacy", "--num_users=1000", "--theta=12",
      "--batch_size=32", "--max_length=1", "--num_runs=0",
      "--variants=correct,double_vote")
  assert out.returncode == 0, out.stderr
  rows = {line.split()[0]: line.split() for line in out.stdout.splitlines()
          if line.split() and line.split()[0] in ("correct", "double_vote")}
  theorem, exact = float(rows["correct"][5]), float(rows["correct"][7])
  assert exact <= theorem
  assert float(rows["double_vote"][7]) > float(rows["double_vote"][5])


def test_monte_carlo_columns():
  out = drivers.run_module(
      "experiments.audit_privacy", "--num_users=400", "--theta=4",
      "--batch_size=40", "--max_length=1", "--num_runs=50")
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
    out = drivers.run_module("experiments.audit_privacy", *flags)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert out.stdout == ""
