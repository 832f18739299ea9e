"""State machines as data: a transition table that every state change goes through.

Owns the one mechanism the engines' state tables share (h11's ``_state.py`` is the model):
a :class:`StateMachine` is a name, an initial state and a table ``(state, verb) -> state``.
An object moves only by asking its machine; a verb the table does not list for the current
state is the host's mistake and raises :class:`LocalProtocolError`. An absorbing state (an
exchange cancelled by the peer) takes every verb of the table and stays; it is declared as
such and its rows are written out into the table, so the table alone says what is legal. The tables themselves live with the objects they drive (``server/states.py``,
``client/states.py``); ``python -m mcpwire._diagrams`` renders them for the docs.
"""

from __future__ import annotations

from enum import Enum
from typing import Generic, Mapping, TypeVar

from .errors import LocalProtocolError

__all__ = ["StateMachine"]

S = TypeVar("S", bound=Enum)


class StateMachine(Generic[S]):
    """One transition table. ``move(state, verb)`` is the only way a state changes."""

    __slots__ = ("name", "initial", "table")

    def __init__(
        self, name: str, initial: S, table: Mapping[tuple[S, str], S], *, absorbing: tuple[S, ...] = ()
    ) -> None:
        self.name = name
        self.initial = initial
        self.table = dict(table)
        verbs = sorted({verb for _, verb in table})
        for state in absorbing:
            for verb in verbs:
                self.table.setdefault((state, verb), state)

    def move(self, state: S, verb: str) -> S:
        """The state after ``verb`` in ``state``; LocalProtocolError when the table has no such move."""
        try:
            return self.table[(state, verb)]
        except KeyError:
            raise LocalProtocolError(f"{self.name}: cannot {verb} in state {state.name}") from None

    def allows(self, state: S, verb: str) -> bool:
        return (state, verb) in self.table

    def diagram(self) -> str:
        """The table as a Mermaid state diagram (for docs/state-machines.md)."""
        lines = [f"### {self.name}", "", "```mermaid", "stateDiagram-v2", f"    [*] --> {self.initial.name}"]
        for (src, verb), dst in self.table.items():
            lines.append(f"    {src.name} --> {dst.name}: {verb}")
        lines += ["```", ""]
        return "\n".join(lines)
