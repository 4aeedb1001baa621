"""``simdbind upstream build|list|remove`` (and ``python build_simd.py``, which is ``build``): the arguments are
parsed here, once. Exit codes: 0 done, 1 the build (or its check) failed, 2 a usage error (nothing started),
130 interrupted (nothing installed)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

from simdbind.conformance.options import positive_int
from simdbind.upstream import cache, names
from simdbind.upstream.options import DEFAULT_REF, UpstreamError, UsageError


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ref", default=None,
                        help=f"tag, branch or commit to build (default {DEFAULT_REF}); with an archive, the name the "
                             "build is known by (default: the archive's file name)")
    parser.add_argument("--source", default=None, metavar="DIR|URL|ARCHIVE",
                        help="a Simd checkout, bare mirror, git URL (file:// too) or source archive (.tar.gz, .zip); "
                             "default: upstream's repository (needs the network)")
    parser.add_argument("-j", "--jobs", type=positive_int, default=None,
                        help="parallel compile jobs (default: every CPU this process may use)")
    parser.add_argument("--no-check", dest="check", action="store_false",
                        help="skip loading the build and running the smoke profile on it")
    parser.add_argument("--force", action="store_true", help="build again even if the cache has this build")
    parser.add_argument("--keep-build", action="store_true", help="keep the source and build tree (in the cache's "
                        ".work directory) after the build")
    parser.add_argument("--cache", dest="cache_dir", type=Path, default=None,
                        help="cache directory (default: $SIMDBIND_UPSTREAM_CACHE, vendor/upstream in a checkout, "
                             "else $XDG_CACHE_HOME/simdbind/upstream)")
    parser.add_argument("--max-isa", default=None, metavar="BACKEND",
                        help="leave out the backends above this one (avx2: the code an AVX2 machine runs, on any "
                             "machine); the build is named upstream@REF:BACKEND")
    parser.add_argument("--coverage", action="store_true",
                        help="gcov instrumentation, the build tree kept for `simdbind conformance coverage --build "
                             "upstream@REF:coverage`; the build is named upstream@REF:coverage")
    parser.set_defaults(upstream_handler=_build)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``upstream`` under a subparsers object (simdbind's command line)."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "upstream", help="build production Simd from source, list and remove cached builds",
        description="Build upstream Simd as a shared library with every SIMD backend this compiler can make, keep it "
                    "in a cache, and load it by name: simdbind.load('upstream'), 'upstream@v7.0.160'. Exit codes: 1 "
                    "a build failed, 2 a usage error (docs/upstream-build.md).")
    commands = parser.add_subparsers(dest="upstream_command", required=True)
    add_build_arguments(commands.add_parser("build", help="fetch, build, cache and check a Simd release or commit"))
    listing = commands.add_parser("list", help="list the cached builds")
    listing.add_argument("--cache", dest="cache_dir", type=Path, default=None, help="cache directory")
    listing.set_defaults(upstream_handler=_list)
    removing = commands.add_parser("remove", help="remove cached builds")
    removing.add_argument("name", nargs="?", help="upstream@REF (every build of it) or a key from `list`")
    removing.add_argument("--all", action="store_true", help="remove every cached build")
    removing.add_argument("--cache", dest="cache_dir", type=Path, default=None, help="cache directory")
    removing.set_defaults(upstream_handler=_remove)
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run a parsed upstream command; errors are one line on stderr and an exit code."""
    try:
        code: int = args.upstream_handler(args)
        return code
    except UpstreamError as error:
        print(f"simdbind upstream: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("simdbind upstream: interrupted: nothing was installed", file=sys.stderr)
        return 130


def _build(args: argparse.Namespace) -> int:
    from simdbind.upstream.pipeline import Request, build

    build(Request(ref=args.ref, source=args.source, jobs=args.jobs, check=args.check, force=args.force,
                  keep_build=args.keep_build, cache_dir=args.cache_dir, max_isa=args.max_isa,
                  coverage=args.coverage))
    return 0


def _list(args: argparse.Namespace) -> int:
    base = args.cache_dir or cache.root()
    found = cache.entries(base)
    if not found:
        print(f"no builds in {base} (make one: {names.build_command(DEFAULT_REF)})")
        return 0
    rows = [["name", "commit", "version", "backends", "compiler", "size", "built", "key"]]
    for entry in found:
        m = entry.manifest
        rows.append([entry.name, str(m.get("commit", ""))[:10], str(m.get("version", "")),
                     ",".join(m.get("backends", [])), str(m.get("compiler", "")),
                     cache.format_size(int(m.get("size", 0))), str(m.get("date", "")), entry.key])
    cache.print_table(rows)
    print(f"cache: {base}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    base = args.cache_dir or cache.root()
    if bool(args.name) == bool(args.all):
        raise UsageError("remove: give a name (upstream@REF or a key from `simdbind upstream list`) or --all")
    found = cache.entries(base)
    if not args.all:
        ref = names.ref_of(args.name) if names.is_name(args.name) else None
        variant = names.variant_of(args.name) if names.is_name(args.name) else ""
        found = [e for e in found
                 if e.key == args.name or (ref is not None and e.matches(ref) and e.variant == variant)]
        if not found:
            raise UsageError(f"remove: no cached build named {args.name} in {base} (see `simdbind upstream list`)")
    for entry in found:
        cache.remove(entry)
        print(f"removed {entry.name} ({entry.key})")
    return 0


def build_main(argv: Sequence[str], prog: str = "build_simd.py") -> int:
    """``python build_simd.py ARGS``: the options of ``simdbind upstream build``."""
    parser = argparse.ArgumentParser(prog=prog, description="Build production Simd from source into simdbind's "
                                     "cache: the same as `simdbind upstream build` (docs/upstream-build.md).")
    add_build_arguments(parser)
    return run(parser.parse_args(list(argv)))
