"""setuptools needs setup.py for cffi_modules; everything else is in pyproject.toml.

The bundled library is ~60 translation units (every kernel source once per ISA). distutils compiles them one by
one; the hook below compiles them on every core instead (SIMDBIND_BUILD_JOBS overrides the count).
"""

import os
from concurrent.futures import ThreadPoolExecutor

from setuptools import setup
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

setup(cffi_modules=["build_simd.py:ffi_abi", "build_simd.py:ffi_bundled"])
