"""structlog, imported without its optional rich integration.

When rich is installed, structlog imports it for the pretty tracebacks of its ConsoleRenderer.
The scheduler never renders with it (it writes klog lines with plain tracebacks, since fancier
ones print local variables, which may hold secrets), and importing rich that way was about
a twentieth of the daemon's start-up. So the first import of structlog, which the scheduler's
loggers make through here, runs with rich looking absent; rich itself stays importable for
the code that does use it (simulate's progress bar, explain's tables).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

_OPTIONAL = "rich"


def import_structlog() -> ModuleType:
    if "structlog" in sys.modules or _OPTIONAL in sys.modules:
        return importlib.import_module("structlog")
    # A None entry makes `import rich` inside structlog fail as if rich were not installed.
    sys.modules[_OPTIONAL] = None  # type: ignore[assignment]
    try:
        return importlib.import_module("structlog")
    finally:
        del sys.modules[_OPTIONAL]
