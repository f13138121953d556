"""The package's optional parts, and the one-line error when one is absent.

``pip install triehh`` installs the core: the fast engine, the accountants,
partition selection, :func:`triehh.discover` on the engines that need no
TensorFlow or Beam, and the drivers that run them. Three extras of
pyproject.toml add the rest (:data:`EXTRAS`): ``tff`` (TensorFlow and
TensorFlow Federated: ``engine="tff"``, the IBLT baseline, TFF workers),
``beam`` (Apache Beam: ``triehh.beam``, ``engine="beam"``, ingestion) and
``notebook`` (the tutorial's Jupyter kernel). The core imports none of
their modules until a feature that needs one is asked for; then an absent
module is a :class:`MissingExtra` that names the extra to install.
"""

from __future__ import annotations

import importlib
import types

# Extra -> (what it installs, the top-level modules that come with it).
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "tff": ("TensorFlow Federated",
            ("tensorflow", "tensorflow_federated", "tensorflow_privacy",
             "jax", "jaxlib", "portpicker", "grpc")),
    "beam": ("Apache Beam", ("apache_beam",)),
    "notebook": ("a Jupyter kernel", ("nbclient", "nbformat", "ipykernel")),
}
# Said after the command when the extra's own pins do not resolve.
_NOTES = {
    "tff": ("; tensorflow-federated 0.87 pins jaxlib 0.4.14, which package "
            "indexes no longer serve, so where that does not resolve install "
            "the project's pinned requirements.txt without dependency "
            "resolution, as `make setup` does"),
}


class MissingExtra(ImportError, ValueError):
  """A feature's optional dependency is not installed: the message names
  the extra that installs it (:attr:`extra`). A ValueError too, as every
  bad request."""

  def __init__(self, message: str, *, name: str, extra: str):
    super().__init__(message, name=name)
    self.extra = extra


def extra_of(module: str | None) -> str | None:
  """The extra that installs ``module`` (a dotted name), or None."""
  top = (module or "").partition(".")[0]
  for extra, (_, modules) in EXTRAS.items():
    if top in modules:
      return extra
  return None


def missing(feature: str, err: ImportError) -> ImportError:
  """:class:`MissingExtra` saying that ``feature`` needs the extra that
  installs the module ``err`` did not find; ``err`` itself when no extra
  installs that module (a fault of the installation, not a missing part)."""
  extra = extra_of(err.name)
  if extra is None or isinstance(err, MissingExtra):
    return err
  what = EXTRAS[extra][0]
  return MissingExtra(
      f"{feature} needs {what}, which is not installed (no module "
      f"{err.name!r}): pip install 'triehh[{extra}]'{_NOTES.get(extra, '')}",
      name=err.name, extra=extra)


def import_module(name: str, feature: str) -> types.ModuleType:
  """``importlib.import_module(name)``; a module of an extra that is not
  installed raises :func:`missing`'s one-line error for ``feature``."""
  try:
    return importlib.import_module(name)
  except ImportError as err:
    raise missing(feature, err) from err
