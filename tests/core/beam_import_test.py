"""Tests of triehh.core.beam_import: Beam's BigQuery note dropped."""

import logging

from triehh.core import beam_import


def test_the_bigquery_note_alone_is_dropped_and_only_inside(caplog):
  note = ("apitools not found, and bigquery client libraries are not "
          "available despite the import not raising an ImportError.")
  with caplog.at_level(logging.WARNING):
    with beam_import.quiet():
      logging.warning(note)
      logging.warning("another warning")
    logging.warning(note)
  assert [r.getMessage() for r in caplog.records] == ["another warning", note]


def test_quietly_imports_the_module():
  assert beam_import.quietly("json").dumps([1]) == "[1]"
