"""setuptools needs setup.py for cffi_modules; everything else is in pyproject.toml."""
from setuptools import setup

setup(cffi_modules=["build_simd.py:ffi_abi", "build_simd.py:ffi_bundled"])
