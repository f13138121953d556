"""Tests of the shipped table of Poisson calibrations
(triehh/theory/calibrations.json, triehh.theory.calibration_table): it is
current, covers its grid, holds the search's answers, and is used only when
the accountant confirms the privacy of an answer."""

import random

import pytest

from triehh.discovery import counts
from triehh.theory import calibration_store
from triehh.theory import calibration_table
from triehh.theory import poisson
from triehh.theory import poisson_calibration
from triehh.theory.adjacency import Adjacency

REGENERATE = "write it again: python -m tools.make_calibration_table"


@pytest.fixture(name="table_only")
def _table_only(monkeypatch):
  """No disk store, the shipped table read, nothing remembered in process."""
  monkeypatch.setattr(calibration_store, "_directory",
                      calibration_store._directory)  # restored afterwards
  monkeypatch.setattr(calibration_store, "_read_table",
                      calibration_store._read_table)
  calibration_store.configure(None)
  _forget()
  yield
  _forget()


def _forget():
  poisson_calibration._search.cache_clear()
  poisson_calibration.calibrate.cache_clear()
  if hasattr(calibration_store.table, "cache_clear"):  # not a test's stand-in
    calibration_store.table.cache_clear()


def _entries():
  return list(calibration_store.table().values())


def _target(entry):
  arguments = entry["arguments"]
  return (arguments["epsilon"], arguments["delta"],
          Adjacency.of(arguments["adjacency"]))


def test_the_table_is_current():
  # Its keys hold the accountant's source and the numpy and scipy versions:
  # after a change to either, no entry would ever be read.
  entries = _entries()
  assert entries, f"the shipped table is missing or unreadable; {REGENERATE}"
  stale = [e["arguments"] for e in entries
           if e["key"] != calibration_store.key(
               "poisson", e["arguments"], poisson_calibration.SOURCES)]
  assert not stale, (f"{len(stale)} of {len(entries)} entries were made by "
                     f"other code or versions; {REGENERATE}")


def test_the_table_covers_its_grid():
  got = sorted((_target(e) for e in _entries()), key=str)
  want = sorted(calibration_table.targets(), key=str)
  assert got == want
  for entry in _entries():
    assert entry["arguments"] == calibration_table.arguments(*_target(entry))


def test_the_grid_shares_the_budget_as_discover_does():
  assert calibration_table.COUNT_SHARE == counts.DEFAULT_COUNT_SHARE


@pytest.mark.parametrize("index", range(3))
def test_entries_are_the_searchs_answers(index):
  # Three entries drawn (seeded) from each adjacency: searched again, the
  # same key and theta, and the same rate to within the search's tolerance.
  # Not to the bit: the accountant's floating point rounds differently on
  # other CPUs (the shipped rates were seen to differ in their last bits),
  # and what matters, each rate private and the largest, is checked below.
  rng = random.Random(index)
  tolerance = poisson_calibration._RATE_TOLERANCE  # pylint: disable=protected-access
  for adjacency in calibration_table.ADJACENCIES:
    entry = rng.choice([e for e in _entries()
                        if _target(e)[2] == adjacency])
    searched = calibration_table.searched_entry(_target(entry))
    assert searched["key"] == entry["key"]
    assert searched["arguments"] == entry["arguments"]
    assert searched["answer"]["theta"] == entry["answer"]["theta"], entry
    assert searched["answer"]["rate"] == pytest.approx(
        entry["answer"]["rate"], rel=tolerance), entry


def test_every_rate_is_private_and_the_largest():
  # The accountant on the search's grid: each rate meets its target and a
  # rate 1 + tolerance times larger does not (checked here, once, since the
  # library checks only the first at run time). Every fourth entry: the
  # whole table takes 15 s.
  for entry in _entries()[::4]:
    epsilon, delta, adjacency = _target(entry)
    theta, rate = entry["answer"]["theta"], entry["answer"]["rate"]
    levels = entry["arguments"]["num_levels"]
    budget = poisson.trimming_budget(delta, levels)

    def got(r):
      return poisson.run_delta(r, theta, levels,
                               poisson_calibration.DEFAULT_DISCRETIZATION,
                               budget, epsilon, poisson.replaces(adjacency))

    assert got(rate) <= delta, entry
    assert got(rate * (1 + poisson_calibration._RATE_TOLERANCE)) > delta, entry


def _refuse_search(monkeypatch):
  def refuse(*args, **kwargs):
    raise AssertionError("searched although the table has the answer")
  monkeypatch.setattr(poisson_calibration, "search", refuse)


def test_a_target_of_the_grid_is_read_and_checked_once(table_only,
                                                       monkeypatch):
  _refuse_search(monkeypatch)
  checked = []
  real = poisson.run_delta
  monkeypatch.setattr(poisson, "run_delta",
                      lambda *a, **k: checked.append(a[0]) or real(*a, **k))
  found = poisson_calibration.calibrate(10_000, 11, 4.0, 1e-8)
  entry = calibration_store.shipped(
      "poisson", calibration_table.arguments(4.0, 1e-8,
                                             Adjacency.ADD_OR_REMOVE_ONE),
      poisson_calibration.SOURCES)
  assert (found.theta, found.rate) == (entry["theta"], entry["rate"])
  assert checked == [entry["rate"]]  # its privacy, once; not its maximality
  assert found.delta <= 1e-8 and found.epsilon <= 4.0


@pytest.mark.parametrize("change", ["too_high", "other_theta"])
def test_an_entry_the_accountant_refuses_is_searched(table_only, monkeypatch,
                                                     change):
  target = (4.0, 1e-8, Adjacency.ADD_OR_REMOVE_ONE)
  key = calibration_store.key("poisson", calibration_table.arguments(*target),
                              poisson_calibration.SOURCES)
  table = {k: dict(v) for k, v in calibration_store.table().items()}
  good = dict(table[key]["answer"])
  bad = dict(good)
  if change == "too_high":  # would miss the target: a privacy failure
    bad["rate"] *= 1.5
  else:  # a rate for theta + 5 is too high for theta
    bad["theta"] -= 5
  table[key]["answer"] = bad
  monkeypatch.setattr(calibration_store, "table", lambda: table)
  searched = []
  real = poisson_calibration.search
  monkeypatch.setattr(poisson_calibration, "search",
                      lambda *a, **k: searched.append(a) or real(*a, **k))
  found = poisson_calibration.calibrate(10_000, 11, 4.0, 1e-8)
  assert searched
  assert (found.theta, found.rate) == (good["theta"], good["rate"])


def test_the_table_can_be_left_unread(table_only, monkeypatch):
  calibration_store.configure(None, table=False)
  assert calibration_store.shipped(
      "poisson", calibration_table.arguments(4.0, 1e-8,
                                             Adjacency.ADD_OR_REMOVE_ONE),
      poisson_calibration.SOURCES) is None


def test_a_missing_or_broken_table_is_no_table(tmp_path, monkeypatch):
  for text in (None, "{not json", "[1, 2]", '{"entries": 3}',
               '{"entries": [1, {"key": 2}]}'):
    path = tmp_path / "calibrations.json"
    if text is not None:
      path.write_text(text)
    monkeypatch.setattr(calibration_store, "TABLE_PATH", str(path))
    calibration_store.table.cache_clear()
    assert calibration_store.table() == {}
  calibration_store.table.cache_clear()
