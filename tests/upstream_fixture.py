"""A tiny stand-in for Simd's source: a C shared library with upstream's layout (prj/cmake, prj/txt/UserVersion.txt,
src/Simd/SimdLib.h) whose CMake project writes the version string as upstream's version script does
(USER_VERSION.BRANCH-REVISION from git, the bare USER_VERSION without it), in a git repository with a release tag,
a later commit on master and a branch that does not compile. `simdbind upstream build` runs on it end to end in
seconds."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CMAKE = r"""
cmake_minimum_required(VERSION 3.10)
project(Simd C)
option(SIMD_SHARED "shared library" OFF)
set(ROOT ${CMAKE_CURRENT_SOURCE_DIR}/../..)
file(READ ${ROOT}/prj/txt/UserVersion.txt USER_VERSION)
string(STRIP "${USER_VERSION}" USER_VERSION)
set(FULL_VERSION ${USER_VERSION})
execute_process(COMMAND git -C ${ROOT} rev-parse --short HEAD OUTPUT_VARIABLE REVISION
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE NO_GIT ERROR_QUIET)
execute_process(COMMAND git -C ${ROOT} rev-parse --abbrev-ref HEAD OUTPUT_VARIABLE BRANCH
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NO_GIT EQUAL 0)
  set(FULL_VERSION "${USER_VERSION}.${BRANCH}-${REVISION}")
endif()
file(WRITE ${ROOT}/prj/txt/FullVersion.txt "${FULL_VERSION}\n")
if(SIMD_SHARED)
  set(TYPE SHARED)
else()
  set(TYPE STATIC)
endif()
add_library(Simd ${TYPE} ${ROOT}/src/Simd/SimdLib.c)
target_include_directories(Simd PRIVATE ${ROOT}/src)
target_compile_definitions(Simd PRIVATE "SIMD_VERSION=\"${FULL_VERSION}\"")
"""

HEADER = r"""
#ifndef SIMDBIND_FIXTURE_SIMDLIB_H
#define SIMDBIND_FIXTURE_SIMDLIB_H
#include <stddef.h>
#include <stdint.h>
#if defined(__GNUC__)
#define SIMD_API __attribute__((visibility("default")))
#else
#define SIMD_API
#endif
/* An enum the generated bindings turn into an IntEnum. */
typedef enum
{
    SimdFixtureRed = 1,
    SimdFixtureGreen = 2,
} SimdFixtureColorType;
#ifdef __cplusplus
extern "C" {
#endif
SIMD_API const char * SimdVersion(void);
SIMD_API void SimdFixtureScale(const float * src, size_t size, float factor, float * dst);
SIMD_API int SimdFixtureColor(SimdFixtureColorType color);
SIMD_API void SimdFixtureNotExported(void);
#ifdef __cplusplus
}
#endif
#endif
"""

SOURCE = r"""
#include "Simd/SimdLib.h"
const char * SimdVersion(void) { return SIMD_VERSION; }
void SimdFixtureScale(const float * src, size_t size, float factor, float * dst)
{
    for (size_t i = 0; i < size; ++i)
        dst[i] = src[i] * factor;
}
int SimdFixtureColor(SimdFixtureColorType color) { return (int)color * 10; }
/* Named as the C++ functions of upstream's Base and Sse41 namespaces are mangled: the build reads the backends a
   library holds from these names. */
void _ZN4Simd4Base4NoopEv(void) {}
void _ZN4Simd5Sse414NoopEv(void) {}
"""


def _git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="fixture", GIT_AUTHOR_EMAIL="fixture@example.org",
               GIT_COMMITTER_NAME="fixture", GIT_COMMITTER_EMAIL="fixture@example.org", GIT_CONFIG_NOSYSTEM="1",
               HOME=str(repo.parent))
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def require_tools() -> None:
    for tool in ("git", "cmake", "cc"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: the fixture project needs git, CMake and a C compiler")
    if shutil.which("ninja") is None and shutil.which("make") is None:
        pytest.skip("neither ninja nor make is installed")


def make_fixture(directory: Path) -> dict[str, str]:
    """Create the fixture repository at `directory`; returns its commits: "release" (tagged v7.1.162), "master"
    (one commit later) and "broken" (a branch whose source does not compile)."""
    require_tools()
    (directory / "prj" / "cmake").mkdir(parents=True)
    (directory / "prj" / "txt").mkdir()
    (directory / "src" / "Simd").mkdir(parents=True)
    (directory / "prj" / "cmake" / "CMakeLists.txt").write_text(CMAKE)
    (directory / "prj" / "txt" / "UserVersion.txt").write_text("7.1.162\n")
    (directory / "src" / "Simd" / "SimdLib.h").write_text(HEADER)
    (directory / "src" / "Simd" / "SimdLib.c").write_text(SOURCE)
    _git(directory, "init", "-q", "-b", "master")
    _git(directory, "add", "-A")
    _git(directory, "commit", "-q", "-m", "release")
    _git(directory, "tag", "-a", "v7.1.162", "-m", "release 7.1.162")
    release = _git(directory, "rev-parse", "HEAD")
    (directory / "README").write_text("a later commit\n")
    _git(directory, "add", "-A")
    _git(directory, "commit", "-q", "-m", "after the release")
    master = _git(directory, "rev-parse", "HEAD")
    _git(directory, "checkout", "-q", "-b", "broken")
    (directory / "src" / "Simd" / "SimdLib.c").write_text(SOURCE + "\nint SimdFixtureBroken(void) { return }\n")
    _git(directory, "commit", "-q", "-am", "does not compile")
    broken = _git(directory, "rev-parse", "HEAD")
    _git(directory, "checkout", "-q", "master")
    return {"release": release, "master": master, "broken": broken}


def archive(repo: Path, ref: str, path: Path) -> Path:
    """`git archive` of a ref (a .tar.gz whose pax header holds the commit id, as upstream's release archives)."""
    _git(repo, "archive", "--format=tar.gz", f"--prefix={path.name.split('.')[0]}/", "-o", str(path), ref)
    return path
