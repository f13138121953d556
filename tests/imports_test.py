"""The project's import graph follows its layers, read statically with `ast`.

Folders are layers (LAYERS, lowest first). A module may import modules of
its own layer or of lower layers only, and no set of modules imports each
other in a cycle. Every import counts: at module level, inside functions
and methods, and `importlib.import_module("literal")`. Nothing is imported,
so the whole check takes a fraction of a second and sees imports that only
run when a function is called.

An import names the module it resolves to: `from triehh.core import trie`
imports `triehh.core.trie` (a submodule), `from triehh.core.trie import Trie`
imports `triehh.core.trie`, and `from triehh import discover` imports the
package `triehh` itself. Parent packages that Python executes on the way
(`triehh/__init__.py` for any `triehh.*` import) are not counted.

The module-level helpers (`read_imports`, `layer_violations`, `cycles`, ...)
are also used by tests/tools/bazel_targets_test.py.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import functools
import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The layers, lowest first. "x.*" is the module or package x and everything
# below it; "x" is the module x alone (here the package's __init__.py, the
# facade). A module may import its own layer and lower ones only.
# The report writers (reports) are above the library, which none of its
# modules imports, and below the benchmarks: benchmarks/iblt_benchmark.py
# imports reports.beyond.runs, and no report writer imports a benchmark or
# a driver. benchmarks < experiments: experiments/beyond.py runs
# benchmarks/iblt_benchmark.py, and no benchmark imports a driver.
LAYERS = (
    ("triehh.core.*",),
    ("triehh.secure.*",),
    ("triehh.theory.*",),
    ("triehh.engines.*",),
    ("triehh.discovery.*",),
    ("triehh.baselines.*",),
    ("triehh.mechanisms.*",),
    ("triehh.data.*",),
    ("triehh.runs.*",),
    ("triehh.beam.*",),
    ("triehh.api", "triehh"),
    ("reports.*", "checks.*"),
    ("benchmarks.*",),
    ("experiments.*",),
    ("tools.*",),
)

# The source folders the layers cover (the top-level names of LAYERS).
PACKAGES = ("triehh", "reports", "checks", "benchmarks", "experiments",
            "tools")

# Top-level names whose imports are the project's own (resolved and checked);
# every other import is a third-party or standard library one.
PROJECT_NAMES = PACKAGES + ("tests",)


@dataclasses.dataclass(frozen=True)
class Import:
  """One import of a project module, resolved to the module it loads."""

  source: str  # the importing module, e.g. "triehh.theory.policy"
  path: str  # its file, relative to the root, e.g. "triehh/theory/policy.py"
  line: int
  statement: str  # as written, e.g. "from triehh.engines import sampling"
  target: str  # the imported module, e.g. "triehh.engines.sampling"
  in_function: bool
  # A name `from target import name` takes that is neither a submodule nor
  # bound at the top level of target ("" if none): a typo, or an attribute
  # the module makes some other way.
  missing_name: str = ""
  resolved: bool = True  # False: target is no module of the project

  def where(self) -> str:
    return f"{self.path}:{self.line}"


def module_name(relative: pathlib.PurePath) -> str:
  """`triehh/core/trie.py` -> `triehh.core.trie`; `__init__.py` -> package."""
  parts = relative.with_suffix("").parts
  if parts[-1] == "__init__":
    parts = parts[:-1]
  return ".".join(parts)


def find_modules(root: pathlib.Path,
                 packages: tuple[str, ...]) -> dict[str, pathlib.Path]:
  """Module name -> file, for every .py file under the given folders."""
  modules = {}
  for package in packages:
    for path in sorted((root / package).rglob("*.py")):
      relative = path.relative_to(root)
      if "__pycache__" in relative.parts or any(
          part.startswith(".") for part in relative.parts):
        continue
      modules[module_name(relative)] = path
  return modules


def compiled_modules(root: pathlib.Path, packages: tuple[str, ...]) -> set[str]:
  """Modules built from Cython sources (`.pyx`, compiled when the package
  is installed): an import of one resolves. Their own imports are not read:
  a `.pyx` file is not Python, and the one there is (the fast engine's
  compiled draws) imports numpy alone."""
  return {module_name(path.relative_to(root).with_suffix(".py"))
          for package in packages
          for path in sorted((root / package).rglob("*.pyx"))}


def _namespace_packages(root: pathlib.Path, modules) -> set[str]:
  """Folders holding modules without an __init__.py (e.g. `tools`)."""
  found = set()
  for name in modules:
    parts = name.split(".")
    for i in range(1, len(parts)):
      prefix = ".".join(parts[:i])
      if prefix not in modules and (root / pathlib.Path(*parts[:i])).is_dir():
        found.add(prefix)
  return found


def _top_level_names(tree: ast.Module) -> set[str] | None:
  """Names bound at a module's top level; None if it cannot be known.

  Looks into if/try/with/for blocks but not into functions or classes. None
  when the module has a star import or a module `__getattr__`.
  """
  names = set()
  pending = list(tree.body)
  while pending:
    node = pending.pop()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                         ast.ClassDef)):
      if node.name == "__getattr__":
        return None
      names.add(node.name)
      continue
    if isinstance(node, (ast.Import, ast.ImportFrom)):
      for alias in node.names:
        if alias.name == "*":
          return None
        names.add(alias.asname or alias.name.split(".")[0])
      continue
    for child in ast.walk(node):
      if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
        names.add(child.id)
    for field in ("body", "orelse", "finalbody", "handlers"):
      pending.extend(getattr(node, field, None) or ())
  return names


def _is_import_call(node: ast.AST) -> bool:
  """Whether node is `import_module("x")` or `__import__("x")`, x absolute."""
  if not isinstance(node, ast.Call) or not node.args:
    return False
  function = node.func
  name = (function.attr if isinstance(function, ast.Attribute) else
          getattr(function, "id", None))
  first = node.args[0]
  return (name in ("import_module", "__import__")
          and isinstance(first, ast.Constant) and isinstance(first.value, str)
          and not first.value.startswith("."))


def _find_imports(tree: ast.Module, calls: bool) -> list[tuple[ast.AST, bool]]:
  """Every import statement of a module, and (if `calls`) every literal
  import call, each with whether it is inside a function."""
  found = []
  pending = [(tree, False)]
  while pending:
    node, in_function = pending.pop()
    for child in ast.iter_child_nodes(node):
      if isinstance(child, (ast.Import, ast.ImportFrom)):
        found.append((child, in_function))
      elif isinstance(child, ast.expr) and not calls:
        continue  # an expression holds no import statement
      else:
        if calls and _is_import_call(child):
          found.append((child, in_function))
        pending.append((child, in_function or isinstance(
            child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))))
  return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))


def _imports_in_strings(tree: ast.Module) -> list[tuple[ast.AST, bool]]:
  """Imports that a module runs in a child process, as far as can be seen:
  those of string constants that parse as Python code, and the module of
  `-m module` in a list, tuple or call's arguments."""
  found = []
  for node in ast.walk(tree):
    if (isinstance(node, ast.Constant) and isinstance(node.value, str)
        and "import" in node.value):
      try:
        code = ast.parse(textwrap.dedent(node.value))
      except SyntaxError:
        continue
      for child, _ in _find_imports(code, calls=True):
        child.lineno += node.lineno - 1
        found.append((child, True))
    items = (node.elts if isinstance(node, (ast.List, ast.Tuple)) else
             node.args if isinstance(node, ast.Call) else [])
    for flag, value in zip(items, items[1:]):
      if (isinstance(flag, ast.Constant) and flag.value == "-m"
          and isinstance(value, ast.Constant) and isinstance(value.value, str)):
        found.append((ast.Import(names=[ast.alias(name=value.value)],
                                 lineno=value.lineno, col_offset=0), True))
  return found


