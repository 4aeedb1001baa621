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
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# The benchmark tables are written by `simdbind bench --md` and start at a third-level heading.
suppress_warnings = ["myst.header"]

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the Parameters sections say what each argument takes, in words
autodoc_default_options = {"members": True, "show-inheritance": True}

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# Every public callable documents its parameters and an example, or the build fails (tests/test_docs.py checks the
# Returns and Raises sections too).
numpydoc_validation_checks = {"PR01", "PR02", "EX01"}
# Not checked: the enumerations' and dataclasses' constructors (their members and fields are documented as
# attributes; users get these objects from simdbind, not by constructing them), the protocol's, and the constants.
numpydoc_validation_exclude = {
    r"\.(EltwiseOperation|UnaryOperation|Activation|TensorFormat|TensorData)$",
    r"\.(Library|ActivationSpec|Case|Implementation)$",
    r"\.(ISAS|PARAMETER_NAMES)$",
}

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# The doctests run against the bundled library at its best ISA, in one namespace per document.
doctest_global_setup = """
import numpy as np
import simdbind
"""

html_theme = "alabaster"
html_title = f"simdbind {release}"
