"""Backend kernels of the elementwise operators the Array API spells differently or lacks
(Note [Array backends] in `ir.backends`): NumPy's ufuncs beyond the basic ones, and SciPy's
special functions and univariate distributions.

An elementwise function is exact block by block: each element of the result reads only the
same element of each (broadcast) operand. So on Dask each runs its NumPy (or SciPy) kernel
per block with ``dask.array.core.elemwise``, which aligns the operands' chunks and
broadcasts them as NumPy does, and stays lazy. Elsewhere it is the standard's function of
that meaning, or, when the standard has none (``fmax``, ``sinc``, SciPy's functions), the
operator has no kernel there and is refused.
"""

from __future__ import annotations

import math
from typing import Any

from ir.backend_kernel_parts import Kernel, TableEntry, dask_array
from ir.ops import OPS


def _elementwise(name: str, standard: Any = None) -> TableEntry:
    """``name``'s kernel: NumPy's per block on Dask; ``standard(xp)`` (or the standard's
    function of that name, when a string) elsewhere, or none."""
    numpy_kernel = OPS[name].kernel
    assert numpy_kernel is not None

    def factory(xp: Any) -> Kernel | None:
        da = dask_array(xp)
        if da is not None:
            return lambda *args: da.core.elemwise(numpy_kernel, *args)
        if standard is None:
            return None
        kernel: Kernel = getattr(xp, standard) if isinstance(standard, str) else standard(xp)
        return kernel

    return factory


# NumPy's name -> the standard's spelling (a name, or a function of the namespace)
_NUMPY_UFUNCS: dict[str, Any] = {
    "logical_xor": "logical_xor",
    "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor",
    "invert": "bitwise_invert",
    "arctan2": "atan2",
    "hypot": "hypot",
    "log2": "log2",
    "log10": "log10",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "trunc": "trunc",
    "isnan": "isnan",
    "isfinite": "isfinite",
    "isinf": "isinf",
    "signbit": "signbit",
    "fabs": "abs",
    "reciprocal": lambda xp: lambda x: 1 / x,
    "exp2": lambda xp: lambda x: xp.pow(2.0, x),
    "logaddexp2": lambda xp: (
        lambda a, b: xp.logaddexp(a * math.log(2), b * math.log(2)) / math.log(2)
    ),
    "deg2rad": lambda xp: lambda x: x * (math.pi / 180),
    "rad2deg": lambda xp: lambda x: x * (180 / math.pi),
    "isposinf": lambda xp: lambda x: xp.logical_and(xp.isinf(x), x > 0),
    "isneginf": lambda xp: lambda x: xp.logical_and(xp.isinf(x), x < 0),
    "fmax": None,  # NaN-ignoring: no standard function
    "fmin": None,
    "sinc": None,
}

# SciPy's elementwise functions: per block on Dask only
_SPECIAL = [
    "expit",
    "logit",
    "gammaln",
    "gamma",
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "erfcinv",
    "ndtr",
    "log_ndtr",
    "ndtri",
    "entr",
    "i0",
    "i1",
    "i0e",
    "i1e",
    "j0",
    "j1",
    "y0",
    "y1",
    "betaln",
    "beta",
    "xlogy",
    "xlog1py",
    "rel_entr",
    "polygamma",
    "jv",
    "yn",
    "yv",
    "iv",
    "ive",
    "multigammaln",
]
_LAWS = {law: ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf") for law in ("norm", "t")}
_LAWS |= {law: _LAWS["norm"] for law in ("gamma", "beta", "chi2")}
_LAWS["poisson"] = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")
_SCIPY_ELEMENTWISE = [f"aten::special_{name}" for name in _SPECIAL] + [
    f"aten::stats_{law}_{function}" for law, functions in _LAWS.items() for function in functions
]

ELEMENTWISE_KERNELS: dict[str, TableEntry] = {
    **{
        f"aten::{name}": _elementwise(f"aten::{name}", standard)
        for name, standard in _NUMPY_UFUNCS.items()
    },
    **{name: _elementwise(name) for name in _SCIPY_ELEMENTWISE},
}
"""The kernels of `ir.backend_kernels.NAMESPACE_KERNELS` for elementwise functions."""
