"""Views, joins, splits, indexing and scatter ops, and Tensor-only methods."""

from __future__ import annotations

import ember

from .table_spec import E, Entry, U, idx

_I = idx([[0, 2, 1], [1, 0, 0]])  # an index into dim 1 of a (2, 3) input
_MASK = ember.tensor([[True, False, True], [False, True, False]])
_ROWS = idx([1, 0])
_X = U(2, 3)

_UNARY_VIEWS = [
    "t",
    "adjoint",
    "flatten",
    "squeeze",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "fliplr",
    "flipud",
    "alias_copy",
    "t_copy",
    "diagflat",
]

ENTRIES: list[Entry] = [
    *(E(n) for n in _UNARY_VIEWS),
    E("reshape", _X, (3, 2)),
    E("view_copy", _X, (3, 2)),
    E("Tensor.view", _X, 3, 2),
    E("Tensor.view_as", _X, U(3, 2)),
    E("Tensor.reshape_as", _X, ember.zeros(6)),
    E("Tensor.expand", U(2, 1), 2, 3),
    E("Tensor.expand_as", U(2, 1), ember.zeros(2, 3)),
    E("expand_copy", U(2, 1), (2, 3)),
    E("broadcast_to", U(2, 1), (2, 3)),
    E("broadcast_tensors", U(2, 1), U(3)),
    E("Tensor.repeat", _X, 2, 1),
    E("Tensor.sum_to_size", _X, 1, 3),
    E("Tensor.contiguous", U(3, 2), fn=lambda x: x.t().contiguous()),
    E("Tensor.to", _X, fn=lambda x: x.to(ember.float32).to(ember.float64), eps=1e-2, atol=1e-4),
    E("Tensor.double", _X),
    E("Tensor.float", _X, fn=lambda x: x.float().double(), eps=1e-2, atol=1e-4),
    E("Tensor.half", _X, fn=lambda x: x.half().double(), eps=1e-1, atol=1e-2, rtol=1e-2),
    E("Tensor.bfloat16", _X, fn=lambda x: x.bfloat16().double(), eps=1e-1, atol=1e-1, rtol=1e-1),
    E("Tensor.cdouble", _X, fn=lambda x: ember.view_as_real(x.cdouble())),
    E("Tensor.cfloat", _X, fn=lambda x: ember.view_as_real(x.cfloat()).double(), eps=1e-2, atol=1e-4),
    E("Tensor.copy_", _X, U(3), fn=lambda x, y: x.clone().copy_(y)),
    E("Tensor.fill_", _X, fn=lambda x: x.clone().fill_(0.5) * x),
    E("Tensor.zero_", _X, fn=lambda x: x.clone().zero_() + x),
    E("Tensor.type", _X, fn=lambda x: x.type(ember.float64)),
    E("Tensor.type_as", _X, ember.zeros(1, dtype=ember.float64)),
    E("Tensor.cpu", _X),
    E("permute", U(2, 3, 2), (2, 0, 1)),
    E("permute_copy", U(2, 3, 2), (2, 0, 1)),
    *(E(n, U(2, 3, 2), 0, 2) for n in ("transpose", "swapaxes", "swapdims", "transpose_copy")),
    *(E(n, U(2, 3, 2), 0, 2) for n in ("movedim", "moveaxis")),
    E("unsqueeze", _X, 1),
    E("unsqueeze_copy", _X, 1),
    E("squeeze", U(2, 1, 3), 1, case="dim"),
    E("squeeze_copy", U(2, 1, 3), 1),
    E("unflatten", U(2, 4), 1, (2, 2)),
    E("narrow", U(2, 4), 1, 1, 2),
    E("narrow_copy", U(2, 4), 1, 1, 2),
    E("select", _X, 1, 2),
    E("select_copy", _X, 1, 2),
    E("diagonal", U(3, 3), 1),
    E("diagonal_copy", U(3, 3)),
    E("diag", U(3, 3)),
    E("diag", U(3), case="vector"),
    E("diag_embed", _X),
    E("trace", U(3, 3)),
    E("tril", U(3, 3)),
    E("triu", U(3, 3), 1),
    E("flip", _X, 0, 1),
    E("roll", _X, 1, 1),
    E("rot90", _X),
    E("tile", _X, (2, 1)),
    E("repeat_interleave", _X, 2, 1),
    E("as_strided", U(6), (2, 2), (1, 2), 1),
    E("as_strided_copy", U(6), (2, 2), (1, 2), 1),
    E("unfold_copy", U(6), 0, 2, 2),
    E("cat", _X, U(1, 3), fn=lambda a, b: ember.cat([a, b])),
    E("concat", _X, U(1, 3), fn=lambda a, b: ember.concat([a, b])),
    E("concatenate", _X, U(1, 3), fn=lambda a, b: ember.concatenate([a, b])),
    E("stack", _X, _X, fn=lambda a, b: ember.stack([a, b], 1)),
    *(
        E(n, _X, _X, fn=lambda a, b, n=n: getattr(ember, n)([a, b]))
        for n in ("hstack", "vstack", "dstack", "column_stack", "row_stack")
    ),
    E("block_diag", U(2, 2), U(1, 3)),
    E("cartesian_prod", U(2), U(3)),
    E("combinations", U(4)),
    E("meshgrid", U(2), U(3), fn=lambda a, b: ember.meshgrid(a, b, indexing="ij")),
    E("split", U(4, 2), 2),
    E("split_copy", U(4, 2), 2),
    E("chunk", U(4, 2), 2),
    E("tensor_split", U(5, 2), 2),
    *(E(n, U(2, 4, 2), 2) for n in ("hsplit", "vsplit", "dsplit")),
    E("unbind", _X),
    E("unbind_copy", _X),
    E("gather", _X, 1, _I),
    E("take_along_dim", _X, _I, 1),
    E("index_select", _X, 1, idx([2, 0, 2])),
    E("index_add", _X, 0, _ROWS, _X, alpha=2.0),
    E("index_copy", _X, 0, _ROWS, _X),
    E("index_fill", _X, 1, idx([0, 2]), 0.5),
    E("index_reduce", _X, 0, idx([1, 1]), _X, "prod"),
    E("index_put", _X, (_ROWS,), _X),
    E("index_put", _X, (_ROWS,), _X, True, case="accumulate"),
    E("put", _X, idx([0, 4]), U(2)),
    E("scatter", _X, 1, idx([[0, 2], [1, 0]]), U(2, 2)),
    E("scatter_add", _X, 1, _I, _X),
    E("scatter_reduce", _X, 1, idx([[0, 2], [1, 0]]), U(2, 2), "sum"),
    E("scatter_reduce", _X, 1, idx([[0, 2], [1, 1]]), U(2, 2), "amax", case="amax"),
    E("masked_scatter", _X, _MASK, U(6)),
    E("diagonal_scatter", U(3, 3), U(3)),
    E("select_scatter", _X, U(3), 0, 1),
    E("slice_scatter", U(4, 3), U(2, 3), 0, 0, 4, 2),
    E("vander", U(3)),
    E("kron", U(2, 2), U(2, 3)),
    E("Tensor.__getitem__", _X, fn=lambda x: x[ember.tensor([1, 0, 1]), 1:]),
    E("Tensor.__setitem__", _X, U(2), fn=lambda x, v: _setitem(x, v)),
]


def _setitem(x: ember.Tensor, v: ember.Tensor) -> ember.Tensor:
    y = x.clone()
    y[:, 1] = v
    return y
