"""The former home of the peers (now :mod:`simdbind.conformance.peers`): :class:`Unsupported` is importable from
here still, for the case modules that import it by this path."""

from simdbind.conformance.api import Unsupported

__all__ = ["Unsupported"]
