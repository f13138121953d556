"""The Bazel targets match the imports of the code (no bazel needed).

The BUILD files are read as Starlark, which parses as Python: their top-level
assignments, rule calls, list comprehensions and `glob`s are evaluated here,
so the targets checked are those Bazel would make. The imports come from
tests/imports_test.py (every import, in functions too). Checked:

- every tests/**/*_test.py file has its py_test target;
- a test target provides, in its srcs or direct deps, every project module
  its test module imports, and those that the test helpers it imports and
  the conftest.py files it runs under import (the `_DEPS` entries of
  tests/BUILD; the failure message gives the entries to write);
- a py_library of triehh/, reports/, checks/, benchmarks/ or experiments/
  provides, in its srcs or direct deps, every module its modules import;
- neither kind of target depends on a library none of its modules imports;
- every module of those folders is in exactly one py_library, every dep
  names a target, and the libraries' deps have no cycle (Bazel refuses one).
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import functools
import pathlib
import re

import pytest

from tests import imports_test

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
# Folders whose BUILD files are read (with their subfolders), besides the root.
BUILD_FOLDERS = ("triehh", "reports", "checks", "benchmarks", "experiments",
                 "tests", "tools")
# Folders whose modules are in py_libraries that must provide their imports
# (with their subfolders: triehh/ holds one library per layer).
LIBRARY_FOLDERS = ("triehh", "reports", "checks", "benchmarks", "experiments")
# Folders whose modules are imported (and read for their imports).
SOURCE_FOLDERS = imports_test.PACKAGES + ("tests",)
BUILD_NAMES = ("BUILD.bazel", "BUILD")
TESTS = "tests"


@dataclasses.dataclass
class Target:
  """One rule instance of a BUILD file."""

  rule: str  # e.g. "py_library"
  build: str  # its BUILD file, e.g. "triehh/core/BUILD"
  package: str  # e.g. "triehh/core" ("" for the root)
  name: str
  line: int
  srcs: list[str]  # files, relative to the root
  deps: list[str]  # canonical labels, "//package:name"

  @property
  def label(self) -> str:
    return f"//{self.package}:{self.name}"

  @property
  def short_label(self) -> str:
    return _short(self.label)

  def where(self) -> str:
    return f"{self.build}:{self.line}"


def build_file(root: pathlib.Path, package: str) -> str:
  for name in BUILD_NAMES:
    if (root / package / name).is_file():
      return (pathlib.PurePosixPath(package) / name).as_posix()
  raise FileNotFoundError(package)


def canonical(label: str, package: str) -> str:
  """`:x`, `x`, `//a/b`, `//a/b:x` -> `//a/b:x` (relative to `package`)."""
  if label.startswith("@"):
    return label
  if label.startswith("//"):
    path, _, name = label[2:].partition(":")
    return f"//{path}:{name or path.rsplit('/', 1)[-1]}"
  return f"//{package}:{label.removeprefix(':')}"


# Globs.


def _glob_regex(pattern: str) -> re.Pattern[str]:
  regex = []
  parts = pattern.split("/")
  for i, part in enumerate(parts):
    last = i == len(parts) - 1
    if part == "**":
      regex.append(".*" if last else "(?:.*/)?")
      continue
    regex.append("".join("[^/]*" if c == "*" else "[^/]" if c == "?" else
                         re.escape(c) for c in part))
    if not last:
      regex.append("/")
  return re.compile("".join(regex) + r"\Z")


def _is_package(root: pathlib.Path, folder: pathlib.Path) -> bool:
  return any((root / folder / name).is_file() for name in BUILD_NAMES)


def glob(root: pathlib.Path, package: str, include, exclude=()) -> list[str]:
  """Bazel's glob: files of `package` (not of its subpackages) matching."""
  base = root / package

  def walk(folder: pathlib.Path, parts: list[str]):
    part, rest = parts[0], parts[1:]
    if part == "**":
      if rest:
        yield from walk(folder, rest)
      else:
        yield from (p for p in folder.iterdir() if p.is_file())
      for sub in folder.iterdir():
        if sub.is_dir() and not _is_package(root, sub.relative_to(root)):
          yield from walk(sub, parts)
      return
    if any(c in part for c in "*?["):
      regex = _glob_regex(part)
      entries = [p for p in folder.iterdir() if regex.match(p.name)]
    else:
      entries = [folder / part] if (folder / part).exists() else []
    for entry in entries:
      if not rest and entry.is_file():
        yield entry
      elif rest and entry.is_dir() and not _is_package(
          root, entry.relative_to(root)):
        yield from walk(entry, rest)

  found = {p.relative_to(base).as_posix()
           for pattern in include for p in walk(base, pattern.split("/"))}
  excluded = [_glob_regex(p) for p in exclude]
  return sorted(f for f in found if not any(r.match(f) for r in excluded))


