"""Optional compiled extensions load where built, and are None elsewhere."""

from __future__ import annotations

from triehh.core import compiled_extensions


def test_an_extension_that_was_not_built_is_none():
  assert compiled_extensions.load("triehh.core._no_such_extension") is None


def test_a_module_that_exists_is_loaded():
  module = compiled_extensions.load("triehh.core.word_votes")
  assert module is not None and module.__name__ == "triehh.core.word_votes"
