"""One problem found in a model: where it is, which rule it breaks, and what to do.

An error is a rule the node breaks: the model fails (or runtimes disagree on a value the
spec rejects). A warning is a departure from the spec's letter that runs, but that runtimes
read two ways (a position of shape [1], a split of the scalar 1 with ``keepdims=0``).

>>> d = Diagnostic(graph="main", node="split_1", op="Split", opset=18,
...                rule="num_outputs", message="cannot split a dim of 5 into 4 parts",
...                hint="pass explicit sizes, e.g. split=[2, 1, 1, 1]")
>>> print(d)
main/split_1 (Split-18) [num_outputs]: cannot split a dim of 5 into 4 parts. Hint: pass ...
>>> print(Diagnostic("main", "at", "SequenceAt", 11, "position-shape", "its position ...",
...                  severity="warning"))
main/at (SequenceAt-11) [position-shape] warning: its position ...
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

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
    #: "error": a rule the node breaks; "warning": a departure from the spec's letter that
    #: runs, but that runtimes read two ways.
    severity: Literal["error", "warning"] = "error"

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def __str__(self) -> str:
        hint = f". Hint: {self.hint}" if self.hint else ""
        where = location(self.graph, self.node)
        said = ":" if self.is_error else " warning:"
        return f"{where} ({self.op}-{self.opset}) [{self.rule}]{said} {self.message}{hint}"

    def as_dict(self) -> dict[str, object]:
        """The fields as a JSON-ready dict."""
        return asdict(self)
