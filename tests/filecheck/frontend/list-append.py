# RUN: autodiff dump %s:f --stage parsed | filecheck %s
# RUN: autodiff dump %s:g --stage parsed | filecheck %s --check-prefix=LOOP
# RUN: autodiff dump %s:g --stage typed --arg x=f64[2,3] --arg T=3 \
# RUN:   | filecheck %s --check-prefix=TYPED

# `hs = []` is an empty list whose element type is Nothing; `hs.append(v)` is a
# prim::ListAppend that makes a new list and rebinds `hs` to it (Note [Lists are values]).

import numpy as np


def f(x):
    hs = []
    hs.append(x)
    hs.append(np.sin(x))
    return np.stack(hs), hs[-1], len(hs)


# CHECK-LABEL: graph @f(%x : Tensor):
# CHECK-NEXT:    %hs : Nothing[] = prim::ListConstruct()  # {{.*}}list-append.py:13:10
# CHECK-NEXT:    %hs.1 : Tensor[] = prim::ListAppend(%hs, %x)  # {{.*}}list-append.py:14:5
# CHECK-NEXT:    %[[SIN:[0-9]+]] : Tensor = aten::sin(%x)
# CHECK-NEXT:    %hs.2 : Tensor[] = prim::ListAppend(%hs.1, %[[SIN]])
# CHECK:         aten::stack(%hs.2,
# CHECK:         prim::ListIndex(%hs.2,
# CHECK:         prim::len(%hs.2)


def g(x, T: int):
    hs = []
    h = x
    for _ in range(T):
        h = np.tanh(h)
        hs.append(h)
    return np.sum(np.stack(hs))


# A loop that appends carries the list: its first type, Nothing[], joins with Tensor[] and the
# body is emitted again with the joined type.
# LOOP-LABEL: graph @g(%x : Tensor, %T : int):
# LOOP:         %hs : Nothing[] = prim::ListConstruct()
# LOOP:         %h : Tensor, %hs.1 : Tensor[] = prim::Loop(%T, %{{[0-9]+}}, %x, %hs)
# LOOP-NEXT:      block0(%_ : int, %h.1 : Tensor, %hs.2 : Tensor[]):
# LOOP-NEXT:        %h.2 : Tensor = aten::tanh(%h.1)
# LOOP-NEXT:        %hs.3 : Tensor[] = prim::ListAppend(%hs.2, %h.2)
# LOOP:             -> (%{{[0-9]+}}, %h.2, %hs.3)
# LOOP:         aten::stack(%hs.1,

# Specialised, the list's element type is the appended array's.
# TYPED-LABEL: graph @g(%x : Double(2, 3), %T : int):
# TYPED:         %hs.1 : Double(2, 3)[] = prim::Loop(
# TYPED:           %hs.3 : Double(2, 3)[] = prim::ListAppend(%hs.2, %h.2)
