"""Case grids, one module per simdbind family. Importing this package imports (and so registers) every module."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
