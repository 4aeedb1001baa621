"""OpenVINO's prepared calls (``prepare`` of the public API, what ``simdbind bench`` times), for every function
the adapter has: the adapter runs once, and the call repeats only the engine's own work on what it built and fed
(see :func:`_graph.prepared`)."""

from __future__ import annotations

import functools

from simdbind.conformance.engines.openvino import implementation
from simdbind.conformance.engines.openvino._graph import prepared

for _name, (_adapter, _) in list(implementation.functions.items()):
    implementation.preparer(_name)(functools.partial(prepared, _adapter))
