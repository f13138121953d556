"""Builds the package's two optional compiled extensions.

Everything else about the package is in pyproject.toml. Both need Cython
and a C compiler; without either the package installs without them and
numpy does the same work, with the same results:

- ``triehh/engines/_compiled_draws.pyx``, the fast engine's draws, calls
  numpy's C random functions (``numpy/random/c_distributions.pxd``, linked
  against numpy's ``libnpyrandom``); else numpy's Python calls
  (``triehh/engines/thinning.py``).
- ``triehh/core/_compiled_word_votes.pyx`` builds the found words' dict in
  one pass; else numpy (``triehh/core/word_votes.py``).
"""

import os

from setuptools import Extension
from setuptools import setup


def _extensions() -> list:
  try:
    from Cython.Build import cythonize  # pylint: disable=g-import-not-at-top
    import numpy  # pylint: disable=g-import-not-at-top
  except ImportError:
    return []
  draws = Extension(
      "triehh.engines._compiled_draws",
      ["triehh/engines/_compiled_draws.pyx"],
      include_dirs=[numpy.get_include()],
      library_dirs=[os.path.join(os.path.dirname(numpy.__file__), "random",
                                 "lib")],
      libraries=["npyrandom", "m"],
      define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
      optional=True)
  word_votes = Extension(
      "triehh.core._compiled_word_votes",
      ["triehh/core/_compiled_word_votes.pyx"], optional=True)
  return cythonize([draws, word_votes], quiet=True)


setup(ext_modules=_extensions())
