"""``+`` and ``*`` on strings are computed while compiling (strings are known then); anything
else on strings is a located ScriptError, not a shape error from deep inside."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad


def reduce_by(x, mode="sum"):
    name = mode + "_of"
    rule = "-" * 3 + name * 2
    print(rule)
    return np.sum(x) if name == "sum_of" else np.mean(x)


def test_strings_join_and_repeat_while_compiling(capsys: pytest.CaptureFixture[str]) -> None:
    x = np.arange(4.0)
    scripted = ad.script(reduce_by)
    assert scripted(x) == 6.0
    assert scripted(x, mode="mean") == 1.5
    assert capsys.readouterr().out == "---sum_ofsum_of\n---mean_ofmean_of\n"
    np.testing.assert_allclose(ad.grad(reduce_by)(x, mode="mean"), np.full(4, 0.25))


def adds_a_number(x, mode="sum"):
    label = mode + 1
    return np.sum(x) if label == "sum" else np.mean(x)


def test_other_operators_on_strings_are_refused_where_written() -> None:
    with pytest.raises(ad.ScriptError) as info:
        ad.script(adds_a_number)(np.ones(2))
    assert info.value.source_range is not None
    assert info.value.source_range.line == adds_a_number.__code__.co_firstlineno + 1
    assert str(info.value).endswith("see docs/language.md#strings")
