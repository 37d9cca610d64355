"""ember's backend contract: dtypes, devices, the op table, hooks and the kernel registry.

Imports nothing from the frontend; backends import only this package.
"""

from .device import device
from .dtypes import ALL_DTYPES, DTYPES_BY_NAME, DType, promote_types
from .errors import (
    BackendError,
    BackendUnavailableError,
    ContractError,
    FallbackError,
    UnsupportedDTypeError,
)
from .hookspecs import hookimpl
from .ops import ALL_OPS, COMPOSITES, PRIMITIVES, OpDef, writes_out
from .protocol import CONTRACT_VERSION, Backend
from .registry import (
    LoadedBackend,
    available,
    get,
    get_fallback_policy,
    register,
    set_fallback_policy,
    status,
    unregister,
)

__all__ = [
    "ALL_DTYPES",
    "ALL_OPS",
    "COMPOSITES",
    "CONTRACT_VERSION",
    "DTYPES_BY_NAME",
    "PRIMITIVES",
    "Backend",
    "BackendError",
    "BackendUnavailableError",
    "ContractError",
    "DType",
    "FallbackError",
    "LoadedBackend",
    "OpDef",
    "UnsupportedDTypeError",
    "available",
    "device",
    "get",
    "get_fallback_policy",
    "hookimpl",
    "promote_types",
    "register",
    "set_fallback_policy",
    "status",
    "unregister",
    "writes_out",
]
