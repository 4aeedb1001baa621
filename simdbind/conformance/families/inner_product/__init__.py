"""The inner-product family: InnerProduct32f, InnerProductLayerForward and InnerProduct8i (simdbind.inner_product).

Its registry: importing this package registers the functions its ``cases.py`` defines; :data:`FUNCTIONS` names
them in registration order. The other files of this folder: ``reference.py``, ``peers.py``, ``deviations.json``
(docs/guide/layout.md)."""

from simdbind.conformance.families import functions
from simdbind.conformance.families.inner_product import cases as _cases  # noqa: F401  (registers the functions)

FUNCTIONS = functions("inner_product")
