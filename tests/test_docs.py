"""The documents stand on their own, and the manual's examples run.

* A reader of the repository has no copy of the ABI notes the bindings were written from, so nothing cites them by
  section ("spec 3.7", "§4.2", "seed page"): a docstring, comment, message, catalogue entry, test or page says what
  the section says, or points into the repository (a manual page, a catalogue id, docs/) or at upstream's own source
  files. Under simdbind/ the notes' file name is not named either.
* No document or comment names a path of the machine it was written on, or the work session it was written in.
* Every public function, class and method of ``simdbind`` and ``simdbind.conformance`` documents its parameters,
  what it returns and an example; the examples run (here as doctests; ``.ci/run`` runs them through Sphinx too),
  and so do the Python blocks of the guide pages.
* The README stays a front door, and its links lead somewhere.
"""

from __future__ import annotations

import doctest
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import simdbind
import simdbind.conformance
from tests.test_readme import README, ROOT

#: A citation of the notes: a section number after "spec", the section sign, the notes' file name, "the spec".
CITATION = re.compile(r"\bspec(?:'s)?\s+(?:section\s+)?\d+(?:\.\d+)*|§|SIMD_SYNET_ABI|\bthe spec\b|\bseed page",
                      re.IGNORECASE)
#: The forms that cite a section, checked everywhere else (tests may name the notes' file: test_abi reads it).
SECTION_CITATION = re.compile(r"\bspec(?:'s)?\s+(?:section\s+)?\d+(?:\.\d+)*|§|\bseed page", re.IGNORECASE)
#: A catalogue entry's "spec" that is a bare section number ("3.12.3 item 1").
SECTION_NUMBER = re.compile(r"^\s*\d+(\.\d+)*\b")
TEXT_FILES = (".py", ".pyi", ".c", ".h", ".md", ".json", ".txt", ".rst", ".sh", ".toml")
#: A path of a particular machine: a home, the root's home, a work or scratch directory.
MACHINE_PATH = re.compile(r"(?<![\w.$}-])/(?:work|root|home|tmp)/[\w.]")
#: A work session named as such ("Session 4", "this session's code"); ONNX Runtime's and pytest's sessions are fine.
WORK_SESSION = re.compile(r"\bsessions?\s+\d|\b(?:this|that|earlier|previous|next|same|day's)\s+sessions?\b",
                          re.IGNORECASE)
#: Where the documents and comments live (csrc/ has its own owners' check list; build outputs are not sources).
SOURCES = ("README.md", "docs", "simdbind", "tests", "tools", ".ci", "csrc", "build_simd.py", "CMakeLists.txt")
THIS_FILE = Path(__file__).resolve()


def text_files(*roots: str) -> Iterator[Path]:
    for root in roots:
        path = ROOT / root
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        for candidate in candidates:
            if (candidate.suffix in TEXT_FILES or candidate.name == "run") and candidate.is_file() and not (
                    {"__pycache__", "_build"} & set(candidate.parts)) and candidate.resolve() != THIS_FILE:
                yield candidate


def lines_matching(path: Path, pattern: re.Pattern[str]) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [f"{path.relative_to(ROOT).as_posix()}:{n}: {line.strip()[:100]}"
            for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)]