@functools.lru_cache(maxsize=None)
def _parse(path: str, mtime_ns: int, size: int) -> tuple[str, ast.Module]:
  """A file's text and syntax tree (cached while the file is unchanged)."""
  del mtime_ns, size  # The cache key.
  text = pathlib.Path(path).read_text()
  return text, ast.parse(text, filename=path)


def read_imports(root: pathlib.Path,
                 packages: tuple[str, ...],
                 project_names: tuple[str, ...] = PROJECT_NAMES,
                 code_in_strings: tuple[str, ...] = (),
                 ) -> tuple[dict[str, pathlib.Path], list[Import]]:
  """The modules under `packages` and their imports of project modules.

  Imports whose top-level name is not in `project_names` (third-party and
  standard library) are left out. The modules under the folders named in
  `code_in_strings` also import what they run in child processes (code in
  string constants, `-m module`, in modules that name `subprocess` or
  `sys.executable`), counted as imports in a function.
  """
  modules = find_modules(root, packages)
  known = (set(modules) | _namespace_packages(root, modules)
           | compiled_modules(root, packages))
  texts, trees, bound_names = {}, {}, {}

  def tree_of(name):
    if name not in trees:
      stat = modules[name].stat()
      texts[name], trees[name] = _parse(str(modules[name]), stat.st_mtime_ns,
                                        stat.st_size)
    return trees[name]

  def bound(name):
    if name not in bound_names:
      bound_names[name] = _top_level_names(tree_of(name))
    return bound_names[name]

  def project(name):
    return name.split(".")[0] in project_names

  imports = []
  for source, path in modules.items():
    relative = path.relative_to(root).as_posix()
    is_package = path.name == "__init__.py"
    tree = tree_of(source)
    calls = "import_module" in texts[source] or "__import__" in texts[source]
    found = _find_imports(tree, calls)
    if source.split(".")[0] in code_in_strings and any(
        word in texts[source] for word in ("subprocess", "sys.executable")):
      found += _imports_in_strings(tree)
    for node, in_function in found:
      statement = ast.unparse(node)

      def add(target, missing="", resolved=True, node=node,
              in_function=in_function, statement=statement):
        imports.append(Import(source, relative, node.lineno, statement,
                              target, in_function, missing, resolved))

      if isinstance(node, ast.Call):
        name = node.args[0].value
        if project(name):
          add(name, resolved=name in known)
      elif isinstance(node, ast.Import):
        for alias in node.names:
          if project(alias.name):
            add(alias.name, resolved=alias.name in known)
      else:
        if node.level:
          package = source.split(".") if is_package else source.split(".")[:-1]
          if node.level > 1:
            package = package[:-(node.level - 1)]
          base = ".".join(package + ([node.module] if node.module else []))
        else:
          base = node.module
        if not project(base):
          continue
        for alias in node.names:
          submodule = f"{base}.{alias.name}"
          if submodule in known:
            add(submodule)
          elif base not in known:
            add(base, resolved=False)
          elif alias.name == "*" or base not in modules:
            add(base)
          else:
            names = bound(base)
            missing = ("" if names is None or alias.name in names else
                       alias.name)
            add(base, missing=missing)
  return modules, imports


