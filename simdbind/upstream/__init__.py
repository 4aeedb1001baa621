"""Production Simd from source: fetch, build, cache and load upstream's library, and call every function its
documented header declares.

``simdbind upstream build`` (or ``python build_simd.py`` in a checkout) runs :func:`simdbind.upstream.pipeline.build`;
``simdbind.load("upstream")`` / ``"upstream@REF"`` finds a cached build (:mod:`simdbind.upstream.names`);
``library.raw`` calls any declared function on NumPy arrays (:mod:`simdbind.upstream.raw`). docs/upstream-build.md
describes all of it.

Modules, one job each: ``options`` (what a build is asked for, errors), ``toolchain`` (git, CMake, Ninja, the
compiler, ccache, which backends it can build), ``source`` (fetch and check out), ``progress`` (the build's progress
line), ``build`` (configure and compile), ``header`` (SimdLib.h to cffi declarations, enums, comparison with ours),
``cache`` (layout, keys, lock, atomic install, list, remove), ``names`` (``upstream@REF`` to a cached library),
``raw`` (the NumPy-aware caller), ``pipeline`` (all steps of one build), ``cli`` (the command line).
"""
