"""repr of tensors, recorded from PyTorch 2.13 (``torch.`` printed as ``ember.``, the one allowed difference)."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from ember.backends import hookimpl
from ember_cpu.backend import CPUBackend
from ember_cpu.kernels import KERNELS

# (expression building the tensor, with ``ember`` standing for ``torch``; PyTorch 2.13 repr)
CASES = [
    ("ember.tensor([1., 2.5, -3.])", "tensor([ 1.0000,  2.5000, -3.0000])"),
    ("ember.tensor([1., 2., 3.])", "tensor([1., 2., 3.])"),
    ("ember.tensor(3.5)", "tensor(3.5000)"),
    ("ember.tensor(3)", "tensor(3)"),
    ("ember.tensor([1, 2], dtype=ember.int32)", "tensor([1, 2], dtype=ember.int32)"),
    ("ember.tensor([[1, -20], [300, 4]])", "tensor([[  1, -20],\n        [300,   4]])"),
    ("ember.tensor([True, False])", "tensor([ True, False])"),
    ("ember.tensor([1.5, 2.25], dtype=ember.float64)", "tensor([1.5000, 2.2500], dtype=ember.float64)"),
    ("ember.tensor([1.5, 2.25], dtype=ember.float16)", "tensor([1.5000, 2.2500], dtype=ember.float16)"),
    ("ember.tensor([1.5, 2.25], dtype=ember.bfloat16)", "tensor([1.5000, 2.2500], dtype=ember.bfloat16)"),
    ("ember.tensor([1, 255], dtype=ember.uint8)", "tensor([  1, 255], dtype=ember.uint8)"),
    ("ember.tensor([-1, 5], dtype=ember.int8)", "tensor([-1,  5], dtype=ember.int8)"),
    ("ember.tensor([1+2j, -0.5j])", "tensor([1.+2.0000j, -0.-0.5000j])"),
    ("ember.tensor([1+2j], dtype=ember.complex128)", "tensor([1.+2.j], dtype=ember.complex128)"),
    ("ember.tensor([])", "tensor([])"),
    ("ember.zeros(0, dtype=ember.int64)", "tensor([], dtype=ember.int64)"),
    ("ember.zeros(2, 0)", "tensor([], size=(2, 0))"),
    ("ember.tensor([1e-5, 1e5])", "tensor([1.0000e-05, 1.0000e+05])"),
    ("ember.tensor([1.5e10, 1.])", "tensor([1.5000e+10, 1.0000e+00])"),
    (
        "ember.tensor([float('nan'), float('inf'), -float('inf'), 1.5])",
        "tensor([   nan,    inf,   -inf, 1.5000])",
    ),
    (
        "ember.arange(8.).reshape(2, 2, 2)",
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])",
    ),
    ("ember.arange(1001)", "tensor([   0,    1,    2,  ...,  998,  999, 1000])"),
    (
        "ember.arange(2000.).reshape(40, 50)",
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n         4.9000e+01],\n        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n         9.9000e+01],\n        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n         1.4900e+02],\n        ...,\n        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n         1.8990e+03],\n        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n         1.9490e+03],\n        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n         1.9990e+03]])",
    ),
    ("ember.tensor([1., 2.], requires_grad=True)", "tensor([1., 2.], requires_grad=True)"),
    ("ember.tensor([1., 2.], requires_grad=True) * 2", "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    ("ember.tensor([-0., 0.])", "tensor([-0., 0.])"),
    ("ember.tensor([0.001, 0.0001])", "tensor([1.0000e-03, 1.0000e-04])"),
    ("ember.tensor(2.5, dtype=ember.float64)", "tensor(2.5000, dtype=ember.float64)"),
    ("ember.tensor(True)", "tensor(True)"),
    (
        "ember.tensor([[1.123456789, 200.5], [-3., 0.]])",
        "tensor([[  1.1235, 200.5000],\n        [ -3.0000,   0.0000]])",
    ),
    (
        "ember.arange(30.) / 7",
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n        3.8571, 4.0000, 4.1429])",
    ),
    (
        "ember.arange(40) * 1001",
        "tensor([    0,  1001,  2002,  3003,  4004,  5005,  6006,  7007,  8008,  9009,\n        10010, 11011, 12012, 13013, 14014, 15015, 16016, 17017, 18018, 19019,\n        20020, 21021, 22022, 23023, 24024, 25025, 26026, 27027, 28028, 29029,\n        30030, 31031, 32032, 33033, 34034, 35035, 36036, 37037, 38038, 39039])",
    ),
    (
        "ember.arange(3000).reshape(3, 1000)",
        "tensor([[   0,    1,    2,  ...,  997,  998,  999],\n        [1000, 1001, 1002,  ..., 1997, 1998, 1999],\n        [2000, 2001, 2002,  ..., 2997, 2998, 2999]])",
    ),
    ("ember.tensor([1e-6+1j, 2+3e5j])", "tensor([1.0000e-06+1.0000e+00j, 2.0000e+00+3.0000e+05j])"),
    ("ember.tensor(1.5-2j)", "tensor(1.5000-2.j)"),
    (
        "ember.tensor([1e10, 1.], dtype=ember.float64)",
        "tensor([1.0000e+10, 1.0000e+00], dtype=ember.float64)",
    ),
    ("ember.tensor([[True], [False]])", "tensor([[ True],\n        [False]])"),
    ("ember.zeros(0, 3, dtype=ember.int8)", "tensor([], size=(0, 3), dtype=ember.int8)"),
    (
        "ember.arange(16).reshape(2, 2, 2, 2)",
        "tensor([[[[ 0,  1],\n          [ 2,  3]],\n\n         [[ 4,  5],\n          [ 6,  7]]],\n\n\n        [[[ 8,  9],\n          [10, 11]],\n\n         [[12, 13],\n          [14, 15]]]])",
    ),
    ("ember.tensor([float('nan')])", "tensor([nan])"),
    ("ember.zeros(3)", "tensor([0., 0., 0.])"),
    ("ember.tensor([-1., -10., 100.])", "tensor([ -1., -10., 100.])"),
    ("ember.tensor([1e9, 2.])", "tensor([1.0000e+09, 2.0000e+00])"),
]


@pytest.mark.parametrize("expr, expected", CASES, ids=list(range(len(CASES))))
def test_repr_matches_pytorch(expr, expected):
    assert repr(eval(expr)) == expected


def test_printoptions_and_device_suffix():
    try:
        ember.set_printoptions(precision=2)
        assert repr(ember.tensor([1.2345, 2.0])) == "tensor([1.23, 2.00])"
        ember.set_printoptions(sci_mode=True)
        assert repr(ember.tensor([1.5])) == "tensor([1.50e+00])"
    finally:
        ember.set_printoptions(profile="default")
    assert repr(ember.tensor([1.2345])) == "tensor([1.2345])"
    assert repr(ember.tensor([1, 2], device="cpu:1")) == "tensor([1, 2], device='cpu:1')"
    assert repr(ember.Size([2, 3])) == "ember.Size([2, 3])"
    assert str(ember.tensor(2.5)) == "tensor(2.5000)" and f"{ember.tensor(2.5):.1f}" == "2.5"


@pytest.fixture
def _options():
    """Print options changed by a test are reset to the default profile after it."""
    yield ember.set_printoptions
    ember.set_printoptions(profile="default")


# (expression, print options, PyTorch 2.13 repr): summarised tensors and each option's effect
SUMMARISED = [
    ("ember.arange(10)", {"threshold": 5}, "tensor([0, 1, 2,  ..., 7, 8, 9])"),
    (
        "ember.arange(1000000.).reshape(1000, 1000) / 7",
        {},
        (
            "tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 1.4243e+02, 1.4257e+02,\n         1.4271e+02],\n"
            "        [1.4286e+02, 1.4300e+02, 1.4314e+02,  ..., 2.8529e+02, 2.8543e+02,\n         2.8557e+02],\n"
            "        [2.8571e+02, 2.8586e+02, 2.8600e+02,  ..., 4.2814e+02, 4.2829e+02,\n         4.2843e+02],\n"
            "        ...,\n"
            "        [1.4243e+05, 1.4243e+05, 1.4243e+05,  ..., 1.4257e+05, 1.4257e+05,\n         1.4257e+05],\n"
            "        [1.4257e+05, 1.4257e+05, 1.4257e+05,  ..., 1.4271e+05, 1.4271e+05,\n         1.4271e+05],\n"
            "        [1.4271e+05, 1.4271e+05, 1.4271e+05,  ..., 1.4286e+05, 1.4286e+05,\n         1.4286e+05]])"
        ),
    ),
    (
        "ember.arange(2000.).reshape(40, 50) / 7",
        {"profile": "short"},
        (
            "tensor([[0.00e+00, 1.43e-01,  ..., 6.86e+00, 7.00e+00],\n"
            "        [7.14e+00, 7.29e+00,  ..., 1.40e+01, 1.41e+01],\n"
            "        ...,\n"
            "        [2.71e+02, 2.72e+02,  ..., 2.78e+02, 2.78e+02],\n"
            "        [2.79e+02, 2.79e+02,  ..., 2.85e+02, 2.86e+02]])"
        ),
    ),
    ("ember.arange(10)", {"threshold": 3, "edgeitems": 0}, "tensor([...], size=(10,))"),
    ("ember.ones(3, 4)", {"threshold": 3, "edgeitems": 0}, "tensor([...], size=(3, 4))"),
    (
        "ember.arange(12).reshape(3, 4)",
        {"threshold": 3, "edgeitems": 1},
        "tensor([[ 0,  ...,  3],\n        ...,\n        [ 8,  ..., 11]])",
    ),
    (
        "ember.arange(10, dtype=ember.int32)",
        {"threshold": 5, "edgeitems": 1},
        "tensor([0,  ..., 9], dtype=ember.int32)",
    ),
    (
        "ember.arange(120).reshape(2, 3, 4, 5)",
        {"threshold": 10, "edgeitems": 1},
        (
            "tensor([[[[  0,  ...,   4],\n          ...,\n          [ 15,  ...,  19]],\n\n         ...,\n\n"
            "         [[ 40,  ...,  44],\n          ...,\n          [ 55,  ...,  59]]],\n\n\n"
            "        [[[ 60,  ...,  64],\n          ...,\n          [ 75,  ...,  79]],\n\n         ...,\n\n"
            "         [[100,  ..., 104],\n          ...,\n          [115,  ..., 119]]]])"
        ),
    ),
    (
        "ember.arange(1200.).reshape(2, 600) + 0.5j",
        {},
        (
            "tensor([[0.0000e+00+0.5000j, 1.0000e+00+0.5000j, 2.0000e+00+0.5000j,\n"
            "          ..., 5.9700e+02+0.5000j, 5.9800e+02+0.5000j,\n         5.9900e+02+0.5000j],\n"
            "        [6.0000e+02+0.5000j, 6.0100e+02+0.5000j, 6.0200e+02+0.5000j,\n"
            "          ..., 1.1970e+03+0.5000j, 1.1980e+03+0.5000j,\n         1.1990e+03+0.5000j]])"
        ),
    ),
    (
        "ember.tensor([1e-5, 1.5, 1e5])",
        {"sci_mode": False},
        "tensor([     0.0000,      1.5000, 100000.0000])",
    ),
    ("ember.tensor([1.5, 2.5])", {"sci_mode": True, "precision": 2}, "tensor([1.50e+00, 2.50e+00])"),
    ("ember.tensor([0., 0.])", {"sci_mode": True}, "tensor([0., 0.])"),
    (
        "ember.arange(6.).reshape(2, 3)",
        {"linewidth": 12},
        "tensor([[0.,\n         1.,\n         2.],\n        [3.,\n         4.,\n         5.]])",
    ),
    (
        "ember.tensor([1.5, 2.5], dtype=ember.float64, requires_grad=True)",
        {"linewidth": 30},
        "tensor([1.5000, 2.5000],\n       dtype=ember.float64,\n       requires_grad=True)",
    ),
]


@pytest.mark.parametrize("expr, options, expected", SUMMARISED, ids=list(range(len(SUMMARISED))))
def test_summarised_and_options_match_pytorch(expr, options, expected, _options):
    _options(**options)
    assert repr(eval(expr)) == expected


def test_summarised_3d_matches_pytorch():
    expected = [
        "tensor([[[   0,    1,    2,  ...,   17,   18,   19],",
        "         [  20,   21,   22,  ...,   37,   38,   39],",
        "         [  40,   41,   42,  ...,   57,   58,   59],",
        "         ...,",
        "         [ 140,  141,  142,  ...,  157,  158,  159],",
        "         [ 160,  161,  162,  ...,  177,  178,  179],",
        "         [ 180,  181,  182,  ...,  197,  198,  199]],",
        "",
        "        [[ 200,  201,  202,  ...,  217,  218,  219],",
        "         [ 220,  221,  222,  ...,  237,  238,  239],",
        "         [ 240,  241,  242,  ...,  257,  258,  259],",
        "         ...,",
        "         [ 340,  341,  342,  ...,  357,  358,  359],",
        "         [ 360,  361,  362,  ...,  377,  378,  379],",
        "         [ 380,  381,  382,  ...,  397,  398,  399]],",
        "",
        "        [[ 400,  401,  402,  ...,  417,  418,  419],",
        "         [ 420,  421,  422,  ...,  437,  438,  439],",
        "         [ 440,  441,  442,  ...,  457,  458,  459],",
        "         ...,",
        "         [ 540,  541,  542,  ...,  557,  558,  559],",
        "         [ 560,  561,  562,  ...,  577,  578,  579],",
        "         [ 580,  581,  582,  ...,  597,  598,  599]],",
        "",
        "        ...,",
        "",
        "        [[1400, 1401, 1402,  ..., 1417, 1418, 1419],",
        "         [1420, 1421, 1422,  ..., 1437, 1438, 1439],",
        "         [1440, 1441, 1442,  ..., 1457, 1458, 1459],",
        "         ...,",
        "         [1540, 1541, 1542,  ..., 1557, 1558, 1559],",
        "         [1560, 1561, 1562,  ..., 1577, 1578, 1579],",
        "         [1580, 1581, 1582,  ..., 1597, 1598, 1599]],",
        "",
        "        [[1600, 1601, 1602,  ..., 1617, 1618, 1619],",
        "         [1620, 1621, 1622,  ..., 1637, 1638, 1639],",
        "         [1640, 1641, 1642,  ..., 1657, 1658, 1659],",
        "         ...,",
        "         [1740, 1741, 1742,  ..., 1757, 1758, 1759],",
        "         [1760, 1761, 1762,  ..., 1777, 1778, 1779],",
        "         [1780, 1781, 1782,  ..., 1797, 1798, 1799]],",
        "",
        "        [[1800, 1801, 1802,  ..., 1817, 1818, 1819],",
        "         [1820, 1821, 1822,  ..., 1837, 1838, 1839],",
        "         [1840, 1841, 1842,  ..., 1857, 1858, 1859],",
        "         ...,",
        "         [1940, 1941, 1942,  ..., 1957, 1958, 1959],",
        "         [1960, 1961, 1962,  ..., 1977, 1978, 1979],",
        "         [1980, 1981, 1982,  ..., 1997, 1998, 1999]]])",
    ]
    assert repr(ember.arange(2000).reshape(10, 10, 20)).split("\n") == expected


def test_profiles_and_get_printoptions(_options):
    default = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
    assert ember.get_printoptions() == default
    _options(profile="short", sci_mode=True)
    assert ember.get_printoptions() == {**default, "precision": 2, "edgeitems": 2, "sci_mode": True}
    _options(linewidth=100)  # sci_mode is reset by every call that does not pass it, as in PyTorch
    assert ember.get_printoptions() == {**default, "precision": 2, "edgeitems": 2, "linewidth": 100}
    _options(profile="full")
    assert ember.get_printoptions() == {**default, "threshold": math.inf}
    text = repr(ember.arange(1001))
    assert "..." not in text and text.endswith(" 996,  997,  998,  999, 1000])") and text.count("\n") == 83
    _options(profile="default")
    assert ember.get_printoptions() == default


def test_printoptions_context_restores():
    with ember.printoptions(precision=1, threshold=2):
        assert repr(ember.tensor([1.25, 2.5, 3.75])) == "tensor([1.2, 2.5, 3.8])"
        assert ember.get_printoptions()["threshold"] == 2
    assert ember.get_printoptions()["precision"] == 4


def test_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="unknown profile 'fulll'; expected one of"):
        ember.set_printoptions(profile="fulll")
    assert ember.get_printoptions()["threshold"] == 1000


def test_format_spec():
    assert f"{ember.tensor(2.5)}" == "2.5" and f"{ember.tensor(3):>3}" == "  3"
    assert f"{ember.tensor([2.5])}" == "tensor([2.5000])"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        f"{ember.tensor([2.5]):.2f}"


# -- a large tensor's repr moves only its corners ---------------------------------------------


class _CountingCPU(CPUBackend):
    """The CPU backend, counting elements copied to the host and the largest array a kernel makes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.host_elements = 0
        self.largest_new = 0

    def to_numpy(self, x: np.ndarray) -> np.ndarray:
        self.host_elements += x.size
        return x

    def counting(self, fn):
        def kernel(*args, **kwargs):
            out = fn(*args, **kwargs)
            for a in out if isinstance(out, tuple) else (out,):
                if isinstance(a, np.ndarray) and a.base is None:  # freshly written, not a view
                    self.largest_new = max(self.largest_new, a.size)
            return out

        return kernel