def layer_of(module: str, layers=LAYERS) -> list[int]:
  """The indexes of the layers that hold `module` (one, if all is well)."""
  found = []
  for index, patterns in enumerate(layers):
    for pattern in patterns:
      if pattern.endswith(".*"):
        package = pattern[:-2]
        hit = module == package or module.startswith(package + ".")
      else:
        hit = module == pattern
      if hit:
        found.append(index)
        break
  return found


def layer_name(index: int, layers=LAYERS) -> str:
  return " / ".join(p.removesuffix(".*") for p in layers[index])


def placement_errors(modules, layers=LAYERS) -> list[str]:
  """A message for each module in no layer, or in more than one."""
  errors = []
  for name in sorted(modules):
    found = layer_of(name, layers)
    if not found:
      errors.append(
          f"{name} is in no layer: place it in the folder of its layer, or "
          "add it to LAYERS in tests/imports_test.py")
    elif len(found) > 1:
      errors.append(f"{name} is in several layers: "
                    f"{[layer_name(i, layers) for i in found]}")
  return errors


def layer_violations(imports, layers=LAYERS) -> list[str]:
  """A message for each import of a module of a higher layer."""
  errors = []
  for imp in imports:
    source, target = layer_of(imp.source, layers), layer_of(imp.target, layers)
    if len(source) != 1:
      continue  # reported by placement_errors
    if len(target) != 1:
      errors.append(f"{imp.where()}: `{imp.statement}` imports {imp.target}, "
                    "which is in no layer")
    elif target[0] > source[0]:
      errors.append(
          f"{imp.where()}: `{imp.statement}`"
          f"{' (in a function)' if imp.in_function else ''} imports "
          f"{imp.target} of layer {layer_name(target[0], layers)} from layer "
          f"{layer_name(source[0], layers)}, which is lower")
  return errors


