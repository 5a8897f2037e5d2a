"""SciPy's special functions in user code: found under every import alias, differentiated to
first and second order against central differences, float32 kept; SciPy never imported unless
user code imports it, and a located error when it is missing. The formulas of each operator
are checked one node at a time in `tests/unit/test_formulas.py` (`tests/scipy_samples.py`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import autodiff as ad

pytest.importorskip("scipy")
import scipy
import scipy.special as sp
from scipy.special import expit, gammaln, logsumexp, softmax

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(3)
X = RNG.normal(size=(3, 4))
POSITIVE = RNG.uniform(0.5, 2.0, (3, 4))
UNIT = RNG.uniform(0.1, 0.9, (3, 4))


# ---- aliases ------------------------------------------------------------------------------------


def imported_names(x):
    return logsumexp(x) + np.sum(gammaln(x * x + 1.0)) + np.sum(expit(x) * softmax(x, axis=0))


def module_alias(x):
    return sp.logsumexp(x, axis=1).sum() + np.sum(sp.psi(x * x + 1.0))


def dotted(x):
    return np.sum(scipy.special.gammaln(x * x + 1.0) + scipy.special.jn(1, x))


@pytest.mark.parametrize("fn", [imported_names, module_alias, dotted])
def test_every_alias_finds_the_operator(fn: Callable[..., Any]) -> None:
    np.testing.assert_allclose(ad.script(fn)(X), fn(X), rtol=1e-12)
    assert ad.gradcheck(fn, X).ok


def test_psi_and_digamma_are_one_operator() -> None:
    def both(x):
        return sp.psi(x) + sp.digamma(x)

    graph = str(ad.script(both).graph_for(POSITIVE))
    # one operator called twice on one operand: common subexpressions merge the calls
    assert graph.count("aten::special_digamma") == 1
    assert "aten::add(%1, %1)" in graph


# ---- first and second order, float32, broadcasting -------------------------------------------


def expit_loss(x):
    return np.sum(sp.expit(x) * np.cos(x))


def logit_loss(x):
    return np.sum(sp.logit(x) * np.cos(x))


def gamma_loss(x):
    return np.sum(sp.gammaln(x) + sp.gamma(x) + sp.digamma(x) * x)


def polygamma_loss(x):
    return np.sum(sp.polygamma(1, x) + sp.polygamma(np.array([0, 1, 2, 3]), x))


def erf_loss(x):
    return np.sum(sp.erf(x) * sp.erfc(x) + sp.ndtr(x) + sp.log_ndtr(x) * x)


def inverse_erf_loss(x):
    return np.sum(sp.erfinv(x - 0.5) + sp.erfcinv(x) + sp.ndtri(x) * x)


def entropy_loss(x):
    return np.sum(sp.entr(x) + sp.rel_entr(x, x[0]) + sp.xlogy(x, x + 1.0) + sp.xlog1py(x, x))


def beta_loss(x):
    return np.sum(sp.betaln(x, x[:, :1] + 1.0) + sp.beta(x, 2.0))


def bessel_loss(x):
    return np.sum(sp.i0(x) + sp.i1(x) * x + sp.i0e(x) + sp.i1e(x) + sp.iv(1.5, x) + sp.ive(0.5, x))


def bessel_j_loss(x):
    return np.sum(sp.j0(x) + sp.j1(x) * x + sp.jn(2, x) + sp.jv(0.5, x))


def bessel_y_loss(x):
    return np.sum(sp.y0(x) + sp.y1(x) * x + sp.yn(2, x) + sp.yv(0.5, x))


def multigammaln_loss(x):
    return np.sum(sp.multigammaln(x + 2.0, 3))


def logsumexp_loss(x):
    weights = np.cos(x[0])
    return (
        sp.logsumexp(x)
        + np.sum(sp.logsumexp(x, axis=0, b=weights * weights))
        + np.sum(sp.logsumexp(x, axis=(0, 1), keepdims=True) * 2.0)
        + sp.logsumexp(x[0], b=2.0)
    )


SIGNED_WEIGHTS = np.array([[3.0, -0.2, 0.5, -0.1], [-3.0, 0.2, -0.5, 0.1], [0.1, 0.2, -4.0, 0.3]])


def signed_loss(x):
    magnitude, sign = sp.logsumexp(x, axis=1, b=SIGNED_WEIGHTS * x, return_sign=True)
    whole = logsumexp(x, b=SIGNED_WEIGHTS, return_sign=True)
    return np.sum(magnitude * sign + magnitude**2) + whole[0] * whole[1]


def softmax_loss(x):
    return np.sum(sp.softmax(x, axis=1) * np.cos(x)) + np.sum(sp.log_softmax(x) * np.sin(x))


LOSSES = [
    (expit_loss, X),
    (logit_loss, UNIT),
    (gamma_loss, POSITIVE),
    (polygamma_loss, POSITIVE),
    (erf_loss, X),
    (inverse_erf_loss, UNIT),
    (entropy_loss, POSITIVE),
    (beta_loss, POSITIVE),
    (bessel_loss, POSITIVE),
    (bessel_j_loss, POSITIVE),
    (bessel_y_loss, POSITIVE),
    (multigammaln_loss, POSITIVE),
    (logsumexp_loss, X),
    (softmax_loss, X),
    (signed_loss, POSITIVE),
]
IDS = [fn.__name__ for fn, _ in LOSSES]


@pytest.mark.parametrize(("fn", "x"), LOSSES, ids=IDS)
def test_forward_equals_scipy_and_gradient_matches_central_differences(
    fn: Callable[..., Any], x: np.ndarray
) -> None:
    np.testing.assert_allclose(ad.script(fn)(x), fn(x), rtol=1e-12)
    assert ad.gradcheck(fn, x).ok


@pytest.mark.parametrize(("fn", "x"), LOSSES, ids=IDS)
def test_second_order_matches_central_differences_of_the_gradient(
    fn: Callable[..., Any], x: np.ndarray
) -> None:
    assert ad.gradcheck(ad.grad(fn), x, rtol=1e-5, atol=1e-6).ok


@pytest.mark.parametrize(
    ("fn", "x"),
    [(fn, x) for fn, x in LOSSES if fn not in (polygamma_loss, bessel_y_loss, multigammaln_loss)],
    ids=[i for i in IDS if i not in ("polygamma_loss", "bessel_y_loss", "multigammaln_loss")],
)
def test_float32_gradient_stays_float32(fn: Callable[..., Any], x: np.ndarray) -> None:
    """(SciPy's polygamma, yn and multigammaln compute in float64, and so do their results.)"""
    x32 = x.astype(np.float32)
    grad = ad.grad(fn)(x32)
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad, ad.grad(fn)(x), rtol=2e-3, atol=2e-4)