class _CountingPlugin:
    def __init__(self, backend: _CountingCPU) -> None:
        self.backend = backend

    @hookimpl
    def ember_backend(self) -> CPUBackend:
        return self.backend

    @hookimpl
    def ember_register_kernels(self, backend: str, register) -> None:
        if backend == self.backend.name:
            for op, fn in KERNELS.items():
                register(op, self.backend.counting(fn))


@pytest.fixture(scope="module")
def counting_cpu():
    backend = _CountingCPU("counted")
    ember.backends.unregister(backend.name)
    ember.backends.register(backend.name, _CountingPlugin(backend))
    yield backend
    ember.backends.unregister(backend.name)


_ROW = "[2., 2., 2.,  ..., 2., 2., 2.]"
_ROWS = ["[2.]"] * 3 + ["..."] + ["[2.]"] * 3
_WRAPPED = ", device='counted:0',\n       grad_fn=<MulBackward0>)"  # past 80 columns: a new line
LARGE = [
    ((10_000_000,), 6, f"tensor({_ROW}" + _WRAPPED),
    ((1000, 10_000), 36, "tensor([" + ",\n        ".join([_ROW] * 3 + ["..."] + [_ROW] * 3) + "]" + _WRAPPED),
    (
        (10_000_000, 1),
        6,
        "tensor([" + ",\n        ".join(_ROWS) + "], device='counted:0', grad_fn=<MulBackward0>)",
    ),
    ((10, 100, 100, 100), 6**4, None),
]


