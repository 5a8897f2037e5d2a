# RUN: autodiff dump %s:loss --stage f --arg x=f64[3] --arg w=f64[3] | filecheck %s --check-prefix=F
# RUN: autodiff dump %s:loss --stage df --arg x=f64[3] --arg w=f64[3] | filecheck %s --check-prefix=DF
"""Rematerialisation as `autodiff dump` prints it (issue 20): f keeps only what a checkpointed
call takes, and df runs each call's forward again, from copies of its marks, just before the
call's backward (Note [Checkpoints] in autodiff/checkpoints.py)."""

import numpy as np

import autodiff as ad


@ad.checkpoint
def layer(x, w):
    h = np.sin(x * w)
    return h * h


def loss(x, w):
    return np.sum(layer(layer(x, w), w))


# f marks what each call takes and returns, and keeps for df only the first call's result,
# which the second call takes: not sin(x * w), nor x * w, of either call.
# F-LABEL: graph @f(%x : Double(3), %w : Double(3)):
# F:         aten::_checkpoint_in(%x, %[[NAME:[0-9a-z.]+]])
# F:         %[[OUT:[0-9a-z.]+]] : Double(3) = aten::_checkpoint_out(%{{.+}}, %[[NAME]])
# F:         aten::_checkpoint_in(%[[OUT]], %[[NAME]])
# F:         return (%{{.+}}, %[[OUT]])

# df recomputes the second call from the first one's result, then runs its backward, then
# recomputes the first call from x.
# DF-LABEL: graph @df(
# DF-SAME:    %dout : Double(), %x : Double(3), %w : Double(3), %[[SAVED:[0-9a-z.]+]] : Double(3)):
# DF:         %[[AGAIN:[0-9a-z.]+]] : Double(3) = aten::_checkpoint_in(%[[SAVED]], %{{.+}})
# DF:         %[[PRODUCT:[0-9a-z.]+]] : Double(3) = aten::mul(%[[AGAIN]], %{{.+}})
# DF:         aten::sin(%[[PRODUCT]])
# DF:         aten::cos(%[[PRODUCT]])
# DF:         %[[FIRST:[0-9a-z.]+]] : Double(3) = aten::_checkpoint_in(%x, %{{.+}})
# DF:         %[[PRODUCT1:[0-9a-z.]+]] : Double(3) = aten::mul(%[[FIRST]], %{{.+}})
# DF:         aten::sin(%[[PRODUCT1]])
# DF:         aten::cos(%[[PRODUCT1]])
# DF:         return
