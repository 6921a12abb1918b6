"""What splitops needs of an array, as a Protocol: any array API library's arrays fit it."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["Array", "ArrayT"]


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