def graph_of(imports) -> dict[str, set[str]]:
  """Module -> the modules it imports (no self-imports)."""
  graph = collections.defaultdict(set)
  for imp in imports:
    if imp.target != imp.source:
      graph[imp.source].add(imp.target)
  return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
  """One cycle, as a path [a, b, ..., a], per strongly connected component.

  An empty list when the graph has no cycle.
  """
  # Tarjan's algorithm, iterative.
  index, low, on_stack, stack, components = {}, {}, set(), [], []
  nodes = sorted(set(graph) | {t for ts in graph.values() for t in ts})
  for start in nodes:
    if start in index:
      continue
    work = [(start, iter(sorted(graph.get(start, ()))))]
    index[start] = low[start] = len(index)
    stack.append(start)
    on_stack.add(start)
    while work:
      node, children = work[-1]
      child = next(children, None)
      if child is not None:
        if child not in index:
          index[child] = low[child] = len(index)
          stack.append(child)
          on_stack.add(child)
          work.append((child, iter(sorted(graph.get(child, ())))))
        elif child in on_stack:
          low[node] = min(low[node], index[child])
        continue
      work.pop()
      if work:
        low[work[-1][0]] = min(low[work[-1][0]], low[node])
      if low[node] == index[node]:
        component = []
        while True:
          member = stack.pop()
          on_stack.discard(member)
          component.append(member)
          if member == node:
            break
        if len(component) > 1:
          components.append(set(component))
  found = []
  for component in components:
    # The shortest way from the smallest member back to itself.
    start = min(component)
    paths = {start: [start]}
    queue = collections.deque([start])
    while queue:
      node = queue.popleft()
      for child in sorted(graph.get(node, ())):
        if child == start:
          queue.clear()
          found.append(paths[node] + [start])
          break
        if child in component and child not in paths:
          paths[child] = paths[node] + [child]
          queue.append(child)
  return sorted(found)


def describe_cycle(path: list[str], imports) -> str:
  """`a -> b -> a`, with where each step is imported."""
  where = {}
  for imp in imports:
    where.setdefault((imp.source, imp.target), imp.where())
  steps = [f"{a} -> {b} ({where.get((a, b), '?')})"
           for a, b in zip(path, path[1:])]
  return " -> ".join(path) + "\n    " + "\n    ".join(steps)


def resolution_errors(imports) -> list[str]:
  """A message for each import of no project module, or of an unbound name."""
  errors = []
  for imp in imports:
    if not imp.resolved:
      errors.append(f"{imp.where()}: `{imp.statement}`: there is no module "
                    f"{imp.target}")
    elif imp.missing_name:
      errors.append(f"{imp.where()}: `{imp.statement}`: {imp.target} has no "
                    f"submodule or top-level name {imp.missing_name!r}")
  return errors


@functools.cache
def project() -> tuple[dict[str, pathlib.Path], tuple[Import, ...]]:
  modules, imports = read_imports(ROOT, PACKAGES)
  return modules, tuple(imports)


@pytest.fixture(scope="module", name="tree")
def tree_fixture() -> tuple[dict[str, pathlib.Path], tuple[Import, ...]]:
  """The repository's modules and imports, read once: the tests using it
  share one worker (tests/conftest.py), so the tree is parsed once per run."""
  return project()


def _report(errors: list[str]) -> str:
  return f"{len(errors)} problem(s):\n" + "\n".join(errors)


# The project.


def test_the_tree_is_found(tree):
  modules, imports = tree
  assert {"triehh", "triehh.api", "triehh.core.population",
          "triehh.core.trie", "triehh.engines.registry",
          "triehh.engines.tff.engine", "experiments.run_triehh",
          "benchmarks.iblt_benchmark"} <= set(modules)
  edges = {(i.source, i.target) for i in imports}
  assert ("triehh", "triehh.api") in edges
  assert ("triehh.engines.registry", "triehh.core.trie") in edges
  # A function-level import (the IBLT benchmark imports TFF's runtime only
  # when it runs).
  assert any(i.source == "benchmarks.iblt_benchmark"
             and i.target == "triehh.engines.tff.runtime" and i.in_function
             for i in imports)