# ---- optional cross-check ---------------------------------------------------------------------


def test_gradients_agree_with_jax_where_installed() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jsp = pytest.importorskip("jax.scipy.special")

    def ours(x):
        return logsumexp(x, axis=1).sum() + np.sum(gammaln(x * x + 1.0) * sp.erf(x))

    def theirs(x):
        return jsp.logsumexp(x, axis=1).sum() + (jsp.gammaln(x * x + 1.0) * jsp.erf(x)).sum()

    np.testing.assert_allclose(ad.grad(ours)(X), np.asarray(jax.grad(theirs)(X)), rtol=1e-10)


# ---- SciPy optional ---------------------------------------------------------------------------


def _run(source: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        check=False,
    )


def test_nothing_imports_scipy_unless_user_code_does(tmp_path: Path) -> None:
    program = tmp_path / "loss.py"
    program.write_text("import numpy as np\n\ndef loss(x):\n    return np.sum(np.tanh(x))\n")
    done = _run(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import autodiff as ad
        from autodiff.derivatives import all_formulas
        from loss import loss
        all_formulas()
        ad.grad(loss)(np.ones(3))
        print(sorted(m for m in sys.modules if m.split(".")[0] == "scipy"))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_scipy_function_without_scipy_is_a_located_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import frontend.calls

    monkeypatch.setattr(frontend.calls, "scipy_installed", lambda: False)

    def needs_scipy(x):
        return np.sum(sp.gammaln(x))

    with pytest.raises(ad.ScriptError) as caught:
        ad.grad(needs_scipy)(POSITIVE)
    message = str(caught.value)
    assert "scipy.special.gammaln needs SciPy, which is not installed" in message
    assert "numpy-autodiff[scipy]" in message
    assert "test_scipy_special.py" in message
    assert "^^^^" in message


def test_b_none_written_out_is_scipys_default() -> None:
    def unweighted(x):
        return np.sum(logsumexp(x, 1, None)) + np.sum(sp.logsumexp(x, b=None, axis=0))

    def plain(x):
        return np.sum(logsumexp(x, 1)) + np.sum(sp.logsumexp(x, axis=0))

    np.testing.assert_allclose(ad.script(unweighted)(X), unweighted(X), rtol=1e-12)
    np.testing.assert_array_equal(ad.grad(unweighted)(X), ad.grad(plain)(X))


def test_signed_logsumexp_keeps_away_from_zero_sums() -> None:
    """The points `signed_loss` is checked at: no sum near 0, sums of both signs."""
    sums = np.sum(np.exp(POSITIVE) * SIGNED_WEIGHTS * POSITIVE, axis=1)
    assert np.all(np.abs(sums) > 0.5)
    assert np.any(sums < 0)
    assert np.any(sums > 0)


def test_unsupported_scipy_function_and_variable_return_sign_are_located_errors() -> None:
    def zeta_loss(x):
        return np.sum(sp.zeta(x, 1.0))

    def signed(x):
        flag = x.shape[0] > 2  # known only once shapes are: the call's meaning is not
        return logsumexp(x, return_sign=flag)

    with pytest.raises(ad.ScriptError, match=r"zeta is not supported"):
        ad.grad(zeta_loss)(POSITIVE + 1.0)
    with pytest.raises(ad.ScriptError, match=r"'return_sign' of .* must be a constant") as caught:
        ad.script(signed)(X)
    assert "test_scipy_special.py" in str(caught.value)
