"""One problem found in a model: where it is, which rule it breaks, and what to do.

>>> d = Diagnostic(graph="main", node="split_1", op="Split", opset=18,
...                rule="num_outputs", message="cannot split a dim of 5 into 4 parts",
...                hint="pass explicit sizes, e.g. split=[2, 1, 1, 1]")
>>> print(d)
main/split_1 (Split-18) [num_outputs]: cannot split a dim of 5 into 4 parts. Hint: pass ...
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..model import location

__all__ = ["Diagnostic"]


@dataclass(frozen=True)
class Diagnostic:
    """A rule a Split or SplitToSequence node breaks."""

    #: Where the node lives: "main", a subgraph path such as "main/loop_1.body", or
    #: "function:domain.name".
    graph: str
    #: The node's name (or its first output's name when it has none).
    node: str
    op: str
    #: The version of the operator that applies (its since_version).
    opset: int
    #: A short name of the broken rule, e.g. "axis", "split-sum", "num_outputs", "dtype".
    rule: str
    #: What is wrong, naming the offending values.
    message: str
    #: What to do about it.
    hint: str = ""

    def __str__(self) -> str:
        hint = f". Hint: {self.hint}" if self.hint else ""
        where = location(self.graph, self.node)
        return f"{where} ({self.op}-{self.opset}) [{self.rule}]: {self.message}{hint}"

    def as_dict(self) -> dict[str, object]:
        """The fields as a JSON-ready dict."""
        return asdict(self)
