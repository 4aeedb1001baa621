"""A user of simdbind has no copy of the ABI notes the bindings were written from, so nothing under simdbind/ may
cite them by section ("spec 3.7", "§4.2", "SIMD_SYNET_ABI.md"): a docstring, comment, message or catalogue entry
says what the section says, or points into the repository (a README section, a catalogue id, docs/) or at upstream's
own source files."""

from __future__ import annotations

import json
import re

from tests.test_readme import ROOT

#: A citation of the notes: a section number after "spec", the section sign, the notes' file name, "the spec".
CITATION = re.compile(r"\bspec(?:'s)?\s+(?:section\s+)?\d+(?:\.\d+)*|§|SIMD_SYNET_ABI|\bthe spec\b|\bseed page",
                      re.IGNORECASE)
#: A catalogue entry's "spec" that is a bare section number ("3.12.3 item 1").
SECTION_NUMBER = re.compile(r"^\s*\d+(\.\d+)*\b")
TEXT_FILES = (".py", ".pyi", ".c", ".h", ".md", ".json", ".txt")



def citations(path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [f"{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if CITATION.search(line)]
    if path.suffix == ".json" and path.parent.name == "deviations":
        found += [f"{entry['id']}: spec {entry['spec']!r}" for entry in json.loads(text)
                  if SECTION_NUMBER.match(entry["spec"])]
    return found


def test_nothing_under_simdbind_cites_the_abi_notes_by_section():
    cited = {}
    for path in sorted((ROOT / "simdbind").rglob("*")):
        if path.suffix in TEXT_FILES and "__pycache__" not in path.parts:
            found = citations(path)
            if found:
                cited[path.relative_to(ROOT).as_posix()] = found
    assert not cited, "say what the section says, or point into the repository:\n" + "\n".join(
        f"{name}:{line}" for name, found in cited.items() for line in found)


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
