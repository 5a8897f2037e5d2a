"""The compilation caches are bounded LRUs, and a function compiled for many signatures warns
once (issue 15, item 15; Note [Cache bounds] in `autodiff.cache`)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import warnings
import weakref
from collections.abc import Iterator

import numpy as np
import pytest

import autodiff as ad
from autodiff import cache as cache_module
from autodiff.script import scripted_for


def loss(x):
    return np.sum(np.tanh(x) * x)


def other_loss(x):
    return np.sum(x * x)


@pytest.fixture
def small_caches() -> Iterator[None]:
    size, limit = ad.cache_size(), ad.recompile_limit()
    ad.set_cache_size(3)
    ad.set_recompile_limit(100)
    try:
        yield
    finally:
        ad.set_cache_size(size)
        ad.set_recompile_limit(limit)


def shapes(count: int) -> list[np.ndarray]:
    return [np.linspace(-1.0, 1.0, n) for n in range(1, count + 1)]


def test_documented_defaults() -> None:
    assert cache_module.DEFAULT_CACHE_SIZE == 32
    assert cache_module.DEFAULT_RECOMPILE_LIMIT == 8


def test_script_cache_keeps_the_most_recently_used(small_caches: None) -> None:
    scripted = ad.script(loss)
    a, b, c, d = shapes(4)
    for x in (a, b, c, a, d):  # a is used again before d comes: b is the oldest
        assert scripted(x) == pytest.approx(loss(x), rel=1e-14)
    assert len(scripted.cache) == 3
    assert sorted(key[0][1] for key in scripted.cache) == [(1,), (3,), (4,)]
    assert scripted(b) == pytest.approx(loss(b), rel=1e-14)  # compiled again
    assert len(scripted.cache) == 3


def test_gradient_units_are_bounded(small_caches: None) -> None:
    dloss = ad.grad(loss)
    for x in shapes(6) * 2:
        np.testing.assert_allclose(dloss(x), np.tanh(x) + x * (1 - np.tanh(x) ** 2), rtol=1e-13)
    assert len(dloss.cache) == 3
    # each unit holds its gradient and its call: they go together
    assert all(len(unit.gradients) == len(unit.calls) == 1 for unit in dloss.cache.values())


def test_vjp_cache_is_bounded(small_caches: None) -> None:
    for x in shapes(5):
        _, vjp_fn = ad.vjp(other_loss, x)
        np.testing.assert_allclose(vjp_fn(1.0)[0], 2 * x)
    assert len(scripted_for(other_loss).cache) == 3


def test_what_vjp_compiled_goes_with_the_function() -> None:
    # The table of functions vjp had scripted held each function through its ScriptFunction,
    # so none was ever freed: a closure made per step leaked its compiled code.
    def make(scale: float):
        def scaled(x):
            return np.sum(x * x) * scale

        return scaled

    fn = make(2.0)
    ad.vjp(fn, np.ones(3))
    assert scripted_for(fn) is scripted_for(fn)  # compiled once, kept on the function
    watch = weakref.ref(fn)
    del fn
    gc.collect()
    assert watch() is None


def test_jacobian_graphs_per_shape_are_bounded(small_caches: None) -> None:
    nested = ad.jacobian(ad.jacobian(loss))
    for x in shapes(5):
        assert nested(x).shape == (x.size, x.size)
    # the inner Jacobian's graph, built per argument shapes
    assert len(nested.scripted.parsed) == 3


def test_many_signatures_warn_once_naming_the_function(small_caches: None) -> None:
    ad.set_recompile_limit(2)
    scripted = ad.script(loss)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in shapes(5):
            scripted(x)
    recompiles = [w for w in caught if issubclass(w.category, ad.RecompileWarning)]
    assert len(recompiles) == 1
    message = str(recompiles[0].message)
    assert "loss() has been compiled for 3 call signatures" in message
    assert "ad.set_recompile_limit(n)" in message
    assert "AUTODIFF_RECOMPILE_LIMIT" in message
    assert "category=ad.RecompileWarning" in message


def test_gradient_recompiles_warn_once(small_caches: None) -> None:
    ad.set_recompile_limit(2)
    dloss = ad.grad(other_loss)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in shapes(6):
            dloss(x)
    (recompile,) = [w for w in caught if issubclass(w.category, ad.RecompileWarning)]
    assert "the gradient of" in str(recompile.message)
    assert "other_loss() has been compiled for 3 call signatures" in str(recompile.message)


def test_the_warning_can_be_silenced(small_caches: None) -> None:
    ad.set_recompile_limit(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=ad.RecompileWarning)
        for x in shapes(3):
            ad.script(loss)(x)
            ad.grad(loss)(x)


@pytest.mark.parametrize("size", [0, -1, 2.5, True])
def test_sizes_must_be_positive_integers(size: object) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        ad.set_cache_size(size)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive integer"):
        ad.set_recompile_limit(size)  # type: ignore[arg-type]


def test_environment_variables_set_the_defaults() -> None:
    code = "import autodiff as ad; print(ad.cache_size(), ad.recompile_limit())"
    environment = {"AUTODIFF_CACHE_SIZE": "5", "AUTODIFF_RECOMPILE_LIMIT": "20"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["5", "20"]
