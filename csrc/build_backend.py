"""The PEP 517 build backend: scikit-build-core's, with one change to the editable wheel.

An editable install of scikit-build-core puts an import redirect, ``_editable_skbc_simdbind.py``, at the top of
site-packages, and a ``.pth`` file imports it at every interpreter start. Because simdbind's distribution declares a
``pytest11`` entry point, pytest marks every top-level module of the distribution for assertion rewriting, finds the
redirect already imported and prints ``PytestAssertRewriteWarning`` in every pytest run of every project in that
environment (pytest exempts only setuptools' ``__editable__`` finders). pytest skips a module whose docstring holds
``PYTEST_DONT_REWRITE``; the redirect is generated without a docstring, so this backend gives it one and rewrites the
wheel's RECORD line for it. Everything else is scikit-build-core's, unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path
from typing import Any

from scikit_build_core.build import (  # noqa: F401 (re-exported: the PEP 517 hooks this backend leaves as they are)
    build_sdist,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)
from scikit_build_core.build import build_editable as _build_editable

REDIRECT_PREFIX = "_editable_skbc_"
DOCSTRING = b'"""scikit-build-core\'s editable import redirect for simdbind. PYTEST_DONT_REWRITE"""\n'


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    name: str = _build_editable(wheel_directory, config_settings, metadata_directory)
    mark_redirect_dont_rewrite(Path(wheel_directory) / name)
    return name


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def mark_redirect_dont_rewrite(wheel: Path) -> bool:
    """Give the wheel's top-level redirect module the docstring pytest reads; False if it has none (a later
    scikit-build-core may name or shape it differently: the wheel is then left as it is)."""
    with zipfile.ZipFile(wheel) as source:
        entries = [(info, source.read(info)) for info in source.infolist()]
    redirects = [info.filename for info, _ in entries
                 if info.filename.startswith(REDIRECT_PREFIX) and info.filename.endswith(".py")]
    if len(redirects) != 1:
        return False
    redirect = redirects[0]
    rewritten: list[tuple[zipfile.ZipInfo, bytes]] = []
    new_line = ""
    for info, data in entries:
        if info.filename == redirect and DOCSTRING not in data:
            data = DOCSTRING + data
        if info.filename == redirect:
            new_line = record_line(redirect, data)
        rewritten.append((info, data))
    temporary = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(temporary, "w") as target:
        for info, data in rewritten:
            if info.filename.endswith(".dist-info/RECORD"):
                lines = [new_line if line.split(",", 1)[0] == redirect else line
                         for line in data.decode().splitlines()]
                data = ("\n".join(lines) + "\n").encode()
            target.writestr(info, data)
    temporary.replace(wheel)
    return True