def citations(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [f"{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if CITATION.search(line)]
    if path.suffix == ".json" and "deviations" in (path.stem, path.parent.name):
        found += [f"{entry['id']}: spec {entry['spec']!r}" for entry in json.loads(text)
                  if SECTION_NUMBER.match(entry["spec"])]
    return found


def test_nothing_under_simdbind_cites_the_abi_notes_by_section():
    cited = {}
    for path in text_files("simdbind"):
        found = citations(path)
        if found:
            cited[path.relative_to(ROOT).as_posix()] = found
    assert not cited, "say what the section says, or point into the repository:\n" + "\n".join(
        f"{name}:{line}" for name, found in cited.items() for line in found)


def test_no_document_test_or_tool_cites_a_section_of_the_notes():
    found = [line for path in text_files(*SOURCES) for line in lines_matching(path, SECTION_CITATION)]
    assert not found, "say what the section says:\n" + "\n".join(found)


def test_no_document_or_comment_names_a_machine_path_or_a_work_session():
    found = [line for path in text_files(*SOURCES) for pattern in (MACHINE_PATH, WORK_SESSION)
             for line in lines_matching(path, pattern)]
    assert not found, "\n".join(found)


def test_the_check_finds_each_form_of_citation(tmp_path):
    for line in ("route (spec 3.8.4)", "Spec 5.2: shapes", "see §4.2", "SIMD_SYNET_ABI.md 3.10.7",
                 "not in the spec: found by explore", "the seed page's formula"):
        path = tmp_path / "module.py"
        path.write_text(f"# {line}\n")
        assert citations(path), line
    for line in ("ActivationSpec", "as_spec(activation)", "isoformat(timespec='seconds')", "impl.spec"):
        path = tmp_path / "module.py"
        path.write_text(f"# {line}\n")
        assert not citations(path), line
    catalogue = tmp_path / "deviations" / "x.json"
    catalogue.parent.mkdir()
    catalogue.write_text(json.dumps([{"id": "X", "spec": "3.12.3 item 1"}, {"id": "Y", "spec": "README 'Pooling'"}]))
    assert citations(catalogue) == ["X: spec '3.12.3 item 1'"]


def test_the_checks_find_machine_paths_and_work_sessions():
    for line in ("--json /work/runs/s4.json", "built in /home/me/simd", "see /tmp/bench/x.md", "(/root/.cache)",
                 "`cd /work/main`"):
        assert MACHINE_PATH.search(line), line
    for line in ("$TMPDIR/x", "${TMPDIR:-/tmp}", "docs/work/x", "/usr/lib/x", "https://example.org/home/x"):
        assert not MACHINE_PATH.search(line), line
    for line in ("Session 4's machine", "sessions 1-3", "the runs of earlier sessions", "this session's kernels"):
        assert WORK_SESSION.search(line), line
    for line in ("an ONNX Runtime session", "contexts, sessions and converted weights", "pytest_sessionstart"):
        assert not WORK_SESSION.search(line), line


# -- the API reference -----------------------------------------------------------------------------------------
def public_objects() -> Iterator[tuple[str, Any]]:
    """Every public callable the API reference documents: the exports of simdbind (and of its activation module)
    and of simdbind.conformance, and the public methods and properties of their classes."""
    exports = [(f"simdbind.{name}", getattr(simdbind, name)) for name in simdbind.__all__ if name not in ("ISAS",)]
    exports += [(f"simdbind.activation.{name}", getattr(simdbind.activation, name))
                for name in simdbind.activation.__all__ if name != "PARAMETER_NAMES"]
    exports += [(f"simdbind.conformance.{name}", getattr(simdbind.conformance, name))
                for name in simdbind.conformance.__all__]
    for qualified, value in exports:
        if inspect.ismodule(value):
            continue
        yield qualified, value
        if inspect.isclass(value) and not issubclass(value, (BaseException, int)):
            for attribute, member in vars_with_inherited(value):
                yield f"{qualified}.{attribute}", member


def vars_with_inherited(cls: type) -> Iterator[tuple[str, Any]]:
    seen = set()
    for klass in cls.__mro__:
        if klass.__module__.split(".")[0] != "simdbind":
            continue
        for attribute, member in vars(klass).items():
            if attribute.startswith("_") or attribute in seen:
                continue
            seen.add(attribute)
            if isinstance(member, property) or inspect.isfunction(member):
                yield attribute, member


def parameters(value: Any) -> list[str]:
    function = value.fget if isinstance(value, property) else value
    if isinstance(function, property) or not callable(function):
        return []
    target = function.__init__ if inspect.isclass(function) else function
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    return [name for name in signature.parameters if name not in ("self", "cls") and not name.startswith("_")
            and signature.parameters[name].kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                         inspect.Parameter.VAR_KEYWORD)]


def sections(doc: str) -> set[str]:
    return set(re.findall(r"^\s*(\w[\w ]*)\n\s*-{3,}\s*$", doc, re.M))


PUBLIC = sorted(public_objects(), key=lambda item: item[0])
#: Functions that raise nothing of their own, so document no Raises section.
RAISE_NOTHING = {"simdbind.bundled_path"}


@pytest.mark.parametrize("name, value", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_every_public_callable_documents_its_parameters_result_and_an_example(name, value):
    doc = inspect.getdoc(value.fget if isinstance(value, property) else value) or ""
    found = sections(doc)
    assert "Examples" in found and ">>>" in doc, f"{name}: no Examples section"
    documented = set(re.findall(r"^(\w+(?:, \w+)*)(?:\s*:.*)?$", doc.split("Parameters\n")[-1], re.M))
    documented = {part for entry in documented for part in entry.split(", ")}
    missing = [p for p in parameters(value) if p not in documented]
    if inspect.isclass(value) and issubclass(value, (BaseException, int)) or name.endswith(".Implementation"):
        missing = []
    assert not missing, f"{name}: parameters not documented: {missing}"
    if parameters(value) and not inspect.isclass(value):
        assert "Parameters" in found, f"{name}: no Parameters section"
    if inspect.isfunction(value) and name.startswith("simdbind.") and name.count(".") == 1:
        assert "Returns" in found, f"{name}: no Returns section"
        assert "Raises" in found or name in RAISE_NOTHING, f"{name}: no Raises section"


def docstring_examples() -> list[tuple[str, doctest.DocTest]]:
    finder = doctest.DocTestFinder(recurse=False)
    tests = {}
    for name, value in PUBLIC:
        target = value.fget if isinstance(value, property) else value
        for test in finder.find(target, name, globs={}):
            if test.examples:
                tests[name] = test
    return sorted(tests.items())


EXAMPLES = docstring_examples()


@pytest.mark.parametrize("name, test", EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_the_docstring_examples_run(name, test):
    # The names the manual's doctest build gives every example (docs/conf.py, doctest_global_setup).
    test.globs = {"np": np, "simdbind": simdbind}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    output: list[str] = []
    runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)


# -- the guide pages and the README ----------------------------------------------------------------------------
GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md"))


@pytest.mark.parametrize("page", [p for p in GUIDE if "```python" in p.read_text()], ids=lambda p: p.name)
def test_every_python_block_of_a_guide_page_runs(page, tmp_path):
    blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)
    script = tmp_path / "page.py"
    script.write_text("\n".join(blocks))
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_readme_is_a_front_door():
    lines = README.read_text().splitlines()
    assert len(lines) <= 260, f"README.md has {len(lines)} lines: move the detail into the manual (docs/)"


def markdown_links(path: Path) -> Iterator[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"\w+:", target) and not target.startswith("#"):
            yield target.split("#")[0]


@pytest.mark.parametrize("page", [README, *sorted((ROOT / "docs").rglob("*.md"))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_to_a_file(page):
    if "_build" in page.parts:
        return
    broken = [target for target in markdown_links(page) if not (page.parent / target).exists()]
    assert not broken, f"{page.name}: {broken}"


def test_the_manual_lists_every_page():
    """Sphinx warns about a page that no table of contents lists, and CI builds with warnings as errors: every page
    of docs/ is named, or matched, by one of index.md's tables of contents."""
    index = (ROOT / "docs" / "index.md").read_text()
    blocks = re.findall(r"```\{toctree\}\n(.*?)```", index, re.S)
    entries = [re.sub(r"^.*<(.*)>$", r"\1", line.strip()) for block in blocks for line in block.splitlines()
               if line.strip() and not line.startswith(":")]
    matches: Callable[[str], bool] = lambda name: any(Path(name).match(entry) for entry in entries)
    pages = [p.relative_to(ROOT / "docs").with_suffix("").as_posix() for p in (ROOT / "docs").rglob("*.md")
             if "_build" not in p.parts and p.name != "index.md"]
    pages += [p.relative_to(ROOT / "docs").with_suffix("").as_posix() for p in (ROOT / "docs" / "api").glob("*.rst")
              if p.name != "index.rst"]
    unlisted = [page for page in pages if not matches(page) and not page.startswith("api/")]
    assert not unlisted, unlisted
