"""ember-conformance: the pytest plugin that proves an ember backend keeps the contract.

Run it against an installed backend::

    pytest --pyargs ember_conformance --ember-backend NAME --ember-report report/NAME

See ``docs/backend-guide.md`` for the whole story (hooks, calling convention, manifest).
"""

from __future__ import annotations

from .catalog import CASES
from .records import OpCase, Sample, T

__all__ = ["CASES", "OpCase", "Sample", "T", "__version__"]

__version__ = "0.1.0"
