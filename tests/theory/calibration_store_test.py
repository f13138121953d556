"""Tests of triehh.theory.calibration_store and its use by the Poisson
calibration: a stored answer is used only when the accountant confirms it."""

import json
import os

import pytest

from triehh.theory import calibration_store
from triehh.theory import poisson
from triehh.theory import poisson_calibration

# A small calibration (three levels, a coarse grid): a fraction of a second.
ARGS = dict(n=10_000, num_levels=3, epsilon=4.0, delta=1e-4)
FAST = dict(discretization=1e-2)


@pytest.fixture(name="store")
def _store(tmp_path, monkeypatch):
  """A fresh store in tmp_path, and no calibration remembered in process."""
  monkeypatch.setattr(calibration_store, "_directory",
                      calibration_store._directory)  # restored afterwards
  calibration_store.configure(str(tmp_path))
  _forget_in_process()
  yield os.path.join(str(tmp_path), "calibrations")
  _forget_in_process()


def _forget_in_process():
  poisson_calibration._search.cache_clear()
  poisson_calibration.calibrate.cache_clear()


def _no_search(monkeypatch):
  def refuse(*args, **kwargs):
    raise AssertionError("searched although a good answer was stored")
  monkeypatch.setattr(poisson_calibration, "max_rate", refuse)


def _entry(store):
  (name,) = os.listdir(store)
  return os.path.join(store, name)


def test_a_stored_search_is_read_back_with_the_same_result(store,
                                                           monkeypatch):
  first = poisson_calibration.calibrate(**ARGS, **FAST)
  assert os.path.basename(_entry(store)).startswith("poisson-")
  _forget_in_process()
  _no_search(monkeypatch)
  assert poisson_calibration.calibrate(**ARGS, **FAST) == first
  # The search does not depend on n: another n reads the same entry.
  other = poisson_calibration.calibrate(**{**ARGS, "n": 20_000}, **FAST)
  assert (other.theta, other.rate) == (first.theta, first.rate)
  assert other.expected_batch_size == 2 * first.expected_batch_size


def test_the_key_holds_every_argument_and_the_code(store, monkeypatch):
  poisson_calibration.calibrate(**ARGS, **FAST)
  poisson_calibration.calibrate(**{**ARGS, "epsilon": 2.0}, **FAST)
  poisson_calibration.calibrate(**ARGS, theta=5, **FAST)
  assert len(os.listdir(store)) == 3
  # Changed code: the entries are not read.
  _forget_in_process()
  monkeypatch.setattr(calibration_store.files, "source_digest",
                      lambda path: "new")
  searched = []
  real = poisson_calibration.max_rate
  monkeypatch.setattr(poisson_calibration, "max_rate",
                      lambda *a, **k: searched.append(1) or real(*a, **k))
  poisson_calibration.calibrate(**ARGS, **FAST)
  assert searched and len(os.listdir(store)) == 4


@pytest.mark.parametrize("change", ["too_high", "too_low", "theta", "text",
                                    "types", "arguments", "huge_theta"])
def test_a_wrong_entry_is_searched_again(store, change):
  first = poisson_calibration.calibrate(**ARGS, **FAST)
  path = _entry(store)
  with open(path, encoding="utf-8") as f:
    entry = json.load(f)
  answer = entry["answer"]
  if change == "too_high":    # misses the target: a privacy failure
    answer["rate"] *= 1.5
  elif change == "too_low":   # private, but not the largest rate
    answer["rate"] *= 0.9
  elif change == "theta":
    answer["theta"] += 1
  elif change == "huge_theta":  # its check alone would allocate 26 GiB
    answer["theta"], answer["rate"] = 10**8, 0.5
  elif change == "types":
    answer["theta"] = str(answer["theta"])
  elif change == "arguments":
    entry["arguments"]["epsilon"] = 8.0
  with open(path, "w", encoding="utf-8") as f:
    f.write("{not json" if change == "text" else json.dumps(entry))
  _forget_in_process()
  again = poisson_calibration.calibrate(**ARGS, **FAST)
  assert again == first
  with open(path, encoding="utf-8") as f:  # the good answer replaced it
    assert json.load(f)["answer"]["rate"] == again.rate


def test_a_stored_answer_for_another_theta_is_not_used(store):
  poisson_calibration.calibrate(**ARGS, theta=5, **FAST)
  path = _entry(store)
  with open(path, encoding="utf-8") as f:
    entry = json.load(f)
  entry["answer"]["theta"] = 6
  with open(path, "w", encoding="utf-8") as f:
    json.dump(entry, f)
  _forget_in_process()
  assert poisson_calibration.calibrate(**ARGS, theta=5, **FAST).theta == 5


def test_off_or_unwritable_store_changes_nothing(tmp_path, store):
  first = poisson_calibration.calibrate(**ARGS, **FAST)
  calibration_store.configure(None)
  _forget_in_process()
  assert calibration_store.directory() is None
  assert poisson_calibration.calibrate(**ARGS, **FAST) == first
  blocker = tmp_path / "a_file"
  blocker.write_text("")
  calibration_store.configure(str(blocker))  # cannot hold a folder
  _forget_in_process()
  assert poisson_calibration.calibrate(**ARGS, **FAST) == first


def test_the_default_store_is_in_the_cache_directory(monkeypatch):
  monkeypatch.setattr(calibration_store, "_directory",
                      calibration_store._UNSET)
  monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
  assert calibration_store.directory() == os.path.join(
      "/somewhere", "triehh", "calibrations")


def test_the_key_covers_all_the_code_that_searches():
  # The key holds the sources of the search and of the accountant modules it
  # calls (poisson_calibration.SOURCES): none of them may use code of the
  # project from another file (validation and limits check arguments,
  # memory refuses sizes that would not fit, the store stores, progress
  # says a slow search on stderr). A new import here must join the key, or
  # this list.
  import ast  # pylint: disable=g-import-not-at-top
  import importlib  # pylint: disable=g-import-not-at-top
  sources = {os.path.abspath(path) for path in poisson_calibration.SOURCES}
  outside = set()
  for path in sources:
    with open(path, encoding="utf-8") as f:
      tree = ast.parse(f.read())
    for node in ast.walk(tree):
      if isinstance(node, ast.ImportFrom) and node.module.startswith("triehh"):
        names = [f"{node.module}.{a.name}" for a in node.names]
      elif isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name.startswith("triehh")]
      else:
        continue
      for name in names:
        try:
          module = importlib.import_module(name)
        except ImportError:  # a class imported from a module
          module = importlib.import_module(name.rsplit(".", 1)[0])
        if os.path.abspath(module.__file__) not in sources:
          outside.add(module.__name__)
  assert outside == {"triehh.core.validation", "triehh.core.progress",
                     "triehh.core.memory", "triehh.theory.limits",
                     "triehh.theory.calibration_store"}


@pytest.mark.parametrize("kwargs, match", [
    (dict(cache_dir=5), "cache_dir must be a directory path or None"),
    (dict(cache_dir=None, table="no"), "table must be True or False")])
def test_configure_names_a_bad_argument(kwargs, match):
  with pytest.raises(TypeError, match=match):
    calibration_store.configure(**kwargs)
