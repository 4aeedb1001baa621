"""The version-string rule (simdbind/_versions.py, docs/upstream-build.md "Version strings"): the first three numbers
are the release; anything after them marks a git build of that release or of a later commit before the next one,
which a range includes when it includes the release or a version just after it. The loader, the catalogue and the
routes all read versions through it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from simdbind import _routes
from simdbind._versions import LATER, VersionRange, version_points
from simdbind.conformance import deviations

TAG = "7.1.162.HEAD-4615122ef"  # v7.1.162 built from its tag (detached)
MASTER = "7.1.162.master-c6ef3bd0e"  # master 148 commits after it
COUNTED = "7.1.162.148-c6ef3bd"  # the same commit, described by a count


@pytest.mark.parametrize("text, points", [
    ("7.1.162", [(7, 1, 162)]),
    ("7.1.162 (upstream)", [(7, 1, 162)]),
    (TAG, [(7, 1, 162), (7, 1, 162, LATER)]),
    (MASTER, [(7, 1, 162), (7, 1, 162, LATER)]),
    (COUNTED, [(7, 1, 162), (7, 1, 162, LATER)]),
    ("7.1", [(7, 1)]),
    ("unknown", None),
])
def test_what_a_version_string_stands_for(text, points):
    assert version_points(text) == points


@pytest.mark.parametrize("spec, included", [
    ("7.0.160 - 7.1.162", True),  # the release's known behaviour is assumed after it
    ("7.0.160 .. 7.1.162", True),
    ("7.1.162", True),
    (">=7.1.162", True),
    (">7.1.162", True),  # a commit after the release
    ("v7.1.162 and master", True),
    (">=7.0.160, <7.2", True),
    ("<7.1.162", False),
    ("7.0.160 .. 7.1.161", False),
    ("7.1.163", False),
    (">=7.1.163", False),
])
@pytest.mark.parametrize("version", [TAG, MASTER, COUNTED])
def test_a_git_build_is_in_a_range_that_has_its_release_or_a_commit_after_it(spec, included, version):
    assert VersionRange.parse(spec).contains(version) is included


def test_a_bare_release_is_exactly_that_release():
    assert VersionRange.parse("7.1.162").contains("7.1.162")
    assert not VersionRange.parse(">7.1.162").contains("7.1.162")
    assert VersionRange.parse(">7.1.162").contains(MASTER)


def test_the_catalogue_applies_its_v7_1_162_entries_to_a_master_build():
    catalogue = deviations.load().entries
    release = {d.id for d in catalogue if d.versions.contains("7.1.162")}
    assert release and release == {d.id for d in catalogue if d.versions.contains(MASTER)}
    assert release == {d.id for d in catalogue if d.versions.contains(TAG)}


@pytest.mark.parametrize("route", _routes.ROUTES, ids=lambda r: r.entry)
def test_routes_are_taken_for_a_master_build_as_for_its_release(route):
    at_release = route.taken(SimpleNamespace(kind="external", version="7.1.162"))
    assert route.taken(SimpleNamespace(kind="external", version=MASTER)) is at_release
    assert route.taken(SimpleNamespace(kind="external", version=TAG)) is at_release


def test_the_loader_compares_the_release_numbers():
    from simdbind.library import MINIMUM_VERSION, _VERSION

    match = _VERSION.search("7.0.160.master-0123abc")
    assert match is not None and tuple(int(x) for x in match.groups()) == MINIMUM_VERSION
