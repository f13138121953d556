"""Tests of triehh.core.lazy_names: public names imported on first use."""

import sys
import types

import pytest

from triehh.core import lazy_names


def test_a_name_is_imported_on_first_use_then_kept(monkeypatch):
  module = types.ModuleType("fake_defining_module")
  module.thing = object()
  monkeypatch.setitem(sys.modules, "fake_defining_module", module)
  namespace = {"__name__": "pkg"}
  getattr_, dir_ = lazy_names.attribute_functions(
      "pkg", namespace, {"thing": "fake_defining_module"})
  assert "thing" not in namespace and "thing" in dir_()
  assert getattr_("thing") is module.thing
  assert namespace["thing"] is module.thing  # the next read is a plain one
  with pytest.raises(AttributeError, match="module 'pkg' has no attribute "
                                           "'other'"):
    getattr_("other")
