"""Python lists in scripted code (Note [Lists are values] in `ir.ops.prim`): ``hs = []``,
``hs.append(v)``, ``hs[i]``, ``len(hs)``, ``for h in hs``, ``np.stack(hs)``. Scripted
results equal the plain function's; gradients of straight-line list code equal central finite
differences. Loops that append are differentiated in `tests/gradients/test_list_loops.py`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.ops.prim import AUTOGRAD_ZERO, autograd_add, list_append
from ir.types import FLOAT, NOTHING, TENSOR, ListType, TensorType, join_types
from tests.gradients.test_gradient_corpus import finite_differences

# ---- list programs ------------------------------------------------------------------------------


def appended_and_stacked(x, a: float, w):
    hs = []
    hs.append(a * x)
    hs.append(np.sin(x))
    return np.sum(np.stack(hs) * w) + np.sum(hs[1])


def rnn_states(x, W, T: int):
    hs = []
    h = x
    for _ in range(T):
        h = np.tanh(h @ W)
        hs.append(h)
    return np.sum(np.stack(hs)) + np.sum(hs[-1] * hs[0])


def concatenated(x, y):
    parts = []
    parts.append(x * 2.0)
    parts.append(np.cos(y))
    parts.append(x)
    return np.sum(np.concatenate(parts) ** 2)


def indexed_from_both_ends(x):
    hs = []
    hs.append(x)
    hs.append(x * x)
    hs.append(np.exp(x))
    return np.sum(hs[0] * hs[-1]) + np.sum(hs[-2])


def counted(x, n: int):
    hs = []
    for i in range(n):
        hs.append(x * i)
    return len(hs) + np.sum(np.stack(hs))


def iterated(x):
    hs = []
    hs.append(x)
    hs.append(2.0 * x)
    total = 0.0
    for h in hs:
        total = total + np.sum(h * h)
    return total


def appended_in_a_branch(x, flag: bool):
    hs = [x]
    if flag:
        hs.append(x + 1.0)
    return np.sum(np.stack(hs), axis=0)


def aliased(x):
    # Note [Lists are values]: `a` keeps the list as it was before the append (Python's would
    # see the new element), so scripted and plain results differ here, on purpose.
    hs = [x]
    a = hs
    hs.append(x)
    return len(a)


def appended_while_running(x):
    hs = []
    h = x
    while np.sum(h) < 10.0:
        h = h * 2.0
        hs.append(h)
    return np.sum(np.stack(hs))


def read_back_in_a_loop(x, T: int):
    hs = []
    h = x
    for t in range(T):
        if t > 0:
            h = h + hs[-1]
        h = np.tanh(h)
        hs.append(h)
    return np.sum(np.stack(hs))


def stacked_in_a_guarded_branch(x, T: int):
    hs = []
    m = x
    for t in range(T):
        if t > 0:
            m = np.mean(np.stack(hs), axis=0)
        hs.append(np.sin(m))
    return np.sum(m)


def stacks_nothing(x):
    hs = []
    return np.sum(np.stack(hs)) + np.sum(x)


def ints_appended(x, n: int):
    sizes = []
    for i in range(n):
        sizes.append(i * i)
    return x * sizes[-1] + len(sizes)


X = np.array([[0.3, -0.5, 0.8], [1.1, 0.2, -0.7]])
W = np.array([[0.4, -0.2, 0.1], [0.3, 0.5, -0.6], [-0.1, 0.2, 0.3]])

FORWARD_CASES: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (appended_and_stacked, (X, 0.5, np.ones((2, 2, 3)))),
    (rnn_states, (X, W, 4)),
    (rnn_states, (X, W, 1)),
    (concatenated, (X, X[::-1])),
    (indexed_from_both_ends, (X,)),
    (counted, (X, 3)),
    (iterated, (X,)),
    (appended_in_a_branch, (X, True)),
    (appended_in_a_branch, (X, False)),
    (appended_while_running, (np.array([0.5, 1.0]),)),
    (ints_appended, (X, 4)),
    (read_back_in_a_loop, (X, 3)),
    (stacked_in_a_guarded_branch, (X, 3)),
]


@pytest.mark.parametrize(
    ("fn", "args"),
    FORWARD_CASES,
    ids=[f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(FORWARD_CASES)],
)
def test_scripted_list_programs_give_the_plain_results(
    fn: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    np.testing.assert_allclose(ad.script(fn)(*args), fn(*args), rtol=1e-12)


def test_appending_copies_so_an_alias_keeps_the_old_list() -> None:
    assert aliased(X) == 2
    assert ad.script(aliased)(X) == 1


def test_an_empty_list_takes_the_type_of_what_is_appended() -> None:
    typed = ad.script(appended_and_stacked).graph_for(X, 0.5, np.ones((2, 2, 3)))
    kinds = {node.kind: node for node in typed.nodes()}
    assert kinds["prim::ListIndex"].output.ty == TensorType("float64", (2, 3))
    empty = next(n for n in typed.nodes() if n.output.ty == ListType(NOTHING))
    assert empty.output.name_hint == "hs"


def test_stacking_an_empty_list_fails_where_numpy_does() -> None:
    with pytest.raises(ad.AutodiffError, match="aten::stack: need at least one array") as error:
        ad.script(stacks_nothing)(X)
    assert "return np.sum(np.stack(hs))" in str(error.value)


def test_loop_carried_lists_join_to_the_appended_type() -> None:
    typed = ad.script(rnn_states).graph_for(X, W, 3)
    (loop,) = [n for n in typed.nodes() if n.kind == "prim::Loop"]
    assert loop.outputs[1].ty == ListType(TensorType("float64", (2, 3)))


# ---- the pieces -------------------------------------------------------------------------------


def test_list_append_returns_a_new_list() -> None:
    hs = [X]
    appended = list_append(hs, W)
    assert len(hs) == 1
    assert len(appended) == 2
    assert appended[0] is X
    assert appended[1] is W


def test_list_gradients_add_element_by_element() -> None:
    total = autograd_add([np.ones(2), np.zeros(3)], [np.ones(2), np.ones(3)])
    assert isinstance(total, list)
    np.testing.assert_array_equal(total[0], [2.0, 2.0])
    np.testing.assert_array_equal(total[1], [1.0, 1.0, 1.0])
    assert autograd_add(AUTOGRAD_ZERO, total) is total


def test_nothing_joins_to_the_other_type() -> None:
    assert join_types(NOTHING, FLOAT) == FLOAT
    assert join_types(ListType(TENSOR), ListType(NOTHING)) == ListType(TENSOR)
    assert NOTHING.is_subtype_of(FLOAT)
    assert not FLOAT.is_subtype_of(NOTHING)


# ---- gradients of straight-line list code -------------------------------------------------------

GRADIENT_CASES: list[tuple[Callable[..., Any], tuple[Any, ...], tuple[int, ...]]] = [
    (appended_and_stacked, (X, 0.5, np.arange(12.0).reshape(2, 2, 3) / 10), (0, 1, 2)),
    (concatenated, (X, X[::-1] * 0.5), (0, 1)),
    (indexed_from_both_ends, (X,), (0,)),
]


@pytest.mark.parametrize(
    ("fn", "args", "argnums"), GRADIENT_CASES, ids=[c[0].__name__ for c in GRADIENT_CASES]
)
def test_list_gradients_match_finite_differences(
    fn: Callable[..., Any], args: tuple[Any, ...], argnums: tuple[int, ...]
) -> None:
    grads = ad.grad(fn, argnums=argnums)(*args)
    for position, grad in zip(argnums, grads, strict=True):
        expected = finite_differences(fn, args, position)
        np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-8)
    assert ad.gradcheck(fn, *args).ok


def literal_list(x):
    hs = [x, np.sin(x)]
    return np.sum(np.stack(hs)) + np.sum(hs[0] * hs[1])


def unpacked_list(x):
    hs = []
    hs.append(x)
    hs.append(np.sin(x))
    a, b = hs
    return np.sum(a * b)


@pytest.mark.parametrize("fn", [literal_list, unpacked_list])
def test_list_literals_and_unpacking_are_differentiated(fn: Callable[..., Any]) -> None:
    grad = ad.grad(fn)(X)
    np.testing.assert_allclose(grad, finite_differences(fn, (X,), 0), rtol=1e-6, atol=1e-8)


def test_the_gradient_of_a_list_is_a_list_of_the_same_length() -> None:
    # The reverse program hands the list to both of its readers, np.stack and hs[1]: their
    # gradients are lists, added element by element (prim::AutogradAdd, which
    # specialize-autograd-zero turns into aten::_add_lists as neither can be zero).
    grad = ad.differentiate(ad.script(appended_and_stacked).graph_for(X, 0.5, np.ones((2, 2, 3))))
    df = str(grad.df)
    assert "aten::_list_index_backward" in df
    assert "aten::_add_lists" in df
    assert "AutogradAdd" not in df
    assert "GradOf" not in df
    assert grad.df.outputs[0].node.inputs[0].ty == TensorType("float64", (2, 3))


def list_of_weight_pairs(W, b, x):
    # Issue 15, item 7: the elements are tuples, so their zero gradients are tuples of zeros
    # (aten::_list_index_backward) and two list gradients add tuple by tuple, not by `+`, which
    # concatenates tuples (aten::_add_lists).
    params = [(W, b), (W * 2, b)]
    return np.sum(params[0][0] @ x + params[1][1]) + np.sum(np.tanh(params[1][0] @ x))


def test_a_list_of_tuples_built_in_the_function_is_differentiated() -> None:
    args = (np.array([[0.3, -0.2], [0.5, 0.1]]), np.array([0.4, -0.7]), np.array([0.2, 0.9]))
    grads = ad.grad(list_of_weight_pairs, argnums=(0, 1, 2))(*args)
    for position, grad in enumerate(grads):
        expected = finite_differences(list_of_weight_pairs, args, position)
        np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-8)
    assert ad.gradcheck(list_of_weight_pairs, *args).ok
    hessian = ad.hessian(list_of_weight_pairs, argnums=2)(*args)
    grad_x = ad.grad(list_of_weight_pairs, argnums=2)
    eps = 1e-6
    columns = [
        (grad_x(*args[:2], args[2] + eps * d) - grad_x(*args[:2], args[2] - eps * d)) / (2 * eps)
        for d in np.eye(2)
    ]
    np.testing.assert_allclose(hessian, np.stack(columns, axis=-1), rtol=1e-6, atol=1e-7)


# ---- second derivatives -------------------------------------------------------------------------


def squares_stacked_and_read(x):
    hs = []
    hs.append(x * x)
    hs.append(np.sin(x))
    return np.sum(np.stack(hs) ** 2) + np.sum(hs[1] * hs[0])


def squares_concatenated(x):
    hs = []
    hs.append(x * x)
    hs.append(np.sin(x))
    return np.sum(np.concatenate(hs) ** 2)


@pytest.mark.parametrize(
    "fn", [squares_stacked_and_read, squares_concatenated], ids=lambda f: f.__name__
)
def test_list_hessians_match_finite_differences_of_the_gradient(fn: Callable[..., Any]) -> None:
    # The gradient's own list operators (aten::_list_index_backward, aten::_list_head,
    # aten::_sequence_as, aten::_add_lists) have formulas, so the gradient differentiates again.
    x = np.array([0.3, -0.2, 0.5])
    hessian = ad.hessian(fn)(x)
    grad = ad.grad(fn)
    eps = 1e-6
    columns = [(grad(x + eps * d) - grad(x - eps * d)) / (2 * eps) for d in np.eye(3)]
    np.testing.assert_allclose(hessian, np.stack(columns, axis=-1), rtol=1e-6, atol=1e-7)


def returns_the_list(x):
    hs = []
    hs.append(np.sin(x))
    hs.append(x * 2.0)
    return hs


def test_vjp_of_a_function_that_returns_a_list_takes_a_list_cotangent() -> None:
    x = np.array([0.3, -0.2, 0.5])
    out, vjp_fn = ad.vjp(returns_the_list, x)
    assert isinstance(out, list)
    np.testing.assert_allclose(out[0], np.sin(x))
    (dx,) = vjp_fn([np.ones(3), np.full(3, 0.5)])
    np.testing.assert_allclose(dx, np.cos(x) + 1.0)


# ---- cotangents of results that are sequences (issue 15, item 9) ------------------------------


def split_unequally(x):
    return np.split(x, [1, 3])


def array_split_unequally(x):
    return np.array_split(x, 4)


def hsplit_unequally(x):
    return np.hsplit(x, [1])


def vsplit_unequally(x):
    return np.vsplit(x, [1])


def dsplit_unequally(x):
    return np.dsplit(x, [1, 2])


SPLITS = [
    (split_unequally, (6,), 0),
    (array_split_unequally, (6,), 0),
    (hsplit_unequally, (2, 3, 4), 1),
    (vsplit_unequally, (3, 2), 0),
    (dsplit_unequally, (2, 2, 4), 2),
]


@pytest.mark.parametrize(("fn", "shape", "axis"), SPLITS, ids=[s[0].__name__ for s in SPLITS])
@pytest.mark.parametrize("sequence", [list, tuple])
def test_vjp_of_unequal_pieces_takes_one_cotangent_per_piece(
    fn: Callable[..., Any], shape: tuple[int, ...], axis: int, sequence: type
) -> None:
    # The pieces' cotangents, of different shapes, went through np.shape as one array.
    x = np.random.default_rng(0).standard_normal(shape)
    pieces, vjp_fn = ad.vjp(fn, x)
    for piece, expected in zip(pieces, fn(x), strict=True):
        np.testing.assert_array_equal(piece, expected)
    cotangents = [np.full(np.shape(p), float(k + 1)) for k, p in enumerate(pieces)]
    (dx,) = vjp_fn(sequence(cotangents))
    np.testing.assert_array_equal(dx, np.concatenate(cotangents, axis=axis))
    # None stands for the zeros of a piece that is not used.
    (dx,) = vjp_fn(sequence([None, *cotangents[1:]]))
    cotangents[0] = np.zeros(np.shape(pieces[0]))
    np.testing.assert_array_equal(dx, np.concatenate(cotangents, axis=axis))


def test_a_malformed_cotangent_of_pieces_is_refused_naming_the_piece() -> None:
    _, vjp_fn = ad.vjp(split_unequally, np.arange(6.0))
    with pytest.raises(ad.DifferentiationError, match=r"piece 1 of the result .* shape \(2,\)"):
        vjp_fn([np.ones(1), np.ones(3), np.ones(3)])
    with pytest.raises(ad.DifferentiationError, match="must be a list or tuple of 3"):
        vjp_fn([np.ones(1), np.ones(2)])
    with pytest.raises(ad.DifferentiationError, match="must be a list or tuple of 3"):
        vjp_fn(np.ones(6))


# ---- concatenating and repeating lists and tuples (issue 15): Note [Concatenating sequences] --


def literals_concatenated(x):
    hs = [x, x * 2.0] + [np.sin(x)]  # noqa: RUF005
    return np.sum(np.stack(hs) ** 2) + len(hs)


def tuples_concatenated(x):
    pair = (x, np.cos(x))
    triple = pair + (x * 3.0,)  # noqa: RUF005
    return np.sum(triple[2] * triple[1]) + np.sum(triple[0])


def params_twice(x):
    params = [(x, x[0]), (x * 2.0, x[1])]
    total = 0.0
    for layer in params + params:
        W, b = layer
        total = total + np.sum(np.tanh(W * b))
    return total


def pieces_and_more(x):
    pieces = np.split(x, 2)
    a, b, c = pieces + [x[1:3]]  # noqa: RUF005
    return np.sum(a * b) + np.sum(c**2)


def pieces_sliced_and_joined(x):
    pieces = np.array_split(x, [1, 3])
    return np.sum(np.concatenate(pieces[1:] + pieces[:1]) * x)


def appended_then_extended(x):
    hs = []
    hs.append(x)
    hs += [x * x]
    return np.sum(np.stack(hs * 2) * np.arange(4.0)[:, None])


def tuple_repeated(x):
    return np.sum(np.stack(2 * (x, np.exp(x))))


def shapes_concatenated(x):
    column = x.reshape(x.shape + (1,))  # noqa: RUF005
    return np.sum(column * np.ones((1,) + x.shape[1:] + (2,)) ** 2)  # noqa: RUF005


CONCATENATIONS = [
    shapes_concatenated,
    literals_concatenated,
    tuples_concatenated,
    params_twice,
    pieces_and_more,
    pieces_sliced_and_joined,
    appended_then_extended,
    tuple_repeated,
]


@pytest.mark.parametrize("fn", CONCATENATIONS, ids=lambda fn: fn.__name__)
def test_concatenated_sequences_give_the_plain_value_and_gradient(fn: Callable[..., Any]) -> None:
    x = np.array([0.3, -0.7, 1.1, 0.4])
    np.testing.assert_allclose(ad.script(fn)(x), fn(x), rtol=1e-12)
    grad = ad.grad(fn)(x)
    np.testing.assert_allclose(grad, finite_differences(fn, (x,), 0), rtol=1e-6, atol=1e-8)


def test_shapes_concatenate_in_loops_once_their_rank_is_known() -> None:
    def rotated(x, n: int):
        for _ in range(n):
            x = x.reshape(x.shape[1:] + x.shape[:1])
        return x.shape + (len(x.shape),)  # noqa: RUF005

    x = np.zeros((2, 3, 4))
    assert ad.script(rotated)(x, 2) == rotated(x, 2) == (4, 2, 3, 3)


def test_a_concatenated_list_is_returned_as_a_list() -> None:
    def joined(x):
        return np.split(x, 2) + [x]  # noqa: RUF005

    x = np.arange(4.0)
    for result in (ad.script(joined)(x), ad.vjp(joined, x)[0]):
        assert type(result) is list
        assert [piece.tolist() for piece in result] == [[0, 1], [2, 3], [0, 1, 2, 3]]
    _, vjp_fn = ad.vjp(joined, x)
    (grad,) = vjp_fn([np.ones(2), 2 * np.ones(2), np.ones(4)])
    np.testing.assert_array_equal(grad, [2, 2, 3, 3])


def test_writes_through_what_a_concatenated_list_holds_are_refused_where_read() -> None:
    # NumPy's list holds x's pieces themselves; the scripted list does not see writes to
    # them, so reading it after one (or writing through it) is refused, located, as for any
    # list the program builds.
    def written_after(x):
        joined = np.split(x, 2) + [x * 1.0]  # noqa: RUF005
        x[0] = 5.0
        return joined[0] + joined[2][:2]

    def written_through(x):
        joined = np.split(x, 2) + [x * 1.0]  # noqa: RUF005
        joined[0][1] = 7.0
        return x

    for fn, where in ((written_after, "joined[0] + joined[2][:2]"), (written_through, "= 7.0")):
        with pytest.raises(ad.AutodiffError, match="tuple or list") as caught:
            ad.script(fn)(np.arange(4.0))
        assert where in str(caught.value)


@pytest.mark.parametrize(
    ("body", "message", "caret"),
    [
        ("    return [x] + (x,)", 'can only concatenate list (not "tuple") to list', "[x] + (x,)"),
        ("    return (x,) - (x,)", "unsupported operand types for -: 'tuple' and 'tuple'", "(x,)"),
        ("    return [x] + 1.0", "unsupported operand types for +: 'list' and 'float'", "[x]"),
        (
            "    hs = []\n    for i in range(n):\n        hs = hs + [x]\n    return hs",
            "cannot concatenate or repeat this list: its length is only known at run time",
            "hs + [x]",
        ),
        (
            "    return np.split(x, n) + [x]",
            "the pieces of a split into a number of sections computed at run time",
            "np.split(x, n) + [x]",
        ),
        ("    return [x] * n", "needs a number of times known at compile time", "[x] * n"),
    ],
)
def test_sequence_operators_that_cannot_work_are_refused_where_written(
    tmp_path: Any, body: str, message: str, caret: str
) -> None:
    source = tmp_path / "sequences.py"
    source.write_text(f"import numpy as np\n\n\ndef f(x, n: int):\n{body}\n")
    namespace: dict[str, Any] = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    with pytest.raises(ad.ScriptError, match=re.escape(message)) as caught:
        ad.script(namespace["f"])(np.arange(4.0), 2)
    text = str(caught.value)
    assert f"{source}:" in text
    assert caret in text
    assert "^" in text


def _states(w, xs):
    h = np.zeros(2)
    states = [h * 1.0]
    for x in xs:
        h = np.tanh(w @ h + x)
        states.append(h)
    return states


def _energy_of_states(w, xs):
    states = _states(w, xs)
    total = 0.0
    for t in range(xs.shape[0]):
        total += np.sum(states[t] ** 2)
    return total


def test_a_list_a_helper_builds_and_returns_is_read_and_differentiated_as_a_list() -> None:
    """A regression: the caller read the helper's list as a tuple of unknown length, which
    differentiation refuses ("cannot differentiate the parts of a value of type ...[]")."""
    w, xs = np.eye(2) * 0.5 + 0.1, np.linspace(-1.0, 1.0, 8).reshape(4, 2)
    assert ad.script(_energy_of_states)(w, xs) == pytest.approx(_energy_of_states(w, xs))
    got = ad.grad(_energy_of_states)(w, xs)
    eps, expected = 1e-6, np.zeros_like(w)
    for i in np.ndindex(w.shape):
        step = np.zeros_like(w)
        step[i] = eps
        expected[i] = (_energy_of_states(w + step, xs) - _energy_of_states(w - step, xs)) / 2 / eps
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