# BUILD files.


class _Evaluator:
  """Evaluates the Starlark subset the project's BUILD files use."""

  RULES_WITHOUT_TARGETS = ("package", "licenses", "exports_files", "load",
                           "register_toolchains", "workspace")

  def __init__(self, root: pathlib.Path, package: str):
    self.root, self.package = root, package
    self.build = build_file(root, package)
    self.targets: list[Target] = []
    self.env: dict[str, object] = {}

  def run(self, text: str, filename: str) -> None:
    tree = ast.parse(text, filename=filename)
    for node in tree.body:
      if isinstance(node, ast.Assign):
        value = self.eval(node.value, {})
        for target in node.targets:
          self.env[target.id] = value
      elif isinstance(node, ast.Expr):
        self.eval(node.value, {})
      else:
        raise ValueError(f"{filename}:{node.lineno}: cannot read "
                         f"{type(node).__name__}")

  def eval(self, node: ast.AST, local: dict[str, object]):
    if isinstance(node, ast.Constant):
      return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
      return [self.eval(e, local) for e in node.elts]
    if isinstance(node, ast.Dict):
      return {self.eval(k, local): self.eval(v, local)
              for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Name):
      if node.id in local:
        return local[node.id]
      return self.env[node.id]
    if isinstance(node, ast.BinOp):
      left, right = self.eval(node.left, local), self.eval(node.right, local)
      if isinstance(node.op, ast.Add):
        return left + right
      if isinstance(node.op, ast.Mod):
        return left % right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
      return -self.eval(node.operand, local)
    if isinstance(node, ast.Subscript):
      value = self.eval(node.value, local)
      if isinstance(node.slice, ast.Slice):
        part = [None if p is None else self.eval(p, local)
                for p in (node.slice.lower, node.slice.upper, node.slice.step)]
        return value[slice(*part)]
      return value[self.eval(node.slice, local)]
    if isinstance(node, ast.ListComp) and len(node.generators) == 1:
      generator = node.generators[0]
      results = []
      for item in self.eval(generator.iter, local):
        inner = dict(local, **{generator.target.id: item})
        if all(self.eval(c, inner) for c in generator.ifs):
          results.append(self.eval(node.elt, inner))
      return results
    if isinstance(node, ast.Call):
      return self.call(node, local)
    raise ValueError(f"line {node.lineno}: cannot evaluate {ast.unparse(node)}")

  def call(self, node: ast.Call, local):
    args = [self.eval(a, local) for a in node.args]
    kwargs = {k.arg: self.eval(k.value, local) for k in node.keywords}
    if isinstance(node.func, ast.Attribute):
      return getattr(self.eval(node.func.value, local), node.func.attr)(
          *args, **kwargs)
    function = node.func.id
    if function == "len":
      return len(*args)
    if function == "glob":
      return glob(self.root, self.package, args[0] if args else
                  kwargs["include"], kwargs.get("exclude", ()))
    if function in self.RULES_WITHOUT_TARGETS:
      return None
    if "name" not in kwargs:
      raise ValueError(f"line {node.lineno}: cannot evaluate {function}()")
    srcs = []
    for src in kwargs.get("srcs", ()):
      label = canonical(src, self.package)
      package, _, name = label[2:].partition(":")
      srcs.append((pathlib.PurePosixPath(package) / name).as_posix())
    self.targets.append(Target(
        function, self.build, self.package, kwargs["name"], node.lineno, srcs,
        [canonical(d, self.package) for d in kwargs.get("deps", ())]))
    return None


