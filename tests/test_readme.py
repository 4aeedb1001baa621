"""The README runs: every ```python block of README.md, in order and in one namespace, as a user would paste them."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def readme_python() -> str:
    """The README's Python blocks, one after the other (later blocks use the names earlier ones define)."""
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)
    assert blocks, "README.md has no ```python block"
    return "\n".join(f"# -- README block {i}\n{block}" for i, block in enumerate(blocks, 1))


def test_every_python_block_of_the_readme_runs(tmp_path):
    script = tmp_path / "readme_examples.py"
    script.write_text(readme_python())
    # A fresh interpreter in an empty directory: the examples change process-wide state (the default library,
    # the ISA, thread counts) and must not depend on the tests' state.
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
