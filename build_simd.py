"""Build production Simd from source and cache it: the same command as ``simdbind upstream build``.

    python build_simd.py [--ref REF] [--source DIR|URL|ARCHIVE] [--no-check] ...

``python build_simd.py --help`` lists the options; docs/upstream-build.md describes them. (The cffi generator of the
package's own build is csrc/cffi_modules.py.)
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    try:
        from simdbind.upstream.cli import build_main
    except ImportError as error:
        print(f"build_simd.py: simdbind is not installed ({error}): run `python -m pip install -e .` in this "
              "checkout first", file=sys.stderr)
        sys.exit(2)
    sys.exit(build_main(sys.argv[1:]))