def read_builds(root: pathlib.Path,
                folders: tuple[str, ...] = BUILD_FOLDERS) -> list[Target]:
  """The targets of the root's BUILD and of every BUILD under `folders`."""
  packages = [""] if _is_package(root, pathlib.Path(".")) else []
  for folder in folders:
    for name in BUILD_NAMES:
      packages += [p.parent.relative_to(root).as_posix()
                   for p in (root / folder).rglob(name)]
  targets = []
  for package in sorted(set(packages)):
    path = root / build_file(root, package)
    evaluator = _Evaluator(root, package)
    evaluator.run(path.read_text(), str(path))
    targets += evaluator.targets
  return targets


# The checks.


@dataclasses.dataclass
class Project:
  """What the checks compare: targets, module files and imports."""

  targets: dict[str, Target]  # by canonical label
  files: dict[str, str]  # module name -> file relative to the root
  imports: dict[str, list[imports_test.Import]]  # by importing module
  library_folders: tuple[str, ...]

  @functools.cached_property
  def library_of_file(self) -> dict[str, list[Target]]:
    """File -> the py_libraries that hold it."""
    found = collections.defaultdict(list)
    for target in self.targets.values():
      if target.rule == "py_library":
        for src in target.srcs:
          found[src].append(target)
    return found

  def is_project_library(self, label: str) -> bool:
    target = self.targets.get(label)
    return (target is not None and target.rule == "py_library"
            and bool(target.srcs) and all(
                s.split("/")[0] in self.library_folders for s in target.srcs))

  def provided(self, target: Target) -> dict[str, str]:
    """File -> the label that provides it: the target or a direct dep."""
    found = {src: target.label for src in target.srcs}
    for dep in target.deps:
      if dep in self.targets:
        for src in self.targets[dep].srcs:
          found.setdefault(src, dep)
    return found


def read_project(root: pathlib.Path,
                 build_folders: tuple[str, ...] = BUILD_FOLDERS,
                 source_folders: tuple[str, ...] = SOURCE_FOLDERS,
                 library_folders: tuple[str, ...] = LIBRARY_FOLDERS
                 ) -> Project:
  targets = {t.label: t for t in read_builds(root, build_folders)}
  modules, imports = imports_test.read_imports(
      root, source_folders, project_names=source_folders,
      code_in_strings=(TESTS,))
  by_source = collections.defaultdict(list)
  for imp in imports:
    by_source[imp.source].append(imp)
  files = {name: path.relative_to(root).as_posix()
           for name, path in modules.items()}
  return Project(targets, files, by_source, library_folders)


def _module_of(project: Project) -> dict[str, str]:
  return {file: name for name, file in project.files.items()}


def modules_of_test(project: Project, test_file: str) -> list[str]:
  """The modules a test target runs: the test module, the conftest.py files
  above it, and the test-folder modules these import, transitively."""
  module_of = _module_of(project)
  start = [module_of[test_file]]
  folder = pathlib.PurePosixPath(test_file).parent
  while folder.parts:
    conftest = (folder / "conftest.py").as_posix()
    if conftest in module_of:
      start.append(module_of[conftest])
    folder = folder.parent
  if "conftest.py" in module_of:
    start.append(module_of["conftest.py"])
  seen, pending = set(start), list(start)
  while pending:
    for imp in project.imports.get(pending.pop(), ()):
      if imp.target.split(".")[0] == TESTS and imp.target in project.files:
        if imp.target not in seen:
          seen.add(imp.target)
          pending.append(imp.target)
  return sorted(seen)


