"""What splitops needs of an array, as a Protocol: any array API library's arrays fit it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["Array", "ArrayT", "Kernel"]


@runtime_checkable
class Array(Protocol):
    """An array of the Python array API standard, as far as splitting needs one."""

    @property
    def shape(self) -> tuple[Any, ...]: ...

    @property
    def ndim(self) -> int: ...

    @property
    def dtype(self) -> Any: ...

    def __getitem__(self, key: Any, /) -> Any: ...


ArrayT = TypeVar("ArrayT", bound=Array)


class Kernel(Protocol):
    """What splitops asks of a library's native path (or of the array API standard's)."""

    def describe(self, x: Any, op: str, opset: int) -> tuple[Any, tuple[Any, ...]]:
        """The element type and shape of ``x`` (or a SplitTypeError naming ``op``)."""

    def views(self, x: Any, plan: Any) -> Sequence[Any]:
        """The parts of ``x`` by ``plan``, views where the library has them."""

    def copies(self, x: Any, plan: Any) -> Sequence[Any]:
        """The parts as new contiguous arrays sharing no memory with ``x`` or each other."""

    def write(self, x: Any, plan: Any, out: object, name: str) -> list[Any]:
        """Copies of the parts written into the arrays of ``out`` (checked), returned."""
