"""``ember.nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm`` and ``orthogonal``.

Each is a small module registered with ``parametrize.register_parametrization``, with
PyTorch's formulas, buffers and ``state_dict`` keys (``parametrizations.weight.original0``
for weight norm's ``g``, ``...original1`` for ``v``; ``parametrizations.weight.0._u`` for
spectral norm's left singular vector estimate).
"""

from __future__ import annotations

from typing import Any

import ember as E

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .._functional.linear import normalize
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_EPS = {"float64": 2.220446049250313e-16, "float16": 0.0009765625, "bfloat16": 0.0078125}


def norm_except_dim(v: Tensor, pow: float, dim: int) -> Tensor:
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept for broadcasting.

    ``dim=-1`` means the norm of the whole tensor (PyTorch's convention for weight norm).
    """
    if dim == -1:
        return E.linalg.vector_norm(v, pow)
    dims = [d for d in range(v.dim()) if d != dim]
    return E.linalg.vector_norm(v, pow, dim=dims, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``w = g * v / ||v||`` with the norm taken over all dimensions except ``dim``."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.name`` into a magnitude ``g`` (``original0``) and direction ``v`` (``original1``).

    ``w = g * v / ||v||``, the norm over every dimension but ``dim`` (``None``: the whole
    tensor). Example: ``m = weight_norm(nn.Linear(20, 40))``; ``m.parametrizations.weight.original0``
    has shape ``(40, 1)``.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat(state_dict: dict, prefix: str, *args: Any) -> None:
        # checkpoints of the hook-based weight_norm store name_g / name_v
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(compat)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # Updates the buffers in place, as PyTorch does, so the estimate persists across calls.
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(E.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(E.mv(weight_mat.mH, self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = E.vdot(u, E.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _is_transposed_conv(module: Module) -> bool:
    return type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") or any(
        c.__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") for c in type(module).__mro__
    )


def _tensor_attr(module: Module, name: str) -> Tensor:
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")  # noqa: TRY004 (PyTorch raises ValueError)
    return weight


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.name`` by its largest singular value, estimated by power iteration.

    ``w = W / sigma(W)``, ``sigma = u^T W v`` with ``u``, ``v`` refined by
    ``n_power_iterations`` steps per training-mode access (none in eval mode). ``dim``
    defaults to 1 for transposed convolutions, else 0. Example:
    ``m = spectral_norm(nn.Linear(20, 40))``.
    """
    weight = _tensor_attr(module, name)
    if dim is None:
        dim = 1 if _is_transposed_conv(module) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


_ORTH_MAPS = ("matrix_exp", "cayley", "householder")


def _eps(dtype: Any) -> float:
    return _EPS.get(str(dtype).replace("ember.", ""), 1.1920928955078125e-07)


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    eye = E.eye(k, dtype=q.dtype)
    return bool(E.allclose(q.mH @ q, eye, atol=10.0 * n * _eps(q.dtype)))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of ``a = QR`` with ``diag(R) >= 0`` (unique for full-rank ``a``)."""
    q, r = E.linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """``H_1 ... H_k`` times ``eye(n, k)``, ``H_i = I - tau_i v_i v_i^H``, ``v_i = a[:, i] + e_i``.

    Written in ember ops (``a`` is strictly lower triangular here) because
    ``linalg.householder_product`` records no derivative.
    """
    n, k = a.shape[-2], a.shape[-1]
    eye = E.eye(n, dtype=a.dtype)
    q = eye[:, :k].expand(*a.shape[:-2], n, k)
    for i in reversed(range(k)):
        v = (a[..., :, i] + eye[:, i]).unsqueeze(-1)
        q = q - tau[..., i].unsqueeze(-1).unsqueeze(-1) * (v @ (v.mH @ q))
    return q


def _geqrf(a: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's ``geqrf`` (Householder QR, ``dlarfg``'s sign convention) in ember ops.

    Returns R on and above the diagonal, the reflectors' tails below it, and ``tau``.
    Runs without recording (it only serves ``right_inverse``).
    """
    a = a.clone()
    n, k = a.shape[-2], a.shape[-1]
    taus = []
    for j in range(k):
        col = a[..., j:, j]
        alpha, tail = col[..., 0], col[..., 1:]
        xnorm = E.linalg.vector_norm(tail, dim=-1) if n - j > 1 else E.zeros_like(alpha)
        no_reflect = xnorm == 0
        norm = E.sqrt(alpha * alpha + xnorm * xnorm)
        beta = E.where(no_reflect, alpha, E.where(alpha >= 0, -norm, norm))
        tau = E.where(no_reflect, E.zeros_like(alpha), (beta - alpha) / E.where(no_reflect, 1.0, beta))
        v_tail = tail / E.where(no_reflect, 1.0, alpha - beta).unsqueeze(-1)
        if j + 1 < k:
            v = E.cat([E.ones_like(alpha).unsqueeze(-1), v_tail], -1).unsqueeze(-1)
            rest = a[..., j:, j + 1 :]
            a[..., j:, j + 1 :] = rest - tau.unsqueeze(-1).unsqueeze(-1) * (v @ (v.mT @ rest))
        a[..., j, j] = beta
        a[..., j + 1 :, j] = v_tail
        taus.append(tau)
    return a, E.stack(taus, -1)


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def _skew_map(self, x: Tensor, n: int, k: int) -> Tensor:
        x = x.tril()
        if n != k:
            pad = x.new_zeros(n, n - k).expand(*x.shape[:-2], n, n - k)
            x = E.cat([x, pad], dim=-1)
        a = x - x.mH
        if self.orthogonal_map == "matrix_exp":
            q = E.matrix_exp(a)
        else:
            eye = E.eye(n, dtype=a.dtype)
            q = E.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
        return q[..., :k] if n != k else q

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            q = self._skew_map(x, n, k)
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = _householder_product(a, tau)
            # the diagonal of x holds +-1 signs: not differentiated, hence the cast
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(q)

    def _right_inverse(self, q: Tensor) -> Tensor:
        if q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape {q.shape}."
            )
        q_init = q
        n, k = q.shape[-2], q.shape[-1]
        transposed = n < k
        if transposed:
            q = q.mT
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map != "householder":
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley parametrizations "
                    "when use_trivialization=False."
                )
            a, tau = _geqrf(q)
            # the diagonal stores the signs of R; reflectors with tau == 0 flip it (see forward)
            signs = a.diagonal(dim1=-2, dim2=-1).sign()
            a.diagonal(dim1=-2, dim2=-1).copy_(E.where(tau == 0, -signs, signs))
            return a.mT if transposed else a
        if n == k:
            q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
        else:
            extra = E.randn(*(tuple(q.shape[:-2]) + (n, n - k)), dtype=q.dtype)
            q = _make_orthogonal(E.cat([q, extra], dim=-1))
        self.base = q
        # -Id: householder(zeros) and the skew maps of -Id all give the identity
        neg_id = E.zeros_like(q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain ``module.name`` to orthogonal (or unitary) matrices.

    ``orthogonal_map`` is ``"matrix_exp"`` (default for square or complex weights),
    ``"cayley"`` or ``"householder"`` (default otherwise). Registering keeps the current
    weight's orthogonal factor as the starting point. Example:
    ``m = orthogonal(nn.Linear(20, 40))``; ``m.weight.T @ m.weight`` is the identity.
    """
    weight = _tensor_attr(module, name)
    if weight.dim() < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions."
        )
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _ORTH_MAPS:
        raise ValueError(
            f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: {orthogonal_map}'
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
