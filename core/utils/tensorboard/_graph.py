"""``add_graph``: the ops ``ember.jit``'s tracer records, as the GraphDef TensorBoard draws.

Nodes are named and typed as PyTorch's writer does: ``input/<name>`` and ``output/output.N``
are ``IO Node``s, parameters are ``prim::GetAttr`` under the model's scope, constants
``prim::Constant``, and each op node carries its public name (``nn.functional.linear``) as the
op and its output shape in ``_output_shapes``.
"""

from __future__ import annotations

from typing import Any

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ...autograd.grad_mode import no_grad

__all__ = ["graph"]


def _node(name: str, op: str, inputs: list[str], value: Any = None, attr: str = "") -> NodeDef:
    attrs = {"attr": AttrValue(s=attr.encode("utf_8"))}
    if value is not None:
        dims = [TensorShapeProto.Dim(size=int(s)) for s in value.shape]
        attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto(dim=dims)]))
        attrs["dtype"] = AttrValue(s=str(value.dtype).encode("utf_8"))
    return NodeDef(name=name, op=op, input=inputs, attr=attrs, device="/device:CPU:0")


def graph(
    model: Any, args: Any, verbose: bool = False, use_strict_trace: bool = True
) -> tuple[GraphDef, RunMetadata]:
    """The GraphDef of one traced forward pass of ``model`` on ``args``, and empty step stats."""
    from ...jit import Value, record
    from ...jit._graph import flatten

    inputs = args if isinstance(args, tuple) else (() if args is None else (args,))
    try:
        with no_grad():
            traced, _ = record(model, inputs)
    except Exception:
        print("Error occurs, No graph saved")
        raise
    if verbose:
        print(traced)
    scope = type(model).__name__
    names: dict[int, str] = {}
    nodes: list[NodeDef] = []

    def name_of(v: Value) -> str:
        got = names.get(id(v))
        if got is None:  # a parameter or constant, declared where first used
            op = "prim::GetAttr" if v.kind == "param" else "prim::Constant"
            got = names[id(v)] = f"{scope}/{v.name}"
            nodes.append(_node(got, op, [], v))
        return got

    for v in traced.inputs:
        names[id(v)] = f"input/{v.name}"
        nodes.append(_node(names[id(v)], "IO Node", [], v))
    for n in traced.nodes:
        ins = [name_of(v) for v in n.input_values()]
        shown = ", ".join(f"{k}={a!r}" for k, _, a in n.args if not isinstance(a, Value))
        for out in n.output_values():
            names[id(out)] = f"{scope}/{out.name}"
            nodes.append(_node(names[id(out)], n.name, ins, out, "{ " + shown + " }" if shown else ""))
    for i, out in enumerate(v for v in flatten(traced.outputs) if isinstance(v, Value)):
        nodes.append(_node(f"output/output.{i + 1}", "IO Node", [name_of(out)], out))
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), stats