def test_every_module_is_in_exactly_one_layer(tree):
  modules, _ = tree
  errors = placement_errors(modules)
  assert not errors, _report(errors)


def test_no_import_goes_up_a_layer(tree):
  _, imports = tree
  errors = layer_violations(imports)
  assert not errors, _report(errors)


def test_no_import_cycle(tree):
  _, imports = tree
  found = cycles(graph_of(imports))
  assert not found, _report([describe_cycle(c, imports) for c in found])


def test_every_import_resolves(tree):
  _, imports = tree
  errors = resolution_errors(imports)
  assert not errors, _report(errors)


# The checks themselves, on small trees.


_SMALL_LAYERS = (("pkg.low.*",), ("pkg.high.*",), ("pkg",))


def _small(tmp_path, files: dict[str, str]):
  """Package `pkg` (layers pkg.low < pkg.high < pkg) with `files` added."""
  tree = {
      "pkg/__init__.py": "",
      "pkg/low/__init__.py": "",
      "pkg/low/base.py": "",
      "pkg/high/__init__.py": "",
      "pkg/high/top.py": "from pkg.low import base\n",
      **files,
  }
  for name, text in tree.items():
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
  return read_imports(tmp_path, ("pkg",), project_names=("pkg",))


@pytest.mark.parametrize("text", [
    "from pkg.high import top\n",
    "import pkg.high.top\n",
    "def f():\n  from pkg.high import top\n",
    "class C:\n  def m(self):\n    import pkg.high.top as t\n",
    "import importlib\ndef f():\n  importlib.import_module('pkg.high.top')\n",
    "from ..high import top\n",
    "from pkg.high.top import anything\n",
])
def test_an_upward_import_is_caught(tmp_path, text):
  modules, imports = _small(tmp_path, {"pkg/low/base.py": text})
  assert not placement_errors(modules, _SMALL_LAYERS)
  errors = layer_violations(imports, _SMALL_LAYERS)
  assert len(errors) == 1, errors
  assert errors[0].startswith("pkg/low/base.py:")
  assert "pkg.high.top of layer pkg.high from layer pkg.low" in errors[0]


def test_downward_and_sideways_imports_pass(tmp_path):
  modules, imports = _small(tmp_path, {
      "pkg/low/base.py": "from pkg.low import other\n",
      "pkg/low/other.py": "",
      "pkg/high/side.py": "from pkg.high import top\n",
  })
  assert {(i.source, i.target) for i in imports} == {
      ("pkg.high.top", "pkg.low.base"), ("pkg.low.base", "pkg.low.other"),
      ("pkg.high.side", "pkg.high.top")}
  assert not layer_violations(imports, _SMALL_LAYERS)
  assert not placement_errors(modules, _SMALL_LAYERS)


def test_a_module_outside_the_layers_is_caught(tmp_path):
  modules, _ = _small(tmp_path, {"pkg/extra.py": ""})
  errors = placement_errors(modules, _SMALL_LAYERS)
  assert len(errors) == 1 and errors[0].startswith("pkg.extra is in no layer")


def test_a_module_in_two_layers_is_caught(tmp_path):
  modules, _ = _small(tmp_path, {})
  errors = placement_errors(modules, _SMALL_LAYERS + (("pkg.low.base",),))
  assert errors == ["pkg.low.base is in several layers: "
                    "['pkg.low', 'pkg.low.base']"]


@pytest.mark.parametrize("text", [
    "from pkg.low import other\n",
    "def f():\n  from pkg.low import other\n",
])
def test_a_two_cycle_is_caught(tmp_path, text):
  _, imports = _small(tmp_path, {"pkg/low/base.py": text,
                                 "pkg/low/other.py": "import pkg.low.base\n"})
  found = cycles(graph_of(imports))
  assert found == [["pkg.low.base", "pkg.low.other", "pkg.low.base"]]
  assert "pkg/low/other.py:1" in describe_cycle(found[0], imports)


def test_a_longer_cycle_is_reported_as_a_path():
  graph = {"a": {"b"}, "b": {"c", "x"}, "c": {"a"}, "x": set(), "y": {"y"}}
  assert cycles(graph) == [["a", "b", "c", "a"]]
  assert not cycles({"a": {"b"}, "b": {"c"}, "c": set()})


