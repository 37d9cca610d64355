"""Running a composite op: the backend's kernel, else its decomposition, else the CPU.

``run_composite`` uses the tensor's backend kernel when it registers one; otherwise the
composite's decomposition into primitives (registered here with ``decomposition``, so a
backend with only the primitives runs it on its own device); otherwise the CPU backend's
kernel on host copies, copied back: a CPU fallback under the user's policy, and reported
as one by ``ember info`` and the conformance suite.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends import COMPOSITES, DTYPES_BY_NAME, DType, registry

from .._device import canonical
from .._dispatch import call, has_kernel, to_host
from .._dtype import pt_name
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record

__all__ = [
    "DECOMPOSITIONS",
    "NoRecord",
    "composed",
    "decomposed_kernel",
    "decomposition",
    "not_implemented_for",
    "run_composite",
]

# op -> fn(*tensors, *params) -> Tensor or tuple of Tensors, written in ember ops.
DECOMPOSITIONS: dict[str, Callable[..., Any]] = {}


def decomposition(op: str, keeps_dtype: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as composite ``op``'s decomposition into ember ops (and tell the registry).

    ``fn`` takes the composite's tensor arguments as Tensors then its parameters, in the order
    of ``ember.backends.ops``, and returns Tensors of the dtypes the composite promises;
    ``keeps_dtype``: the result is cast back to the first input's dtype (``fn`` may widen).
    """

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        DECOMPOSITIONS[op] = _cast_back(fn) if keeps_dtype else fn
        registry.declare_decomposition(op, lambda lb: decomposed_kernel(lb, op))
        return fn

    return register


def _cast_back(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(x: Tensor, *rest: Any) -> Tensor:
        out = fn(x, *rest)
        return out if out.dtype is x.dtype else out.to(x.dtype)

    run.__name__, run.__doc__ = fn.__name__, fn.__doc__
    return run


def declare_inline(*ops: str) -> None:
    """Composites whose frontend function decomposes them itself when ``k[op]`` is None."""
    for op in ops:
        registry.declare_decomposition(op)


class NoRecord:
    """Grad mode off for a block (the caller records one node itself)."""

    __slots__ = ("prev",)

    def __enter__(self) -> None:
        self.prev = _grad.enabled
        _grad.enabled = False

    def __exit__(self, *exc: object) -> None:
        _grad.enabled = self.prev


def _shape(be: Any, data: Any) -> tuple[int, ...]:
    shape = getattr(data, "shape", None)
    if shape is None:
        shape = to_host(be, data).shape
    return tuple(int(s) for s in shape)


_KINDS = {"bool": (0,), "int": (0, 1), "complex": (3,)}


def not_implemented_for(kernel: str, t: Any, *kinds: str) -> None:
    """PyTorch's ``"kernel" not implemented for 'Long'`` (a NotImplementedError, which is a
    RuntimeError) when ``t``'s dtype is of ``kinds``.

    ``kinds``: ``bool``, ``int`` (integers and bool), ``complex``, ``half`` (float16, bfloat16).
    """
    if not isinstance(t, Tensor):
        return
    dt = t.dtype
    for kind in kinds:
        hit = dt.name in ("float16", "bfloat16") if kind == "half" else dt.category in _KINDS[kind]
        if hit:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{pt_name(dt)}'")


def run_composite(name: str, tensors: tuple[Tensor, ...], params: tuple, dtypes: Any) -> Any:
    """Run composite ``name`` on ``tensors`` with ``params``; wrap outputs with ``dtypes``.

    The backend's kernel (or the CPU fallback the dispatcher resolved for it) where it has
    one, else the decomposition on the tensors' own device. ``dtypes`` is one DType (one
    output) or a tuple of them (a tuple of outputs).
    """
    x = tensors[0]
    be, dev = x._be, x._device
    if not has_kernel(be, name):
        with NoRecord():
            return _decompose(DECOMPOSITIONS[name], tensors, params, dtypes)
    out = call(be, name, *(t._data for t in tensors), *params)
    if isinstance(dtypes, DType):
        return wrap(out, be, dev, dtypes, _shape(be, out))
    return tuple(wrap(o, be, dev, d, _shape(be, o)) for o, d in zip(out, dtypes))


def _decompose(fn: Callable[..., Any], tensors: tuple, params: tuple, dtypes: Any) -> Any:
    """Run a decomposition and hold it to the composite's promised dtypes."""
    out = fn(*tensors, *params)
    if isinstance(dtypes, DType):
        return out if out.dtype is dtypes else out.to(dtypes)
    return tuple(o if o.dtype is d else o.to(d) for o, d in zip(out, dtypes))


def decomposed_kernel(lb: Any, op: str) -> Callable[..., Any]:
    """Composite ``op``'s decomposition as a kernel on ``lb``'s native arrays (for the
    conformance suite, which calls kernels): wraps the arrays as Tensors, runs, unwraps."""
    fn = DECOMPOSITIONS[op]
    n = COMPOSITES[op].inputs

    def kernel(*args: Any) -> Any:
        tensors = _tensor_args(lb, args[:n])
        with NoRecord():
            out = fn(*tensors, *args[n:])
        if isinstance(out, tuple):
            return tuple(None if o is None else o._data for o in out)
        return out._data

    return kernel


def _tensor_args(lb: Any, args: tuple) -> tuple[Tensor | None, ...]:
    """Native arrays as Tensors; a Python scalar in an array's place (elementwise kernels allow
    it) becomes a tensor of the first array's shape and dtype; None (an optional array absent:
    a mask, a weight) stays None."""
    like = next(_as_tensor(lb, a) for a in args if isinstance(a, lb.backend.array_type))
    return tuple(
        None if a is None else _as_tensor(lb, a) if isinstance(a, lb.backend.array_type) else _filled(like, a)
        for a in args
    )


def _filled(like: Tensor, value: Any) -> Tensor:
    data = call(like._be, "full", like._shape, value, like.dtype, like._device.index or 0)
    return wrap(data, like._be, like._device, like.dtype, like._shape)


def _as_tensor(lb: Any, data: Any) -> Tensor:
    host = to_host(lb, data)
    dev = canonical(lb.name, lb.backend.index_of(data))
    return wrap(data, lb, dev, DTYPES_BY_NAME[host.dtype.name], tuple(int(s) for s in host.shape))


def composed(fn: Callable[..., Tensor], node: str, rule: Callable[..., Any]) -> Callable[..., Tensor]:
    """An op computed by ``fn`` without recording, then given one node ``node``.

    ``rule(node, grad)`` sees ``node.ctx == (inputs, out, kwargs)``.
    """

    def op(*inputs: Any, **kwargs: Any) -> Tensor:
        with NoRecord():
            out = fn(*inputs, **kwargs)
        if _grad.enabled and any(getattr(t, "requires_grad", False) for t in inputs):
            record(node, rule, out, inputs, (), (inputs, out, kwargs))
        return out

    op.__name__ = fn.__name__
    op.__doc__ = fn.__doc__
    return op
