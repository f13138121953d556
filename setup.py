"""Builds the optional compiled draws of the fast engine.

Everything else about the package is in pyproject.toml. The extension,
``triehh/engines/_compiled_draws.pyx``, calls numpy's C random functions
(``numpy/random/c_distributions.pxd``, linked against numpy's
``libnpyrandom``) and needs Cython and a C compiler; without either the
package installs without it and the engine makes the same draws through
numpy's Python calls (``triehh/engines/thinning.py``).
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
  extension = Extension(
      "triehh.engines._compiled_draws",
      ["triehh/engines/_compiled_draws.pyx"],
      include_dirs=[numpy.get_include()],
      library_dirs=[os.path.join(os.path.dirname(numpy.__file__), "random",
                                 "lib")],
      libraries=["npyrandom", "m"],
      define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
      optional=True)
  return cythonize([extension], quiet=True)


setup(ext_modules=_extensions())