def dependency_errors(project: Project, target: Target,
                      modules: list[str]) -> tuple[list[str], list[str]]:
  """Imports of `modules` that `target` lacks, and its needless library deps.

  Returns the messages and the library labels the imports need.
  """
  provided = project.provided(target)
  needed, errors = set(), []
  for module in modules:
    for imp in project.imports.get(module, ()):
      file = project.files.get(imp.target)
      if file is None:
        continue  # a namespace package, or a typo (tests/imports_test.py)
      owners = [t.label for t in project.library_of_file.get(file, ())
                if project.is_project_library(t.label)]
      needed.update(o for o in owners if o != target.label)
      if file in provided:
        continue
      if owners:
        fix = f"add {' or '.join(_short(o) for o in owners)} to its deps"
      elif file.split("/")[0] == TESTS:
        fix = (f"add {file} to its srcs (tests/BUILD, "
               "_IMPORTED_TEST_MODULES), or to a library it depends on")
      else:
        fix = f"no library holds {file}"
      errors.append(f"{imp.where()}: `{imp.statement}` needs {file}, which "
                    f"{target.short_label} ({target.where()}) lacks: {fix}")
  for dep in target.deps:
    if project.is_project_library(dep) and dep not in needed:
      errors.append(f"{target.short_label} ({target.where()}) depends on "
                    f"{project.targets[dep].short_label}, which none of its "
                    "modules imports")
  return errors, sorted(needed, key=_short)


def package_of(root: pathlib.Path, file: str) -> str:
  """The Bazel package of a file: its nearest folder with a BUILD file."""
  folder = pathlib.PurePosixPath(file).parent
  while folder.parts and not _is_package(root, pathlib.Path(folder)):
    folder = folder.parent
  return folder.as_posix() if folder.parts else ""


def target_of_test(project: Project, root: pathlib.Path,
                   test_file: str) -> Target | None:
  """The py_test that runs `test_file`: its name is the file without .py."""
  package = package_of(root, test_file)
  relative = test_file[len(package) + 1:] if package else test_file
  target = project.targets.get(f"//{package}:{relative[:-len('.py')]}")
  if target is None or target.rule != "py_test" or test_file not in target.srcs:
    return None
  return target


def find_test_files(root: pathlib.Path) -> list[str]:
  return sorted(p.relative_to(root).as_posix()
                for p in (root / TESTS).rglob("*_test.py"))


def check_test_targets(project: Project, root: pathlib.Path):
  """Messages for tests without targets or deps, and the deps they need."""
  errors, needed = [], {}
  for test_file in find_test_files(root):
    target = target_of_test(project, root, test_file)
    if target is None:
      errors.append(f"{test_file} has no py_test target (named after the file, "
                    "with the file in its srcs)")
      continue
    found, needed[test_file] = dependency_errors(
        project, target, modules_of_test(project, test_file))
    errors += found
  return errors, needed


def library_errors(project: Project) -> list[str]:
  """Messages for libraries that lack an import, or have a needless dep."""
  errors = []
  module_of = _module_of(project)
  for label, target in sorted(project.targets.items()):
    if project.is_project_library(label):
      modules = [module_of[s] for s in target.srcs if s in module_of]
      errors += dependency_errors(project, target, modules)[0]
  return errors


def placement_errors(project: Project) -> list[str]:
  """Modules of the library folders in no py_library, or in several."""
  errors = []
  for name, file in sorted(project.files.items()):
    if file.split("/")[0] not in project.library_folders:
      continue
    owners = [t.label for t in project.library_of_file.get(file, ())]
    if len(owners) != 1:
      errors.append(f"{file} is in {len(owners)} py_library targets "
                    f"{owners}, not one")
  return errors


def label_errors(project: Project) -> list[str]:
  """Deps that name no target, and cycles among the libraries' deps."""
  errors = []
  graph = {}
  for label, target in sorted(project.targets.items()):
    for dep in target.deps:
      if dep not in project.targets and not dep.startswith("@"):
        errors.append(f"{target.where()}: {label} depends on {dep}, which is "
                      "no target")
    graph[label] = {d for d in target.deps if d in project.targets}
  errors += [" -> ".join(c) + ": a cycle of deps"
             for c in imports_test.cycles(graph)]
  return errors


