"""Derivative formulas of the operators of `ir.ops.prim`.

Lists: Note [Lists are values] in `ir.ops.prim`. The gradient of a list is a list of its elements'
gradients, zeros for those that got none."""

from ir.ops.gradients.prim import list_head, list_index_backward
from ir.ops.prim import list_append, list_index, written_argument


def ListAppend(lst, elem):
    def backward(dout):
        return list_head(dout), list_index(dout, -1)

    return list_append(lst, elem), backward


def WrittenArgument(value, target):
    # The argument once written back holds ``value`` (Note [Returned arguments] in
    # `passes.returned_arguments`): its gradient is ``value``'s; the argument as passed gets none.
    def backward(dout):
        return dout, None

    return written_argument(value, target), backward


def ListIndex(lst, i):
    def backward(dout):
        return list_index_backward(dout, lst, i), None

    return list_index(lst, i), backward
