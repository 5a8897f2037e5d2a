"""Derivative formulas of the operators of `ir.ops.tapes`."""

from ir.ops.gradients.prim import list_head
from ir.ops.prim import list_index
from ir.ops.tapes import tape_push


def TapePush(tape, value):
    # A loop tape (Note [Loop tapes]) is filled in place, but as a value it is the list it
    # becomes: its gradient is ListAppend's. This is what differentiates a loop twice.
    def backward(dout):
        return list_head(dout), list_index(dout, -1)

    return tape_push(tape, value), backward
