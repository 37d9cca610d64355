"""What an op builder writes into: ONNX nodes, initializers, and the names of graph values.

Builders (``_table.py``) receive the context and one traced node and return the ONNX names of
the node's tensor outputs. Everything they emit goes through ``op`` and ``const``, which keep
names unique; ``name_of`` turns a traced Value (or a Python scalar) into an ONNX input name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ember._creation import numpy_dtype
from ember.jit import Value
from onnx import TensorProto, helper, numpy_helper

__all__ = ["Context", "onnx_type"]

_TYPES = {
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16,
    "int64": TensorProto.INT64,
    "int32": TensorProto.INT32,
    "int16": TensorProto.INT16,
    "int8": TensorProto.INT8,
    "uint8": TensorProto.UINT8,
    "bool": TensorProto.BOOL,
}


def onnx_type(dtype: Any) -> int:
    """The ONNX element type of an ember dtype."""
    name = str(dtype).rsplit(".", 1)[-1]
    if name not in _TYPES:
        raise RuntimeError(f"ONNX export does not support dtype {dtype}")
    return _TYPES[name]


def to_numpy(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


class Context:
    """The ONNX graph being built."""

    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.nodes: list[Any] = []
        self.initializers: dict[str, Any] = {}
        self.names: dict[Value, str] = {}
        self._count = 0

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"/{hint}_{self._count}"

    def op(self, op_type: str, inputs: list[str], n_out: int = 1, **attrs: Any) -> Any:
        """Append one ONNX node; its output name (a list when ``n_out`` > 1)."""
        outs = [self.fresh(op_type) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=outs[0].lstrip("/"), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, array: Any, hint: str = "const") -> str:
        name = self.fresh(hint)
        self.initializers[name] = numpy_helper.from_array(np.asarray(array), name)
        return name

    def ints(self, values: Any) -> str:
        """An int64 1-D constant (shapes, axes, pads)."""
        return self.const(np.asarray(list(values), dtype=np.int64), "ints")

    def tensor_const(self, tensor: Any, name: str) -> str:
        """A tensor as an initializer under ``name`` (once per name)."""
        if name not in self.initializers:
            self.initializers[name] = numpy_helper.from_array(to_numpy(tensor), name)
        return name

    def name_of(self, x: Any, like: Any = None) -> str:
        """The ONNX name of a Value, or of a Python number as a constant of ``like``'s dtype."""
        if isinstance(x, Value):
            if x not in self.names:  # a parameter or constant, used for the first time
                self.names[x] = self.tensor_const(x.tensor, x.name if x.kind == "param" else self.fresh("c"))
            return self.names[x]
        if isinstance(x, (bool, int, float)):
            dtype = numpy_dtype(like.dtype) if like is not None else np.float32
            return self.const(np.asarray(x, dtype=dtype), "scalar")
        raise RuntimeError(f"ONNX export cannot use a {type(x).__name__} as a tensor")

    def cast(self, name: str, src: Any, dst: Any) -> str:
        """``name`` cast from ember dtype ``src`` to ``dst`` (as is when they match)."""
        return name if src == dst else self.op("Cast", [name], to=onnx_type(dst))
