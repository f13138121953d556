"""Tests of the package's front door: ``import triehh`` and its names."""

import ast
import importlib
import pathlib
import subprocess
import sys

import triehh

_INIT = pathlib.Path(triehh.__file__)


def test_every_public_name_is_the_object_of_its_module():
  assert sorted(triehh.__all__) == sorted(triehh._PUBLIC)
  for name, module in triehh._PUBLIC.items():
    assert getattr(triehh, name) is getattr(importlib.import_module(module),
                                            name), name
  assert set(triehh.__all__) <= set(dir(triehh))


def test_the_type_checking_imports_are_the_lazy_names():
  tree = ast.parse(_INIT.read_text())
  (block,) = [node for node in tree.body if isinstance(node, ast.If)]
  imported = {alias.name: node.module for node in block.body
              for alias in node.names}
  assert imported == triehh._PUBLIC


def test_an_unknown_name_is_an_attribute_error():
  try:
    triehh.no_such_name  # pylint: disable=pointless-statement
  except AttributeError as err:
    assert "no_such_name" in str(err)
  else:
    raise AssertionError("no AttributeError")


def test_the_audit_moved_out_of_the_library_and_says_where():
  try:
    triehh.audit  # pylint: disable=pointless-statement
  except AttributeError as err:
    assert str(err) == ("module 'triehh' has no attribute 'audit'; it moved "
                        "out of triehh: from checks.audit import audit")
  else:
    raise AssertionError("no AttributeError")
  assert "audit" not in triehh.__all__ and "audit" not in dir(triehh)


def test_the_moved_names_are_where_their_messages_say():
  from checks import audit  # pylint: disable=import-outside-toplevel
  assert triehh._MOVED == {"audit": "from checks.audit import audit"}
  assert callable(audit.audit)
  assert not set(triehh._MOVED) & set(triehh._PUBLIC)


def test_importing_the_package_loads_no_heavy_library():
  code = ("import sys, triehh; print(sorted(m for m in ('numpy', 'pandas', "
          "'scipy', 'tensorflow', 'pyarrow') if m in sys.modules))")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True, check=True, timeout=60,
                       cwd=_INIT.parent.parent)
  assert out.stdout.strip() == "[]", out.stdout
