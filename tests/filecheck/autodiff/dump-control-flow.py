# RUN: autodiff dump %s:rnn --stage df --arg h=f64[3] --arg w=f64[3,3] --arg n=4 | filecheck %s --check-prefix=LOOP
# RUN: autodiff dump %s:rnn --stage f --arg h=f64[3] --arg w=f64[3,3] --arg n=4 | filecheck %s --check-prefix=TAPE
# RUN: autodiff dump %s:branch --stage df --arg x=f64[3] | filecheck %s --check-prefix=BRANCH
"""Loop and branch derivatives as `autodiff dump` prints them (issue #6): the reverse loop
carries gradients named after their primals, reads the tapes backwards, and the weights are
read directly; a branch's derivative is a branch on the captured condition."""

# The loop's unused `t` names the reverse iteration's row; the if/else is a prim::If on purpose.
# ruff: noqa: B007, SIM108

import numpy as np


def rnn(h, w, n):
    for t in range(n):
        h = np.tanh(h @ w)
    return np.sum(h)


def branch(x):
    if np.sum(x) > 0:
        y = np.sin(x) * x
    else:
        y = x * 3.0
    return np.sum(y)


# f fills one preallocated tape per saved value, a row per iteration, and returns the tapes.
# TAPE-LABEL: graph @f(%h : Double(3), %w : Double(3, 3), %n : int):
# TAPE:         %[[N:n[.0-9]*]] : int = prim::int(%n)
# TAPE:         %[[ARRAY:.+]] : Double(*, 3) = prim::TapeArray(%[[N]],
# TAPE:         prim::Loop(%[[N]], %{{.+}}, %h, %[[ARRAY]])
# TAPE-NEXT:      block0(%t : int, %h{{[.0-9]*}} : Double(3), %h_tape{{.*}} : Double(*, 3)):
# TAPE:             prim::TapeWrite(%h_tape{{.*}}, %t, %h
# TAPE:         return ({{.*}}%h_tape{{.*}})

# df runs the loop backwards: row t = n - 1 - j of the tape, the carried dh, the accumulated dw.
# The h each iteration starts with is the row before (h itself for t = 0): one tape, not two.
# LOOP-LABEL: graph @df(%dout : Double(), %h : Double(3), %w : Double(3, 3), %n : int, %h_tape : Double(*, 3)):
# LOOP:         %dh{{.*}} : Double(3), %dw : Double(3, 3) = prim::Loop(%n, %{{.+}}, %dh, %{{.+}})
# LOOP-NEXT:      block0(%j : int, %dh{{.*}} : Double(3), %dw.1 : Double(3, 3)):
# LOOP:             %t : int = prim::sub(%{{.+}}, %j)
# LOOP:             %h.1 : Double(3) = aten::select(%h_tape, %{{.+}}, %t)
# LOOP:             %h.2 : Double(3) = aten::_previous_row(%h_tape, %h, %t)
# LOOP:             aten::_matmul_backward_other(%{{.+}}, %h.2, %w)
# LOOP:             %dw.3 : Double(3, 3) = aten::add(%dw.1, %dw.2)
# LOOP-NEXT:        -> (%{{.+}}, %dh{{.*}}, %dw.3)
# LOOP-NOT:     prim::GradOf
# LOOP-NOT:     prim::AutogradZero

# The branch on data: df gets the condition and what the taken branch saved (sin(x)).
# BRANCH-LABEL: graph @df(%dout : Double(), %x : Double(3), %{{.+}} : bool, %{{.+}} : Double(3)):
# BRANCH:         %dx{{.*}} : Double(3) = prim::If(%{{.+}})
# BRANCH-NEXT:      block0():
# BRANCH:             aten::cos(%x)
# BRANCH:           block1():
# BRANCH:             aten::mul(%{{.+}}, %{{.+}})
