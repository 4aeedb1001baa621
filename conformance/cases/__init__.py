"""Case grids, one module per simdbind family. Importing this package registers every function."""

from conformance.cases import elementwise  # noqa: F401
