"""Smoke test of the theory_tables driver."""

from tests.experiments import drivers


def test_prints_table_1_and_minimum_populations():
  proc = drivers.run_module(
      "experiments.theory_tables", "--populations=1e4,1e6",
      "--frequencies=1e-2", "--epsilons=4", timeout=120)
  assert proc.returncode == 0, proc.stderr
  rows = proc.stdout.splitlines()
  assert any(r.split()[:5] == ["10,000", "|", "10", "1.8127", "|"] for r in rows)
  assert any(r.split()[:5] == ["1,000,000", "|", "12", "15.1058", "|"]
             for r in rows), rows
  assert any(r.strip().startswith("1e-02 |") for r in rows)
