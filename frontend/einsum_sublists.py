"""``np.einsum``'s sublist form, ``np.einsum(a, [0, 1], b, [1, 2], [0, 2])``, rewritten to the
subscripts form, ``np.einsum("AB,BC->AC", a, b)``, before the call is emitted.

NumPy names sublist label ``k`` with the ``k``-th letter of ``A..Za..z`` (so an implicit output
lists the labels in the order of their numbers); ``...`` in a sublist is an ellipsis. The
sublists must be written in the call, as lists or tuples of int literals and ``...``: they decide
the result's shape, so the compiler reads them while compiling (a call whose second argument is
no list or tuple written there is taken for the subscripts form).
"""

from __future__ import annotations

import string

from frontend import syntax
from frontend.errors import ScriptError

_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def subscripts_call(call: syntax.Call) -> syntax.Call:
    """``call`` of ``np.einsum`` in the subscripts form: as it is when it already is one (its
    second argument is no list or tuple written in the call)."""
    args = call.args
    if len(args) < 2 or not isinstance(args[1], syntax.List | syntax.Tuple):
        return call
    if isinstance(args[0], syntax.Constant) and isinstance(args[0].value, str):
        return call
    if any(isinstance(a, syntax.Starred) for a in args) or call.keywords:
        raise ScriptError(
            "np.einsum in the sublist form takes its operands and sublists positionally",
            call.range,
            doc="numpy-functions",
        )
    pairs = len(args) // 2
    inputs = [_labels(args[2 * i + 1]) for i in range(pairs)]
    text = ",".join(inputs)
    if len(args) % 2:
        text += "->" + _labels(args[-1])
    subscripts = syntax.Constant(text, range=call.range)
    operands = tuple(args[2 * i] for i in range(pairs))
    return syntax.Call(call.func, (subscripts, *operands), (), range=call.range)


def _labels(sublist: syntax.Expr) -> str:
    if not isinstance(sublist, syntax.List | syntax.Tuple):
        raise _not_literal(sublist)
    labels = []
    for item in sublist.elts:
        if isinstance(item, syntax.Constant) and item.value is Ellipsis:
            labels.append("...")
        elif (
            isinstance(item, syntax.Constant)
            and isinstance(item.value, int)
            and not isinstance(item.value, bool)
            and 0 <= item.value < len(_LETTERS)
        ):
            labels.append(_LETTERS[item.value])
        else:
            raise _not_literal(item)
    return "".join(labels)


def _not_literal(expr: syntax.Expr) -> ScriptError:
    return ScriptError(
        "a sublist of np.einsum must be written in the call as a list of ints from 0 to 51 "
        "(and '...'), such as [0, 1]",
        expr.range,
        doc="numpy-functions",
    )
