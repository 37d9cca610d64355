"""Random numbers from the counter-based Philox-4x32-10 primitive (DESIGN.md).

A Generator is a 64-bit seed (the Philox key) and a 64-bit offset (the counter, in blocks
of four words). Every backend produces the same words for the same (seed, offset), and the
float conversions below are exact, so the same seed gives bit-identical uniform floats on
every device. Normal samples use Box-Muller through each device's log/cos.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from typing import Any

from ember.backends import DType
from ember.backends import dtypes as D

from ._device import resolve
from ._dispatch import call
from ._dtype import get_default_dtype, pt_name
from ._ops._args import invalid_combination
from ._ops.search import searchsorted
from ._public import op, public
from ._tensor import Tensor, wrap

PUBLIC = public(
    __name__,
    {
        "bernoulli": op(),
        "get_rng_state": op(),
        "initial_seed": op(),
        "manual_seed": op(),
        "multinomial": op(),
        "normal": op(),
        "rand": op(),
        "rand_like": op(),
        "randint": op(),
        "randint_like": op(),
        "randn": op(),
        "randn_like": op(),
        "randperm": op(),
        "seed": op(),
        "set_rng_state": op(),
    },
)
__all__ = [*PUBLIC, "Generator", "default_generator", "random_words"]

_MASK64 = (1 << 64) - 1
_TWO_PI = 2.0 * math.pi


class Generator:
    """A Philox stream: ``g = ember.Generator().manual_seed(0); ember.rand(3, generator=g)``."""

    def __init__(self, device: Any = "cpu") -> None:
        # Resolved on first use: the default generator is built while ember imports, and
        # loading a backend plugin then would import it half-initialised.
        self._device_arg = device
        if device != "cpu":
            resolve(device)  # bad device names fail here, not at first use
        self._seed = 67280421310721  # PyTorch's default seed, for familiarity
        self._offset = 0

    @property
    def device(self) -> Any:
        return resolve(self._device_arg)[0]

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed) & _MASK64
        self._offset = 0
        return self

    def seed(self) -> int:
        s = int.from_bytes(os.urandom(8), "little") ^ time.time_ns()
        self.manual_seed(s)
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        from ._creation import tensor

        return tensor(
            [self._seed & 0xFFFFFFFF, self._seed >> 32, self._offset & 0xFFFFFFFF, self._offset >> 32],
            dtype=D.int64,
        )

    def set_state(self, state: Tensor) -> Generator:
        s0, s1, o0, o1 = (int(v) for v in state.tolist())
        self._seed, self._offset = s0 | (s1 << 32), o0 | (o1 << 32)
        return self

    def take(self, n: int) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
        """Key and counter for ``n`` words; advances the offset past them."""
        key = (self._seed & 0xFFFFFFFF, self._seed >> 32)
        off = self._offset
        self._offset = (off + (n + 3) // 4) & _MASK64
        return key, (off & 0xFFFFFFFF, off >> 32, 0, 0)


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator: the same seed gives the same numbers on every backend."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    default_generator.set_state(state)


def random_words(n: int, device: Any, generator: Generator | None) -> Tensor:
    """``n`` raw Philox words (int64 in [0, 2**32)) on ``device``."""
    dev, lb = resolve(device)
    key, counter = (generator or default_generator).take(n)
    return wrap(call(lb, "philox", n, key, counter, dev.index or 0), lb, dev, D.int64, (n,))


def _size(size: Sequence[Any], fn: str = "rand") -> tuple[int, ...]:
    from ._creation import _size as creation_size

    return creation_size(size, fn)


def _uniform01(n: int, dtype: DType, device: Any, generator: Generator | None) -> Tensor:
    """Exact conversions: 53 bits (two words) for float64, 24 for float32, 11 and 8 for the halves."""
    if dtype is D.float64:
        w = (
            random_words(2 * n, device, generator).reshape(n, 2)
            if n
            else random_words(0, device, generator).reshape(0, 2)
        )
        hi, lo = w[:, 0], w[:, 1]
        bits = hi * 2097152 + lo // 2048
        return bits.to(D.float64) * (2.0**-53)
    w = random_words(n, device, generator)
    # As many bits as the dtype's significand holds, so no sample rounds up to 1.0.
    width = _SIGNIFICAND_BITS.get(dtype.name, 24)
    u = (w // 2 ** (32 - width)).to(D.float32) * (2.0**-width)
    return u if dtype is D.float32 else u.to(dtype)


_SIGNIFICAND_BITS = {"float16": 11, "bfloat16": 8}


def _float_dtype(dtype: DType | None, kernel: str = "check_uniform_bounds") -> DType:
    dt = dtype or get_default_dtype()
    if dt.category != 2:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{pt_name(dt)}'")
    return dt


def rand(
    *size: Any,
    generator: Generator | None = None,
    dtype: DType | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform samples in [0, 1): ``ember.rand(2, 3)``."""
    shape = _size(size, "rand")
    dt = _float_dtype(dtype)
    n = 1
    for s in shape:
        n *= s
    out = _uniform01(n, dt, device, generator).reshape(shape).detach()
    return out.requires_grad_(True) if requires_grad else out


def _normal01(n: int, dtype: DType, device: Any, generator: Generator | None) -> Tensor:
    work = D.float64 if dtype is D.float64 else D.float32
    u = _uniform01(2 * n, work, device, generator)
    u1, u2 = u[:n], u[n:]
    z = ((1.0 - u1).log() * -2.0).sqrt() * (u2 * _TWO_PI).cos()
    return z if z.dtype is dtype else z.to(dtype)