@pytest.mark.parametrize("shape, shown, expected", LARGE, ids=[str(c[0]) for c in LARGE])
def test_large_repr_copies_only_the_corners(counting_cpu, shape, shown, expected):
    x = ember.ones(shape, device=counting_cpu.name).requires_grad_(True) * 2
    counting_cpu.host_elements = counting_cpu.largest_new = 0
    text = repr(x)
    assert counting_cpu.host_elements == shown  # corners only reach the host, once
    assert counting_cpu.largest_new <= shown  # and no device-side copy is larger than them
    if expected is None:  # 4-d: PyTorch's 307 lines (+1 for the suffix), 6**4 elements, "..." per cut
        lines = text.split("\n")
        assert len(lines) == 308 and text.count("2.") == 6**4 and text.count("...") == 6**3 + 6**2 + 6 + 1
        assert lines[0] == "tensor([[[[2., 2., 2.,  ..., 2., 2., 2.],"
        assert lines[-2:] == [
            "          [2., 2., 2.,  ..., 2., 2., 2.]]]], device='counted:0',",
            _WRAPPED[22:],
        ]
    else:
        assert text == expected


def test_large_repr_exact_text():
    x = ember.arange(10_000_000, dtype=ember.float32)
    assert (
        repr(x)
        == "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.0000e+07, 1.0000e+07,\n        1.0000e+07])"
    )
    # a strided view: only its corners are read
    assert repr(x.reshape(1000, 10000)[:, 1:3]) == (
        "tensor([[1.0000e+00, 2.0000e+00],\n        [1.0001e+04, 1.0002e+04],\n        [2.0001e+04, 2.0002e+04],\n"
        "        ...,\n        [9.9700e+06, 9.9700e+06],\n        [9.9800e+06, 9.9800e+06],\n"
        "        [9.9900e+06, 9.9900e+06]])"
    )