def deps_entries(needed: dict[str, list[str]]) -> str:
  """The `_DEPS` dict of tests/BUILD for `needed` (test file -> labels);
  a test that needs no library has no entry."""
  lines = ["_DEPS = {"]
  for test_file, labels in sorted(needed.items()):
    if not labels:
      continue
    key = f'    "{test_file.removeprefix(TESTS + "/")}": ['
    labels = [f'"{_short(label)}"' for label in sorted(labels, key=_short)]
    line = key + ", ".join(labels) + "],"
    if len(line) <= 79:
      lines.append(line)
    else:
      lines += [key] + [f"        {label}," for label in labels] + ["    ],"]
  return "\n".join(lines + ["}"])


def _short(label: str) -> str:
  package, _, name = label[2:].partition(":")
  return f"//{package}" if package.rsplit("/", 1)[-1] == name else label


@functools.cache
def project_here() -> Project:
  return read_project(ROOT)


@pytest.fixture(scope="module")
def here() -> Project:
  """The repository's project, read once: the tests using it share one
  worker (tests/conftest.py), so the tree is parsed once per run."""
  return project_here()


def _report(errors: list[str]) -> str:
  return f"{len(errors)} problem(s):\n" + "\n".join(errors)


# The project.


def test_the_builds_are_found(here):
  project = here
  assert {"//triehh/core:core", "//triehh:triehh", "//experiments:experiments",
          "//benchmarks:benchmarks", "//tests:core/trie_test",
          "//tests:test_support"} <= set(project.targets)
  assert "triehh/core/trie.py" in project.targets["//triehh/core:core"].srcs
  assert "triehh/engines/tff/engine.py" not in (
      project.targets["//triehh/engines:engines"].srcs)
  assert "tests/core/trie_test.py" in (
      project.targets["//tests:core/trie_test"].srcs)
  # Each folder of triehh/ is a library, and the checks are one outside it.
  assert "triehh/mechanisms/protocol.py" in (
      project.targets["//triehh/mechanisms:mechanisms"].srcs)
  assert {"checks/audit.py", "checks/exact_validation.py"} <= set(
      project.targets["//checks:checks"].srcs)
  assert project.is_project_library("//checks:checks")


def test_every_test_file_has_a_target_with_the_deps_it_imports(here):
  errors, needed = check_test_targets(here, ROOT)
  assert not errors, (_report(errors) + "\n\nThe deps each test imports "
                      "(tests/BUILD):\n" + deps_entries(needed))


def test_every_library_depends_on_what_it_imports(here):
  errors = library_errors(here)
  assert not errors, _report(errors)


def test_every_module_is_in_one_library(here):
  errors = placement_errors(here)
  assert not errors, _report(errors)


def test_every_dep_is_a_target_and_deps_have_no_cycle(here):
  errors = label_errors(here)
  assert not errors, _report(errors)


# The checks themselves, on a small workspace.


_WORKSPACE = {
    "BUILD": "",
    "lib/BUILD": """
py_library(
    name = "lib",
    srcs = glob(["**/*.py"]),
)
""",
    "lib/__init__.py": "",
    "lib/base.py": "",
    "lib/sub/__init__.py": "",
    "lib/sub/more.py": "from lib import base\n",
    "top/BUILD": """
py_library(
    name = "top",
    srcs = glob(["*.py"]),
    deps = ["//lib"],
)
""",
    "top/__init__.py": "",
    "top/main.py": "def f():\n  from lib.sub import more\n",
    "tests/BUILD": """
_DEPS = {
    "a_test.py": ["//lib"],
    "sub/b_test.py": ["//top", "//lib"],
}

py_library(
    name = "test_support",
    srcs = glob(["**/*.py"], exclude = ["**/*_test.py"]),
)

[
    py_test(
        name = test_file[:-len(".py")],
        srcs = [test_file],
        deps = [":test_support"] + _DEPS.get(test_file, []),
    )
    for test_file in glob(["**/*_test.py"])
]
""",
    "tests/__init__.py": "",
    "tests/helper.py": "from lib import base\n",
    "tests/a_test.py": "from tests import helper\n",
    "tests/sub/__init__.py": "",
    "tests/sub/conftest.py": "import top.main\n",
    "tests/sub/b_test.py": "import lib.base\n",
}


