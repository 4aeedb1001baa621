"""setuptools needs setup.py for cffi_modules and the fast-call extension; everything else is in pyproject.toml.

The bundled library is ~60 translation units (every kernel source once per ISA). distutils compiles them one by
one; the hook below compiles them on every core instead (SIMDBIND_BUILD_JOBS overrides the count).
"""

import os
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, setup
from setuptools._distutils import ccompiler


def _parallel_compile(self, sources, output_dir=None, macros=None, include_dirs=None, debug=0, extra_preargs=None,
                      extra_postargs=None, depends=None):
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)

    def compile_one(obj):
        if obj in build:
            source, ext = build[obj]
            self._compile(obj, source, ext, cc_args, extra_postargs, pp_opts)

    jobs = int(os.environ.get("SIMDBIND_BUILD_JOBS", os.cpu_count() or 1))
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(compile_one, objects))  # list() re-raises the first compile error
    return objects


ccompiler.CCompiler.compile = _parallel_compile

# simdbind._fastcall (issue 8): the C-side fast path of eltwise/unary. Stable C API only, no NumPy headers; built
# against the limited API where the buffer protocol is part of it (3.11+), so one build serves later Pythons too.
# (Free-threaded builds have no limited API.)
_limited = sys.version_info >= (3, 11) and not sysconfig.get_config_var("Py_GIL_DISABLED")
_fastcall = Extension(
    "simdbind._fastcall", ["simdbind/_fastcall.c"],
    define_macros=[("Py_LIMITED_API", "0x030B0000")] if _limited else [],
    py_limited_api=_limited,
    extra_compile_args=["-O2"] if os.name != "nt" else [],
)

setup(cffi_modules=["build_simd.py:ffi_abi", "build_simd.py:ffi_bundled"], ext_modules=[_fastcall])
