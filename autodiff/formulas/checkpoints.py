"""Derivative formulas of the operators of `ir.ops.checkpoints`: both are the identity."""


def _checkpoint_in(self, name):
    def backward(dout):
        return dout, None

    return self, backward


def _checkpoint_out(self, name):
    def backward(dout):
        return dout, None

    return self, backward
