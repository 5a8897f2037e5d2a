"""A faster driver for lark's LALR(1) parse table: the same table, tokens and tree-building
callbacks as ``Lark.parse``, in a tighter loop.

# Note [Our own LALR loop]
# Parsing a long function was the largest part of compiling it (issue #8). Most of lark's own
# loop goes to work that does not depend on the input: per reduction it hashes the grammar rule
# to find its callback, compares the rule with the end state in an ``assert`` (a Python-level
# ``__eq__``), and looks up the rule's nonterminal by a lark ``Token`` name (another Python-level
# ``__eq__``). `FastParser` resolves all of that once per parser into plain dicts keyed by
# state and terminal name, and runs the same shift/reduce steps. On any token the table has no
# action for, it stops, and ``Lark.parse`` parses the text again to raise lark's own
# ``UnexpectedToken`` (with its expected terminals), so errors read exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from lark import Lark, Token
from lark.lexer import LexerThread
from lark.parse_tree_builder import ExpandSingleChild
from lark.parsers.lalr_analysis import Shift

# A reduction: how many values it pops, the nonterminal it makes, its tree-building callback,
# or None for a rule of one symbol that its parent takes in its place (lark's ``?rule``).
_Reduce = tuple[int, str, Callable[[list[Any]], Any] | None]


class _NoAction(Exception):
    """The table has no action for a token: the text has a syntax error."""


class FastParser:
    """Parses text as ``lark.parse(text)`` does, for a LALR ``lark`` with one start symbol, a
    custom lexer, a postlexer and no terminal callbacks. See Note [Our own LALR loop]."""

    def __init__(self, lark: Lark, start: str) -> None:
        self.lark = lark
        parser = lark.parser.parser.parser  # the LALR _Parser that Lark.parse runs
        table = parser.parse_table
        callbacks = parser.callbacks
        if any(isinstance(key, str) for key in callbacks):
            raise ValueError("terminal callbacks are not supported")
        self.start_state = table.start_states[start]
        self.end_state = table.end_states[start]
        reductions: dict[int, _Reduce] = {}
        self.shifts: dict[Any, dict[str, Any]] = {}
        self.reduces: dict[Any, dict[str, _Reduce]] = {}
        for state, actions in table.states.items():
            shifts: dict[str, Any] = {}
            reduces: dict[str, _Reduce] = {}
            for symbol, (action, argument) in actions.items():
                if action is Shift:
                    shifts[str(symbol)] = argument
                else:
                    found = reductions.get(id(argument))
                    if found is None:
                        size, callback = len(argument.expansion), callbacks[argument]
                        if size == 1 and type(callback) is ExpandSingleChild:
                            callback = None  # it returns its one child
                        found = (size, str(argument.origin.name), callback)
                        reductions[id(argument)] = found
                    reduces[str(symbol)] = found
            self.shifts[state] = shifts
            self.reduces[state] = reduces
        self.lexer = lark.parser.lexer  # the lexer and postlexer Lark.parse runs

    def parse(self, text: str) -> Any:
        """The tree ``self.lark.parse(text)`` gives, or the exception it raises."""
        try:
            tokens = LexerThread.from_text(self.lexer, text).lex(None)  # type: ignore[no-untyped-call]
            return self._run(tokens)
        except _NoAction:
            return self.lark.parse(text)  # raises lark's UnexpectedToken for the same token

    def _run(self, tokens: Iterator[Token]) -> Any:
        shifts, reduces = self.shifts, self.reduces
        states: list[Any] = [self.start_state]
        values: list[Any] = []
        for token in tokens:
            kind = token.type
            while True:
                state = states[-1]
                target = shifts[state].get(kind)
                if target is not None:
                    states.append(target)
                    values.append(token)
                    break
                self._reduce(reduces[state].get(kind), states, values)
        while True:  # at the end of the text, reduce until the start symbol is complete
            self._reduce(reduces[states[-1]].get("$END"), states, values)
            if states[-1] == self.end_state:
                return values[-1]

    def _reduce(self, reduce: _Reduce | None, states: list[Any], values: list[Any]) -> None:
        if reduce is None:
            raise _NoAction
        size, origin, callback = reduce
        if callback is None:  # one child, which stands for the rule
            states[-1] = self.shifts[states[-2]][origin]
            return
        if size:
            children = values[-size:]
            del states[-size:]
            del values[-size:]
        else:
            children = []
        states.append(self.shifts[states[-1]][origin])
        values.append(callback(children))
