"""The limits that keep a hostile file or argument from exhausting memory or time.

Every count, size and byte total that a model, a ``.npy`` file or an argument can claim is
checked against one of these before anything is allocated or iterated, and a refusal is a
:class:`~splitops.SplitError` (rule ``limit``) or a :class:`~splitops.ModelLoadError` that
names the limit and how to raise it. The spec allows 2^31-1 parts, but no real model comes
near a million: a Split asking for a billion parts is an attack on memory, not a model.

The limits are a context (a :mod:`contextvars` variable: per thread and per task), not a
setting of the process: raise one for a block of code with :func:`limits`, or for a command
with its ``--max-...`` option.

>>> current_limits().max_parts
1048576
>>> with limits(max_parts=2**22):
...     current_limits().max_parts
4194304
>>> limits(max_parts=10)
Traceback (most recent call last):
...
splitops.SplitError: max_parts must lie in [1024, 2147483647]; 10 was given.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace

from ._errors import Rule, SplitError

__all__ = ["Limits", "current_limits", "limits"]


@dataclass(frozen=True)
class Limits:
    """The limits in force; each has a ``--max-...`` option of the same name on the command."""

    #: Parts one split may make (array calls and model nodes alike); the spec allows 2^31-1.
    #: At least 1024: plans of up to 1024 parts are cached whatever the limit.
    max_parts: int = 2**20
    #: Elements a tensor stored in a model (an initializer, a Constant) may claim.
    max_tensor_elements: int = 2**31
    #: Bytes of external data a model may read in all.
    max_external_bytes: int = 4 * 2**30
    #: Elements ``splitops run`` may generate for a model's inputs in all, and that a ``.npy``
    #: file may claim; also the input of each node ``check --portability`` runs.
    max_input_elements: int = 2**24
    #: Nodes a model may hold, each call of a local function counted as the nodes of its body
    #: at any depth (onnxruntime inlines every call; inference and onnx.reference go through
    #: each): functions calling one another twice per level hold 2^k calls in a small file.
    max_nodes: int = 2**20
    #: Parts that the rewrites and probes of one model may make in all: what ``lower`` writes
    #: (a sequence of 2^20 parts becomes a Split of 2^20 outputs) and ``check --portability``
    #: runs, and the parts the SplitToSequence nodes of one run make (every Loop iteration
    #: included); each node is also bounded by ``max_parts``.
    max_model_parts: int = 2**18

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            low = 1024 if field.name == "max_parts" else 0
            high = 2**31 - 1 if field.name == "max_parts" else 2**62
            if type(value) is not int or not low <= value <= high:
                raise SplitError(
                    f"{field.name} must lie in [{low}, {high}]; {value!r} was given.",
                    rule=Rule.ARGUMENT,
                )


#: The limits when no block has changed them (a frozen value: nothing can change it).
DEFAULT_LIMITS = Limits()
_LIMITS: ContextVar[Limits] = ContextVar("splitops_limits", default=DEFAULT_LIMITS)


def current_limits() -> Limits:
    """The limits in force here."""
    return _LIMITS.get()


def limits(**changes: int) -> AbstractContextManager[Limits]:
    """Raise (or lower) limits for a block: ``with splitops.limits(max_parts=2**24): ...``.

    The new values are checked at once; unknown names are a ``TypeError``.
    """
    return _in_force(replace(_LIMITS.get(), **changes))


@contextmanager
def _in_force(chosen: Limits) -> Iterator[Limits]:
    token = _LIMITS.set(chosen)
    try:
        yield chosen
    finally:
        _LIMITS.reset(token)
