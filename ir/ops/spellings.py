"""How user code spells an operator: the NumPy functions, array methods and attributes an
operator's record declares (``register_op(..., spellings={...})``), parsed and checked against
its schema when it is registered. `frontend.resolve` builds its lookup tables from them.

Note [NumPy spellings]
A record maps each spelling's name to its parameters, in NumPy's order, in a small notation
(tinygrad-style: one line per spelling)::

    spellings={
        "numpy.sum": "a:self axis !dtype !out keepdims !initial !where",
        "ndarray.sum": "axis !dtype !out * keepdims !initial !where",
    }

The name says what kind of spelling it is:

    numpy.f, numpy.linalg.f    a NumPy function, found by the object itself (``np.tanh`` under
                               any alias, or imported with ``from numpy import tanh``); names the
                               installed NumPy lacks (``numpy.concat`` before NumPy 2) spell
                               nothing; two names of one object (``numpy.absolute`` and
                               ``numpy.abs``) are one spelling, shown by the first
    scipy.special.f            a SciPy function, found by the object like ``numpy.f``
                               (``sp.gammaln`` under any alias, or imported by name), once user
                               code has imported its module: SciPy is optional (Note [SciPy
                               spellings] in `frontend.resolve`)
    scipy.stats.norm.f         a method of a module-level object (``norm.logpdf``), found by
                               equality
    ndarray.f                  an array method: the receiver fills the schema's first argument
    ndarray.f: ATTRIBUTE       an array attribute (``x.T``): the receiver fills the first
                               argument, the others keep their defaults
    autodiff.f                 the project's own function: the operator's kernel, re-exported

and the parameters:

    a            fills the schema argument of the same name
    a:self       fills schema argument ``self``
    b=None       fills ``b``; a None written out stands for the schema's default (SciPy's
                 ``logsumexp(a, b=None)``, whose schema default is 1.0)
    !out         a NumPy parameter the operator does not support (refused, naming it)
    /            the parameters before it are positional-only
    *            the parameters after it are keyword-only
    *shape       takes every positional argument: one is passed as it is, several as a tuple
                 (``x.reshape(3, 4)`` and ``x.reshape((3, 4))``)
    a *rest      after other parameters, takes the remaining positional arguments, always as
                 one tuple (``np.einsum("ij,jk", a, b)``)

Schema arguments no parameter fills keep the schema's default; a spelling that fills an
argument the schema lacks, or leaves one without a default unfilled, is refused at registration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ir.errors import IRError
from ir.ops.schema import Schema

ATTRIBUTE = "(attribute)"  # See Note [NumPy spellings]
METHOD_PREFIX = "ndarray."

# The keyword arguments every NumPy ufunc takes, none of which an operator supports.
UFUNC_KEYWORDS = "* !out !where !casting !order !dtype !subok"
UNARY_UFUNC = f"x:self / {UFUNC_KEYWORDS}"
BINARY_UFUNC = f"x1:self x2:other / {UFUNC_KEYWORDS}"

SpellingKind = Literal["function", "method", "attribute"]


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str  # NumPy's name
    argument: str | None  # the schema argument it fills; None when not supported
    positional: bool = True
    keyword: bool = True
    varargs: bool = False
    none_is_default: bool = False  # ``b=None``: None passed means the schema's default


@dataclass(frozen=True, slots=True)
class Spelling:
    """One NumPy (or project) spelling of an IR operator."""

    name: str  # as messages show it: "numpy.sum", "ndarray.sum", "ndarray.T"
    schema: Schema  # the operator's
    params: tuple[Parameter, ...]
    kind: SpellingKind = "function"

    @property
    def op(self) -> str:
        return self.schema.name

    @property
    def method(self) -> bool:
        """The receiver fills the schema's first argument."""
        return self.kind != "function"


def parse_parameters(text: str) -> tuple[Parameter, ...]:
    """The parameters written in the notation of Note [NumPy spellings]."""
    params: list[Parameter] = []
    keyword_only = False
    for token in text.split():
        if token == "/":
            params = [Parameter(p.name, p.argument, keyword=False) for p in params]
            continue
        if token == "*":
            keyword_only = True
            continue
        varargs = token.startswith("*")
        supported = not token.startswith("!")
        none_is_default = token.endswith("=None")
        name, _, argument = token.lstrip("*!").removesuffix("=None").partition(":")
        params.append(
            Parameter(
                name,
                (argument or name) if supported else None,
                positional=not keyword_only,
                keyword=not varargs,
                varargs=varargs,
                none_is_default=none_is_default,
            )
        )
    return tuple(params)


def parse_spellings(schema: Schema, declared: Mapping[str, str]) -> tuple[Spelling, ...]:
    """The spellings a record declares, each checked against the operator's ``schema``."""
    return tuple(_spelling(schema, name, text) for name, text in declared.items())


def _spelling(schema: Schema, name: str, text: str) -> Spelling:
    kind: SpellingKind
    if text == ATTRIBUTE:
        kind = "attribute"
    elif name.startswith(METHOD_PREFIX):
        kind = "method"
    else:
        kind = "function"
    if kind == "attribute" and not name.startswith(METHOD_PREFIX):
        raise IRError(f"{schema.name}: attribute spelling {name} is not of {METHOD_PREFIX[:-1]}")
    spelling = Spelling(name, schema, () if kind == "attribute" else parse_parameters(text), kind)
    arguments = schema.arguments
    names = {argument.name for argument in arguments}
    filled = {p.argument for p in spelling.params if p.argument is not None}
    if not filled <= names:
        unknown = ", ".join(sorted(filled - names))
        raise IRError(f"{schema.name}: spelling {name} fills {unknown}, which the schema lacks")
    receiver = 1 if spelling.method else 0
    unfilled = [a.name for a in arguments[receiver:] if not a.has_default and a.name not in filled]
    if unfilled:
        raise IRError(f"{schema.name}: spelling {name} leaves {', '.join(unfilled)} unfilled")
    return spelling
