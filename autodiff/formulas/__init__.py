"""Derivative formulas, one per differentiable operator, in the scripted subset of Python.

One module per operator family, named like the `ir.ops` module that registers the operators
(``tanh``'s formula is in `autodiff.formulas.elementwise`, as ``aten::tanh`` is in
`ir.ops.elementwise`); the helpers of the `ir.ops.gradients` package have theirs in
`autodiff.formulas.gradients`, and the operators of `ir.ops.scipy_stats_univariate` have theirs in
two modules, by family of distributions (`autodiff.formulas.scipy_stats_univariate_beta` and
`autodiff.formulas.scipy_stats_univariate_gamma`). `autodiff.derivatives` compiles the modules of
``FAMILIES`` with the project's own frontend; Python never runs a formula. Each function is named
after the operator it differentiates (``mul`` is ``aten::mul``; a trailing underscore keeps a name
off a Python builtin; a capitalised name such as ``ListAppend`` is a ``prim::`` operator) and takes
the operator's operands in schema order. It returns the operator's result and a ``backward``
closure mapping the result's gradient to one gradient per operand (None where an operand gets none).
What ``backward`` reads from the forward is the context that `f` hands to `df`.

Broadcasting is undone with ``sum_to_size(grad, size)``, where ``size`` is
``size_if_not_equal(operand, out)`` computed in the forward: once shapes are specialised,
`fold-sizes` turns it into a constant (None when no broadcasting happened), so no size is ever
computed or captured at run time.

Conventions at non-smooth points follow JAX: ``abs`` has gradient 0 at 0; ties in
``maximum``/``minimum`` and in ``max``/``min`` reductions share the gradient evenly; ``clip``
passes the gradient to its input at the bounds (and to a bound only where it clips); ``sqrt`` at
0 gives inf. Likewise ``fabs`` at 0 and ``hypot`` at the origin give 0; ``sinc`` at 0 gives its
derivative there, 0; ``fmax``/``fmin`` treat ties as ``maximum`` does and pass the gradient to
the operand that is not NaN; ``nan_to_num`` passes it where its input is finite; ``std`` of
values that are all equal gives 0, the least-norm subgradient, as ``norm`` at 0 does (std is a
scaled norm of the centred values); ``x ** 0`` at 0 gives its derivative, 0 (docs/conventions.md
has the table). Gradients keep their operand's dtype: counts and casts go through ``dtype_of``.

Note [Complex gradients]
Complex values (complex arguments, ``np.fft``'s results) follow JAX's convention: the cotangent
of a complex ``z`` for a real loss ``L`` is ``dL/dRe z - 1j * dL/dIm z``, and a vjp is the plain
transpose, never conjugated. So a holomorphic operator's formula is the real one (``mul`` is
``dout * other``), a linear map's vjp is its transpose (the DFT matrix is symmetric: ``fft``'s
vjp is ``fft``),
``real`` passes ``dout`` on, ``imag`` gives ``-1j * dout``, ``conj`` gives ``conj(dout)``
and ``abs`` gives ``dout * conj(z) / |z|``; a real function of ``|z|`` and the like (``var``,
``std``, ``norm``) has the conjugate of what its real formula reads (``conj(centered)``), and
the decompositions (``eigh``, ``svd``) conjugate-transpose. Where an operand is real, its
gradient is the real part, in its dtype (``_grad_like``), as JAX's ``convert_element_type``
transposes; `autodiff.differentiate` takes it for every operator that mixes real and complex
values (Note [Real operands of complex operators]). For any of them, a step ``dz`` changes the
loss by ``Re(sum(g * dz))``: the check `tests/unit/test_complex_gradients.py` makes, and
`tests/unit/test_complex_operators.py` one order up and in complex64. A Python complex is a 0-d
complex128 array (Note [Python complex numbers] in `ir.types`).
"""

from autodiff.formulas import (
    arrangement,
    checkpoints,
    convolution,
    creation,
    differences,
    elementwise,
    fourier,
    fourier_real,
    gradients,
    indexing,
    inplace,
    linalg,
    linalg_decompositions,
    prim,
    products,
    reductions,
    scans,
    scatter,
    scipy_linalg,
    scipy_signal,
    scipy_special,
    scipy_stats,
    scipy_stats_multivariate,
    scipy_stats_univariate_beta,
    scipy_stats_univariate_gamma,
    selection,
    shape_ops,
    sorting,
    tapes,
    taps,
)

FAMILIES = (
    elementwise,
    creation,
    reductions,
    scans,
    differences,
    shape_ops,
    arrangement,
    inplace,
    linalg,
    linalg_decompositions,
    products,
    convolution,
    fourier,
    fourier_real,
    scipy_linalg,
    scipy_special,
    scipy_stats,
    scipy_stats_univariate_beta,
    scipy_stats_univariate_gamma,
    scipy_stats_multivariate,
    scipy_signal,
    selection,
    indexing,
    scatter,
    sorting,
    gradients,
    prim,
    tapes,
    taps,
    checkpoints,
)
