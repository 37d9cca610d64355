"""``ember.onnx.export``: trace a model (``ember.jit``) and write it as an ONNX model.

PyTorch's signature and behaviour for the common case: the model runs once in eval mode on
``args``; parameters and buffers become initializers; each recorded op maps to ONNX operators
through one table (``_table.TABLE``; an op with no entry raises ``UnsupportedOperatorError``
naming it); inputs and outputs carry their dtypes and shapes, with the ``dynamic_axes`` as
symbolic dimensions. With ``do_constant_folding`` the ops that read no input (a weight's
transpose, a mask built from sizes) are computed once and stored as initializers. The model
is built with the ``onnx`` package and checked with ``onnx.checker`` before it is written.
Needs ``pip install onnx``.
"""

from __future__ import annotations

import enum
import os
import warnings
from typing import IO, Any

from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.jit import Graph, TracedGraph, Value, _tensors
from ember.jit import record as _record
from ember.jit._graph import flatten
from ember.nn.modules.module import Module

from . import errors
from .errors import OnnxExporterError, UnsupportedOperatorError

__all__ = [
    "OnnxExporterError",
    "TrainingMode",
    "UnsupportedOperatorError",
    "errors",
    "export",
    "is_in_onnx_export",
]

DEFAULT_OPSET = 17
_MIN_OPSET, _MAX_OPSET = 17, 21


_exporting: list[bool] = []


def is_in_onnx_export() -> bool:
    """True while ``export`` runs the model (code may take an export-friendly path)."""
    return bool(_exporting)


