# RUN: autodiff dump %s:f --stage parsed | filecheck %s --check-prefix=PARSED
# RUN: autodiff dump %s:f --stage typed --arg x=f64[3,4] --arg v=f64[4] | filecheck %s --check-prefix=TYPED
"""Writes as `autodiff dump` prints them (issue #7): the parsed graph keeps them as in-place
operators; the typed one is pure SSA after functionalisation, with the caller's array written
back at the end."""

import numpy as np


def f(x, v):
    x[0] = v
    y = x.copy()
    row = y[1]
    row *= 2.0
    return np.sum(y)


# PARSED-LABEL: graph @f(%x : Tensor, %v : Tensor):
# PARSED:         aten::index_put_(%x, %v, %{{.+}})
# PARSED:         aten::copy_method(%x)
# PARSED:         aten::copy_(%row, %{{.+}})

# TYPED-LABEL: graph @f(%x : Double(3, 4), %v : Double(4)):
# TYPED-NOT:     aten::{{copy_|index_put_}}
# TYPED:         %[[X1:.+]] : Double(3, 4) = aten::index_put(%x, %v, %{{.+}})
# TYPED:         %y : Double(3, 4) = aten::copy_method(%[[X1]])
# TYPED:         aten::_written(%row,
# TYPED:         aten::select_scatter(%y,
# TYPED:         prim::WriteBack(%x, %[[X1]])
# TYPED-NOT:     aten::{{copy_|index_put_}}
