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


def test_a_moved_name_is_an_attribute_error_saying_where_it_is_now():
  getattr_, dir_ = lazy_names.attribute_functions(
      "pkg", {}, {}, moved={"gone": "from other.place import gone"})
  with pytest.raises(AttributeError) as excinfo:
    getattr_("gone")
  assert str(excinfo.value) == (
      "module 'pkg' has no attribute 'gone'; it moved out of pkg: "
      "from other.place import gone")
  assert "gone" not in dir_()
  with pytest.raises(AttributeError, match=r"^module 'pkg' has no attribute "
                                           r"'other'$"):
    getattr_("other")