class TrainingMode(enum.IntEnum):
    """Which mode the model is exported in (only EVAL: dropout and batch statistics are off)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def _split_args(args: Any, kwargs: dict | None) -> tuple[tuple, dict]:
    if isinstance(args, Tensor):
        args = (args,)
    elif not isinstance(args, tuple):
        raise TypeError(f"export: args must be a Tensor or a tuple, got {type(args).__name__}")
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):  # PyTorch's convention: a trailing dict is kwargs
        kwargs.update(args[-1])
        args = args[:-1]
    return args, kwargs


def _dims(shape: tuple, axes: Any, name: str) -> list:
    dims: list = list(shape)
    if isinstance(axes, dict):
        for axis, label in axes.items():
            dims[axis] = str(label)
    elif axes is not None:
        for axis in axes:
            dims[axis] = f"{name}_dynamic_axes_{axis + 1}"
    return dims


def export(
    model: Any,
    args: Any = (),
    f: str | os.PathLike | IO[bytes] | None = None,
    *,
    kwargs: dict | None = None,
    verbose: bool | None = None,
    input_names: list[str] | None = None,
    output_names: list[str] | None = None,
    opset_version: int | None = None,
    dynamo: bool = True,
    external_data: bool = True,
    dynamic_shapes: Any = None,
    optimize: bool = True,
    export_params: bool = True,
    keep_initializers_as_inputs: bool = False,
    dynamic_axes: dict[str, Any] | None = None,
    training: TrainingMode = TrainingMode.EVAL,
    do_constant_folding: bool = True,
) -> None:
    """Export ``model`` (a Module or function) run on ``args`` to the ONNX file ``f``.

    PyTorch's keyword-only signature. ember has one exporter: ``dynamo``, ``external_data`` and
    ``optimize`` are accepted and change nothing (initializers are stored in the file);
    symbolic dimensions come from ``dynamic_axes`` (``dynamic_shapes`` is refused)."""
    import onnx

    if f is None:
        raise ValueError("ember.onnx.export writes a file: pass f (a path or a binary file object)")
    if dynamic_shapes is not None:
        raise OnnxExporterError("ember.onnx.export takes dynamic_axes; dynamic_shapes is not supported")

    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not _MIN_OPSET <= opset <= _MAX_OPSET:
        raise ValueError(
            f"Unsupported ONNX opset version: {opset}; ember exports opsets {_MIN_OPSET} to {_MAX_OPSET}"
        )
    if isinstance(model, TracedGraph):
        model = model.original  # traced again here, on these arguments
    if training == TrainingMode.TRAINING or (
        training == TrainingMode.PRESERVE and isinstance(model, Module) and model.training
    ):
        raise OnnxExporterError("ember.onnx.export exports in eval mode only (training=TrainingMode.EVAL)")
    if not export_params:
        raise OnnxExporterError(
            "ember.onnx.export stores the parameters: export_params=False is not supported"
        )
    args, kw = _split_args(args, kwargs)
    was_training = isinstance(model, Module) and model.training
    if was_training:
        model.train(False)
    _exporting.append(True)
    try:
        with no_grad():
            graph, _ = _record(model, args, kw)
            proto = _build(
                graph,
                _tensors((args, kw)),
                opset,
                input_names,
                output_names,
                dynamic_axes or {},
                do_constant_folding,
                keep_initializers_as_inputs,
            )
    finally:
        _exporting.pop()
        if was_training:
            model.train(True)
    onnx.checker.check_model(proto)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    onnx.save(proto, f)


def _build(
    graph: Graph,
    examples: list,
    opset: int,
    input_names: Any,
    output_names: Any,
    dynamic_axes: dict,
    fold: bool,
    initializers_as_inputs: bool = False,
) -> Any:
    from onnx import helper

    from ._context import Context, onnx_type
    from ._table import builder_for

    cx = Context(opset)
    names_in = list(input_names or [])
    for i, v in enumerate(graph.inputs):
        cx.names[v] = names_in[i] if i < len(names_in) else (f"input.{i}" if i else "input")
    env = graph.run(examples)[1] if fold and any(n_static(n) for n in graph.nodes) else {}
    for node in graph.nodes:
        if fold and n_static(node):
            for v in node.output_values():
                cx.names[v] = cx.tensor_const(env[v], cx.fresh("fold"))
            continue
        build = builder_for(node.name)
        if build is None:
            raise UnsupportedOperatorError(
                f"Exporting the operator '{node.name}' to ONNX opset version {opset} is not supported."
            )
        results = build(cx, node)
        results = results if isinstance(results, list) else [results]
        for v, name in zip(node.output_values(), results, strict=True):
            cx.names[v] = name
    outs = [v for v in flatten(graph.outputs) if isinstance(v, Value)]
    known = (
        {cx.names[v] for v in graph.inputs}
        | set(output_names or ())
        | {f"output.{i}" if i else "output" for i in range(len(outs))}
    )
    for key in dynamic_axes:
        if key not in known:
            warnings.warn(
                f"Provided key {key} for dynamic axes is not a valid input/output name",
                UserWarning,
                stacklevel=3,
            )
    names_out = list(output_names or [])
    out_names = [
        names_out[i] if i < len(names_out) else (f"output.{i}" if i else "output") for i in range(len(outs))
    ]
    for v, name in zip(outs, out_names, strict=True):
        cx.nodes.append(helper.make_node("Identity", [cx.name_of(v)], [name], name=f"output_{name}"))

    def info(name: str, v: Value) -> Any:
        dims: list | None = _dims(v.shape, dynamic_axes.get(name), name)
        if dynamic_axes and name in out_names and name not in dynamic_axes:
            dims = None  # read back from shape inference below: it follows the dynamic inputs
        return helper.make_tensor_value_info(name, onnx_type(v.dtype), dims)

    inputs = [info(cx.names[v], v) for v in graph.inputs]
    if initializers_as_inputs:  # older runtimes want every initializer listed as an input
        inputs += [
            helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in cx.initializers.values()
        ]
    g = helper.make_graph(
        cx.nodes,
        "ember",
        inputs,
        [info(name, v) for v, name in zip(outs, out_names, strict=True)],
        list(cx.initializers.values()),
    )
    proto = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="ember")
    proto.ir_version = min(proto.ir_version, 8 if opset <= 17 else 10)
    return _infer_output_shapes(proto)


def _infer_output_shapes(proto: Any) -> Any:
    """Outputs left without a shape get the one ONNX shape inference finds (symbolic where it
    follows a dynamic input axis)."""
    import onnx

    if all(o.type.tensor_type.HasField("shape") for o in proto.graph.output):
        return proto
    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - an unknown output shape is valid ONNX; keep it unknown
        return proto
    found = {o.name: o for o in inferred.graph.output}
    for o in proto.graph.output:
        if not o.type.tensor_type.HasField("shape") and o.name in found:
            o.CopyFrom(found[o.name])
    return proto


def n_static(node: Any) -> bool:
    """Reads no graph input: computed at export time when folding constants."""
    return all(v.static for v in node.output_values())