@pytest.mark.parametrize("path, text, target", [
    ("pkg/low/base.py", "from . import other\n", "pkg.low.other"),
    ("pkg/low/base.py", "from .other import name\n", "pkg.low.other"),
    ("pkg/low/base.py", "from .. import low\n", "pkg.low"),
    ("pkg/low/__init__.py", "from . import other\n", "pkg.low.other"),
    ("pkg/low/__init__.py", "from .other import name\n", "pkg.low.other"),
    ("pkg/high/top.py", "from ..low.other import name\n", "pkg.low.other"),
])
def test_a_relative_import_is_resolved(tmp_path, path, text, target):
  _, imports = _small(tmp_path, {path: text, "pkg/low/other.py": "name = 1\n"})
  got = [i for i in imports if i.path == path]
  assert [i.target for i in got] == [target]
  assert not resolution_errors(got)


def test_from_package_import_is_the_submodule_or_the_package(tmp_path):
  _, imports = _small(tmp_path, {
      "pkg/low/__init__.py": "NAME = 1\n",
      "pkg/high/top.py": "from pkg.low import base, NAME\n",
  })
  assert sorted(i.target for i in imports) == ["pkg.low", "pkg.low.base"]
  assert not resolution_errors(imports)


@pytest.mark.parametrize("text, problem", [
    ("import pkg.low.bsae\n", "there is no module pkg.low.bsae"),
    ("from pkg.lwo import base\n", "there is no module pkg.lwo"),
    ("from pkg.low.base import nmae\n",
     "no submodule or top-level name 'nmae'"),
    ("def f():\n  from pkg.low import bsae\n",
     "no submodule or top-level name 'bsae'"),
    ("import importlib\nimportlib.import_module('pkg.nope')\n",
     "there is no module pkg.nope"),
])
def test_a_typo_in_an_import_is_caught(tmp_path, text, problem):
  _, imports = _small(tmp_path, {"pkg/low/base.py": "name = 1\n",
                                 "pkg/high/top.py": text})
  errors = resolution_errors(imports)
  assert len(errors) == 1 and problem in errors[0], errors
  assert errors[0].startswith("pkg/high/top.py:")


def test_a_module_built_from_cython_resolves(tmp_path):
  _, imports = _small(tmp_path, {
      "pkg/low/_fast.pyx": "def f(int x):\n  return x\n",
      "pkg/high/top.py": ("import importlib\n"
                          "importlib.import_module('pkg.low._fast')\n"
                          "importlib.import_module('pkg.low._slow')\n"),
  })
  errors = resolution_errors(imports)
  assert len(errors) == 1 and "there is no module pkg.low._slow" in errors[0]


def test_names_bound_in_blocks_count_and_getattr_accepts_all(tmp_path):
  _, imports = _small(tmp_path, {
      "pkg/low/base.py": ("try:\n  import json as fast\nexcept ImportError:\n"
                          "  fast = None\nif True:\n  def g(): pass\n"),
      "pkg/low/lazy.py": "def __getattr__(name):\n  return name\n",
      "pkg/high/top.py": ("from pkg.low.base import fast, g\n"
                          "from pkg.low.lazy import whatever\n"),
  })
  assert not resolution_errors(imports)


def test_code_run_in_a_child_process_counts_when_asked(tmp_path):
  text = ('import subprocess, sys\n'
          'CODE = """\nimport os\nfrom pkg.low import base\n"""\n'
          'subprocess.run([sys.executable, "-m", "pkg.high.top"])\n')
  _small(tmp_path, {"pkg/low/other.py": text})
  _, imports = read_imports(tmp_path, ("pkg",), project_names=("pkg",),
                            code_in_strings=("pkg",))
  got = [(i.where(), i.target) for i in imports if i.source == "pkg.low.other"]
  assert got == [("pkg/low/other.py:4", "pkg.low.base"),
                 ("pkg/low/other.py:6", "pkg.high.top")]
  _, imports = read_imports(tmp_path, ("pkg",), project_names=("pkg",))
  assert not [i for i in imports if i.source == "pkg.low.other"]


def test_third_party_imports_are_left_out(tmp_path):
  _, imports = _small(tmp_path, {"pkg/low/base.py": (
      "import numpy\nfrom os import path\nimport importlib\n"
      "importlib.import_module('json')\n")})
  assert [i.source for i in imports] == ["pkg.high.top"]