def randn(
    *size: Any,
    generator: Generator | None = None,
    dtype: DType | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal samples: ``ember.randn(2, 3)``."""
    shape = _size(size, "randn")
    dt = _float_dtype(dtype, "normal_kernel_cpu")
    n = 1
    for s in shape:
        n *= s
    out = _normal01(n, dt, device, generator).reshape(shape).detach()
    return out.requires_grad_(True) if requires_grad else out


def randint(
    low: int,
    high: Any = None,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: DType | None = None,
    device: Any = None,
) -> Tensor:
    """Integers uniform in ``[low, high)``: ``ember.randint(10, (3,))``."""
    if size is None and high is None:
        raise invalid_combination("randint", (low,))
    if size is None:
        low, high, size = 0, low, high
    elif high is None:
        raise TypeError("randint() missing required argument 'size'")
    if isinstance(high, tuple) or high is None:
        raise TypeError("randint() received an invalid combination of arguments: expected (low, high, size)")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    shape = _size((size,) if isinstance(size, int) else tuple(size))
    n = 1
    for s in shape:
        n *= s
    span = high - low
    if span <= 1 << 32:
        w = random_words(n, device, generator)
    else:
        pair = random_words(2 * n, device, generator).reshape(n, 2)
        w = pair[:, 0] * 2147483648 + pair[:, 1] // 2
    out = (w % span + low).reshape(shape)
    dt = dtype or D.int64
    return out if dt is D.int64 else out.to(dt)


def randperm(
    n: int, *, generator: Generator | None = None, dtype: DType | None = None, device: Any = None
) -> Tensor:
    """A random permutation of ``0 .. n-1``."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    keys = random_words(n, device, generator)
    perm = keys.sort(stable=True).indices
    dt = dtype or D.int64
    return perm if dt is D.int64 else perm.to(dt)


def rand_like(input: Tensor, *, dtype: DType | None = None, device: Any = None) -> Tensor:
    return rand(
        input._shape, dtype=dtype or input.dtype, device=device if device is not None else input._device
    )


def randn_like(input: Tensor, *, dtype: DType | None = None, device: Any = None) -> Tensor:
    return randn(
        input._shape, dtype=dtype or input.dtype, device=device if device is not None else input._device
    )


def randint_like(
    input: Tensor, low: int, high: Any = None, *, dtype: DType | None = None, device: Any = None
) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(
        low,
        high,
        input._shape,
        dtype=dtype or input.dtype,
        device=device if device is not None else input._device,
    )


def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: DType | None = None,
    device: Any = None,
) -> Tensor:
    """Normal samples with ``mean`` and ``std`` (numbers or tensors, broadcast)."""
    _check_std(std)
    if size is not None:
        return randn(size, generator=generator, dtype=dtype, device=device) * std + mean
    ref = mean if isinstance(mean, Tensor) else std
    if not isinstance(ref, Tensor):
        raise TypeError("normal(): expected a size, or mean/std tensors")
    shape = ref._shape
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        from ._ops._common import broadcast_shape

        shape = broadcast_shape(mean._shape, std._shape)
    z = randn(shape, generator=generator, dtype=ref.dtype, device=ref._device)
    return z * std + mean


def _check_std(std: Any) -> None:
    """PyTorch's refusal of a negative standard deviation (a number, or any element)."""
    if isinstance(std, Tensor):
        if std.numel() and not bool((std.detach() >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif isinstance(std, (int, float)) and not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


_P_RANGE = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)"
)


def bernoulli(input: Tensor, p: Any = None, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (or ``p``), else 0, in ``input``'s dtype."""
    if p is None:
        if not input.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_p_\" not implemented for '{pt_name(input.dtype)}'"
            )
        if input.numel() and not bool(((input.detach() >= 0) & (input.detach() <= 1)).all()):
            raise RuntimeError(_P_RANGE)
    elif isinstance(p, (int, float)) and not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    prob = input if p is None else p
    u = rand(
        input._shape,
        generator=generator,
        dtype=input.dtype if input.dtype.category == 2 else None,
        device=input._device,
    )
    return (u < prob).to(input.dtype)


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Generator | None = None
) -> Tensor:
    """Indices drawn by the weights in each row of ``input`` (inverse-CDF sampling)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {pt_name(input.dtype)}"
        )
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    probs = input if input.ndim == 2 else input.unsqueeze(0)
    if probs.numel():
        bad = ~((probs >= 0) & (probs < math.inf))  # also NaN
        if bool(bad.any()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if float(probs.sum(1).amin()) <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rows = probs._shape[0]
    if not replacement and num_samples > probs._shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    p = probs.to(D.float64 if probs.dtype is D.float64 else D.float32).detach()
    if replacement:  # every draw from the same distribution: one search for all of them
        cdf = p.cumsum(1)
        u = rand(rows, num_samples, generator=generator, dtype=p.dtype, device=p._device) * cdf[:, -1:]
        res = searchsorted(cdf, u, right=True).clamp(max=p._shape[1] - 1)
        return res if input.ndim == 2 else res.squeeze(0)
    out = []
    for _ in range(num_samples):
        cdf = p.cumsum(1)
        total = cdf[:, -1:]
        u = rand(rows, 1, generator=generator, dtype=p.dtype, device=p._device) * total
        idx = (cdf <= u).sum(1, keepdim=True)
        idx = idx.clamp(max=p._shape[1] - 1)
        out.append(idx)
        if not replacement:
            p = p.scatter(1, idx, 0.0)
    from ._ops.join import cat

    res = cat(out, 1)
    return res if input.ndim == 2 else res.squeeze(0)
