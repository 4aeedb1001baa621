"""load() refuses what is not a regular, complete shared library with a LibraryError naming the path and the rule,
before dlopen sees it: a FIFO (dlopen would wait for a writer for ever), a directory, a device, an empty file, a
text file, and truncated copies of a real library (dlopen maps a truncated copy, and the first touch of a page
past its end kills the process with SIGBUS). Each load runs in a subprocess, so a hang or a crash is a failure
of its own rather than the end of the test run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import simdbind

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF shared libraries (Linux)")

_LOAD = """
import json, sys, simdbind
from simdbind.errors import LibraryError
for path in sys.argv[1:]:
    try:
        simdbind.load(path)
    except LibraryError as error:
        print(json.dumps({"error": "LibraryError", "message": str(error)}), flush=True)
    except BaseException as error:
        print(json.dumps({"error": type(error).__name__, "message": str(error)}), flush=True)
    else:
        print(json.dumps({"error": None}), flush=True)
"""


def load_in_subprocess(*paths: str) -> list[dict[str, str]]:
    """What load(path) did for each path, in one fresh process; a hang or a crash fails the test with the
    process's output."""
    run = subprocess.run([sys.executable, "-c", _LOAD, *paths], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"a load ended the process: exit {run.returncode}\n{run.stderr[-2000:]}"
    outcomes = [json.loads(line) for line in run.stdout.strip().splitlines()]
    assert len(outcomes) == len(paths), run.stdout
    return outcomes


def assert_refused(path: str, *words: str) -> None:
    [outcome] = load_in_subprocess(path)
    assert outcome["error"] == "LibraryError", outcome
    assert path in outcome["message"], outcome
    for word in words:
        assert word in outcome["message"], outcome


def test_a_fifo_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "libfifo.so"
    os.mkfifo(fifo)
    assert_refused(str(fifo), "FIFO", "regular file")


def test_a_directory_is_refused(tmp_path):
    folder = tmp_path / "libdir.so"
    folder.mkdir()
    assert_refused(str(folder), "directory")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_is_refused():
    assert_refused("/dev/zero", "character device")


def test_an_empty_file_is_refused(tmp_path):
    empty = tmp_path / "libempty.so"
    empty.write_bytes(b"")
    assert_refused(str(empty), "0 bytes")


def test_a_text_file_is_refused(tmp_path):
    text = tmp_path / "libtext.so"
    text.write_text("INPUT(-lSimd)\n" * 10)  # a linker script, as some distributions install for libfoo.so
    assert_refused(str(text), "ELF magic")


def test_an_object_that_is_not_a_shared_library_is_refused(tmp_path):
    header = bytearray(open(simdbind.bundled_path(), "rb").read(64))
    header[16] = 1  # e_type ET_REL
    relocatable = tmp_path / "librel.so"
    relocatable.write_bytes(bytes(header))
    assert_refused(str(relocatable), "not a shared object")


def test_truncated_copies_of_the_bundled_library_are_refused(tmp_path):
    """Every cut of the file (from inside the ELF header to one byte short) is refused, none crashes. All the cuts
    are loaded in one subprocess (a crash at any of them fails the run), each checked for its rule."""
    data = open(simdbind.bundled_path(), "rb").read()
    size = len(data)
    cuts = sorted({10, 40, 64, 200, 4096, size // 8, size // 3, size // 2, size - 4096, size - 100, size - 1})
    paths = []
    for cut in cuts:
        path = tmp_path / f"libcut{cut}.so"
        path.write_bytes(data[:cut])
        paths.append(str(path))
    outcomes = load_in_subprocess(*paths)
    for cut, path, outcome in zip(cuts, paths, outcomes):
        assert outcome["error"] == "LibraryError", (cut, outcome)
        assert path in outcome["message"]
        assert "truncated" in outcome["message"] or "shorter than" in outcome["message"], (cut, outcome)


def test_a_complete_copy_still_loads(tmp_path):
    """The checks refuse nothing a loader can map: a whole copy of the bundled library loads."""
    copy = tmp_path / "libwhole.so"
    copy.write_bytes(open(simdbind.bundled_path(), "rb").read())
    assert load_in_subprocess(str(copy)) == [{"error": None}]
