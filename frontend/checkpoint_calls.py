"""Calls of checkpointed functions (``ad.checkpoint``): the call compiled as any other, each
array it takes marked ``aten::_checkpoint_in`` and each array it returns
``aten::_checkpoint_out``, so that differentiation knows what to recompute (Note
[Checkpoints] in `autodiff.checkpoints`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from frontend import syntax
from frontend.expressions import ExpressionEmitter
from frontend.objects import KnownObject
from frontend.trees import Tree
from ir.graph import Value
from ir.source import SourceRange
from ir.types import FLOAT, STR, TensorType, TupleType

CHECKPOINT_IN = "aten::_checkpoint_in"
CHECKPOINT_OUT = "aten::_checkpoint_out"

Argument = Value | KnownObject


class CheckpointCallEmitter(ExpressionEmitter):
    """``layer(x, W)`` where ``layer = ad.checkpoint(fn)``, for `frontend.emit.FunctionEmitter`."""

    # Provided by `frontend.function_calls` and `frontend.bound_calls`.
    argument_or_function: Callable[[syntax.Expr], Argument]
    call_bound: Callable[[object, Sequence[Argument], Mapping[str, Argument], SourceRange], Value]

    def emit_checkpoint_call(self, fn: Any, call: syntax.Call) -> Value:
        """The call of ``fn`` (what ``ad.checkpoint`` wrapped) between the marks."""
        # ``*args`` and ``**kwargs`` were spread already (Note [Unpacking in calls]).
        fn = getattr(fn, "__autodiff_source__", fn)  # a scripted function's plain function
        name = str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "checkpoint"))
        positional = [self.argument_or_function(arg) for arg in call.args]
        keywords = {k.name: self.argument_or_function(k.value) for k in call.keywords}
        positional = [self.mark_checkpoint(CHECKPOINT_IN, a, name, call.range) for a in positional]
        keywords = {
            key: self.mark_checkpoint(CHECKPOINT_IN, a, name, call.range)
            for key, a in keywords.items()
        }
        result = self.call_bound(fn, positional, keywords, call.range)
        marked = self.mark_checkpoint(CHECKPOINT_OUT, result, name, call.range)
        assert isinstance(marked, Value)
        return marked

    def mark_checkpoint(self, kind: str, value: Argument, name: str, r: SourceRange) -> Argument:
        """``value`` with each array and Python float in it passed through ``kind``: the leaves
        of a container known while compiling one by one, its structure kept. Constants, ints,
        strings and functions pass unmarked: the checkpointed code may decide things on them
        while compiling, and nothing differentiable flows from them. So do lists built at run
        time: what reads them is kept by ``f`` rather than recomputed."""
        if isinstance(value, KnownObject) or value.node.kind == "prim::Constant":
            return value
        tree = self.tree_of(value)
        if tree is not None:
            items = self.tree_items(value, tree, r)
            marked = [self.mark_checkpoint(kind, item, name, r) for item in items]
            return self.make_tree([v for v in marked if isinstance(v, Value)], tree, r)
        if not (isinstance(value.ty, TensorType) or value.ty == FLOAT):
            return value
        label = self.constant(name, STR, r)
        marked_value = self.insert(kind, [value, label], [value.ty], r).output
        marked_value.name_hint = value.name_hint
        return marked_value

    def tree_items(self, value: Value, tree: Tree, r: SourceRange) -> list[Value]:
        """The items of the container ``value`` holds, each with its own `Tree` if it is one."""
        if value.node.kind == "prim::TupleConstruct":
            return list(value.node.inputs)
        assert isinstance(value.ty, TupleType)
        items = self.insert("prim::TupleUnpack", [value], list(value.ty.elems), r).outputs
        for item, child in zip(items, tree.children, strict=True):
            if isinstance(child, Tree):
                self.trees[item] = child
        return list(items)
