"""Sphinx configuration of the simdbind manual.

Build (from the repository root, after ``python -m pip install -e '.[docs]'``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
    python -m sphinx -W --keep-going -b doctest docs docs/_build/doctest

The API reference is generated from the numpydoc docstrings of :mod:`simdbind` and :mod:`simdbind.conformance`;
the guide pages and the performance and upstream logs are Markdown (MyST). Every ``>>>`` example runs in the
doctest build against the bundled library.
"""

from __future__ import annotations

import importlib.metadata

project = "simdbind"
author = "the simdbind authors"
copyright = "the simdbind authors"
release = importlib.metadata.version("simdbind")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# The benchmark tables are written by `simdbind bench --md` and start at a third-level heading.
suppress_warnings = ["myst.header"]

# No intersphinx inventory is fetched (the build runs offline): the mapping is empty, references to NumPy's types
# stay plain text.
intersphinx_mapping: dict[str, tuple[str, str | None]] = {}

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the signature shows them; numpydoc's Parameters sections say the rest
autodoc_default_options = {"members": True, "show-inheritance": True}

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# Every public callable documents its parameters, what it returns and an example (the build fails otherwise).
numpydoc_validation_checks = {"PR01", "PR02", "EX01"}

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# The doctests run against the bundled library at its best ISA, in one namespace per document.
doctest_global_setup = """
import numpy as np
import simdbind
"""

html_theme = "alabaster"
html_title = f"simdbind {release}"
