"""Importing this module registers every family's functions (:func:`simdbind.conformance.families.register`) in
:data:`REGISTRY`, the suite's functions by name."""

from simdbind.conformance import families
from simdbind.conformance.model import REGISTRY

families.register()

__all__ = ["REGISTRY"]
