"""Tests of triehh.core.validation: every refusal names its argument."""

import numpy as np
import pytest

from triehh.core import validation


@pytest.mark.parametrize("value,expected", [
    (3, 3), (np.int64(7), 7), (3.0, 3), (np.float32(2.0), 2)])
def test_check_whole_takes_whole_numbers(value, expected):
  assert validation.check_whole("count", value) == expected


@pytest.mark.parametrize("value,error,message", [
    (True, TypeError, "count must be an integer, got True"),
    ("3", TypeError, "count must be an integer, got '3'"),
    (1.5, ValueError, r"count must be a whole number >= 1, got 1.5"),
    (float("nan"), ValueError, "count must be a whole number"),
    (float("inf"), ValueError, "count must be a whole number"),
    (0, ValueError, "count must be >= 1, got 0"),
    (2**63, ValueError, r"count must be in \[1, 9223372036854775807\]"),
])
def test_check_whole_refuses(value, error, message):
  with pytest.raises(error, match=message):
    validation.check_whole("count", value, 1,
                           None if value != 2**63 else validation.INT64_MAX)


def test_check_real_refuses_what_is_not_a_number():
  assert validation.check_real("x", 3) == 3.0
  with pytest.raises(TypeError, match="x must be a number, got None"):
    validation.check_real("x", None)
  with pytest.raises(ValueError, match="x is too large"):
    validation.check_positive("x", 10**400)  # was an OverflowError


@pytest.mark.parametrize("value", [1, 1.0, 0.25, np.float32(0.5), 1e-300])
def test_check_rate_takes_rates_up_to_one(value):
  assert validation.check_rate("rate", value) == float(value)


@pytest.mark.parametrize("value,error,message", [
    (0, ValueError, r"rate must be in \(0, 1\], got rate=0.0"),
    (1.5, ValueError, r"rate must be in \(0, 1\], got rate=1.5"),
    (-0.1, ValueError, r"rate must be in \(0, 1\], got rate=-0.1"),
    (float("nan"), ValueError, r"rate must be in \(0, 1\], got rate=nan"),
    (True, TypeError, "rate must be a number, got True"),
    ("0.5", TypeError, "rate must be a number, got '0.5'"),
])
def test_check_rate_refuses(value, error, message):
  with pytest.raises(error, match=message):
    validation.check_rate("rate", value)


def test_rates_and_probabilities_say_what_they_are_when_told():
  with pytest.raises(ValueError, match=r"^q must be in \(0, 1\] \(the chance "
                     r"a user joins\), got q=2.0$"):
    validation.check_rate("q", 2, "the chance a user joins")
  with pytest.raises(ValueError, match=r"^share must be in \(0, 1\) \(a "
                     r"part\), got share=1.0$"):
    validation.check_probability("share", 1, "a part")
  with pytest.raises(ValueError, match=r"^share must be in \(0, 1\), got "
                     r"share=1.0$"):
    validation.check_probability("share", 1)


def test_check_choice_and_character():
  assert validation.check_choice("unknown", "drop", ("error", "drop")) == "drop"
  with pytest.raises(ValueError, match="unknown must be one of 'error', "
                     "'drop', got None"):
    validation.check_choice("unknown", None, ("error", "drop"))
  assert validation.check_character("end_symbol", "#") == "#"
  with pytest.raises(TypeError, match="end_symbol must be a one-character "
                     "string, got None"):
    validation.check_character("end_symbol", None)
  with pytest.raises(ValueError, match="exactly one character, got '##'"):
    validation.check_character("end_symbol", "##")


def test_check_indices_takes_whole_numbers_in_range():
  got = validation.check_indices("rows", [0, 4, 4.0, np.int8(2)], 5)
  assert got.dtype == np.intp and got.tolist() == [0, 4, 4, 2]
  assert validation.check_indices("rows", [], 5).size == 0


@pytest.mark.parametrize("values,error,message", [
    ([10**9], ValueError, r"rows holds index 1000000000, outside \[0, 5\)"),
    ([0, -1], ValueError, r"rows holds index -1, outside \[0, 5\)"),
    ([0.5], ValueError, "rows must hold whole-number indices, got 0.5"),
    ([True], TypeError, "rows must hold integer indices, got bool"),
    (["1"], TypeError, "rows must hold integer indices"),
    ([[1]], ValueError, r"rows must be a 1-D sequence .*shape \(1, 1\)"),
])
def test_check_indices_refuses(values, error, message):
  with pytest.raises(error, match=message):
    validation.check_indices("rows", values, 5)


def test_check_sequence():
  assert validation.check_sequence("schedule", [[1]]) == [[1]]
  validation.check_sequence("schedule", np.zeros((2, 3)))
  for bad in ("ab", {1, 2}, 3, iter([[1]])):
    with pytest.raises(TypeError, match="schedule must be a sequence"):
      validation.check_sequence("schedule", bad)


@pytest.mark.parametrize("values", [["0.5"], [True, False], [None, 1.0],
                                    np.array(["a"])])
def test_check_numbers_names_what_is_not_numbers(values):
  with pytest.raises(TypeError, match=r"^x must be numbers \(what x is\), "
                     "got an array of"):
    validation.check_numbers("x", values, "what x is")


def test_check_numbers_takes_numbers():
  validation.check_numbers("x", [0, 0.5, np.float32(1)])
  validation.check_numbers("x", np.zeros((2, 3)))


@pytest.mark.parametrize("seed, error, message", [
    (-1, ValueError, "seed must be >= 0, got -1"),
    (1.5, TypeError, "seed must be an integer, got 1.5"),
    (True, TypeError, "seed must be an integer, got True"),
    ("3", TypeError, "seed must be an integer"),
])
def test_check_seed_refuses(seed, error, message):
  with pytest.raises(error, match=message):
    validation.check_seed(seed)


def test_check_seed_takes_none_and_whole_numbers():
  assert validation.check_seed(None) is None
  assert validation.check_seed(np.int64(3)) == 3
  assert validation.check_seed(0) == 0
