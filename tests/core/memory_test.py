"""Tests of triehh.core.memory: the available memory and the refusal."""

import os

import pytest

from triehh.core import memory


def test_available_bytes_reads_mem_available(tmp_path, monkeypatch):
  meminfo = tmp_path / "meminfo"
  meminfo.write_text("MemTotal:       24731708 kB\n"
                     "MemFree:         1000000 kB\n"
                     "MemAvailable:   21205312 kB\n")
  monkeypatch.setattr(memory, "_MEMINFO", str(meminfo))
  assert memory.available_bytes() == 21205312 * 1024


def test_available_bytes_falls_back_to_physical_memory(tmp_path, monkeypatch):
  monkeypatch.setattr(memory, "_MEMINFO", str(tmp_path / "none"))
  pages = {"SC_PHYS_PAGES": 1000, "SC_PAGE_SIZE": 4096}
  monkeypatch.setattr(os, "sysconf", pages.__getitem__)
  assert memory.available_bytes() == 4096 * 1000


def test_nothing_is_refused_when_memory_is_unknown(monkeypatch):
  monkeypatch.setattr(memory, "available_bytes", lambda: None)
  memory.check_fits("x=1", 10**30, "never shown")


@pytest.mark.parametrize("num_bytes,text", [
    (100, "100 bytes"), (1536, "1.5 KiB"), (80 * 10**9, "74.5 GiB"),
    (358 * 2**40, "358.0 TiB"), (3 * 2**60, "3.0 EiB")])
def test_format_bytes(num_bytes, text):
  assert memory.format_bytes(num_bytes) == text


def test_what_fits():
  assert memory.most_that_fit(16, 1000) == 62
  assert memory.most_that_fit(16, 1000, fixed=900) == 6
  assert memory.most_that_fit(16, 1000, fixed=2000) == 0
  with pytest.raises(ValueError, match="bytes_each"):
    memory.most_that_fit(0, 1000)


def test_refusal_names_the_size_the_estimate_and_the_hint(monkeypatch):
  monkeypatch.setattr(memory, "available_bytes", lambda: 2**30)
  memory.check_fits("n=10 users", 2**30, "unused")  # exactly fits
  seen = []

  def hint(available):
    seen.append(available)
    return f"use n <= {available // 8}"

  with pytest.raises(memory.InsufficientMemoryError) as err:
    memory.check_fits("n=10000000000 users", 8 * 10**10, hint)
  assert str(err.value) == (
      "n=10000000000 users would need about 74.5 GiB of memory, more than the "
      "1.0 GiB available; use n <= 134217728")
  assert seen == [2**30]
  # Reported like a bad argument, and as what it is.
  assert isinstance(err.value, ValueError)
  assert isinstance(err.value, MemoryError)