def _workspace(tmp_path, changes: dict[str, str | None]) -> Project:
  files = {**_WORKSPACE, **changes}
  for name, text in files.items():
    if text is None:
      continue
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
  return read_project(tmp_path, build_folders=("lib", "top", "tests"),
                      source_folders=("lib", "top", "tests"),
                      library_folders=("lib", "top"))


def _all_errors(project: Project, root) -> list[str]:
  return (check_test_targets(project, root)[0] + library_errors(project)
          + placement_errors(project) + label_errors(project))


def test_the_small_workspace_passes(tmp_path):
  project = _workspace(tmp_path, {})
  assert _all_errors(project, tmp_path) == []
  assert project.targets["//lib:lib"].srcs == [
      "lib/__init__.py", "lib/base.py", "lib/sub/__init__.py",
      "lib/sub/more.py"]
  assert project.targets["//tests:sub/b_test"].deps == [
      "//tests:test_support", "//top:top", "//lib:lib"]
  assert modules_of_test(project, "tests/sub/b_test.py") == [
      "tests.sub.b_test", "tests.sub.conftest"]
  _, needed = check_test_targets(project, tmp_path)
  assert deps_entries(needed) == ('_DEPS = {\n    "a_test.py": ["//lib"],\n'
                                  '    "sub/b_test.py": ["//lib", "//top"],\n}')
  needed["tests/c_test.py"] = []
  needed["tests/d_test.py"] = [f"//lib/{'x' * 50}:{'x' * 50}", "//lib:lib"]
  assert ('    "d_test.py": [\n        "//lib",\n'
          f'        "//lib/{"x" * 50}",\n    ],\n') in deps_entries(needed)
  assert "c_test" not in deps_entries(needed)


@pytest.mark.parametrize("changes, problem", [
    # (a) A test file without a target.
    ({"tests/sub/BUILD": ""}, "tests/sub/b_test.py has no py_test target"),
    # (b) A test whose helper imports a library its target lacks.
    ({"tests/helper.py": "from top import main\n"},
     "tests/helper.py:1: `from top import main` needs top/main.py, which "
     "//tests:a_test"),
    # (b) A test without an entry.
    ({"tests/c_test.py": "import lib.base\n"},
     "tests/c_test.py:1: `import lib.base` needs lib/base.py"),
    # (b) A needless dep.
    ({"tests/a_test.py": ""}, "//tests:a_test (tests/BUILD:13) depends on "
     "//lib, which none of its modules imports"),
    # (c) A library that lacks an import, in a function.
    ({"lib/sub/more.py": "def g():\n  import top\n"},
     "lib/sub/more.py:2: `import top` needs top/__init__.py, which //lib "
     "(lib/BUILD:2) lacks: add //top to its deps"),
    # A module in no library.
    ({"top/extra/thing.py": ""}, "top/extra/thing.py is in 0 py_library"),
    # A dep that is no target, and a cycle of deps.
    ({"top/BUILD": _WORKSPACE["top/BUILD"].replace('"//lib"', '"//lbi"')},
     "//top:top depends on //lbi:lbi, which is no target"),
    ({"lib/BUILD": _WORKSPACE["lib/BUILD"].replace(
        '"]),', '"]),\n    deps = ["//top"],')},
     "//lib:lib -> //top:top -> //lib:lib: a cycle of deps"),
])
def test_a_mismatch_is_caught(tmp_path, changes, problem):
  project = _workspace(tmp_path, changes)
  errors = _all_errors(project, tmp_path)
  assert any(problem in e for e in errors), errors


def test_glob_follows_bazel(tmp_path):
  for name in ("BUILD", "a.py", "b.txt", "x/c.py", "x/y/d.py", "sub/BUILD",
               "sub/e.py", ".hidden/f.py"):
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text("")
  assert glob(tmp_path, "", ["**/*.py"], ["x/y/**"]) == [
      ".hidden/f.py", "a.py", "x/c.py"]
  assert glob(tmp_path, "", ["*.py", "x/*"]) == ["a.py", "x/c.py"]
  assert glob(tmp_path, "sub", ["**"]) == ["BUILD", "e.py"]
