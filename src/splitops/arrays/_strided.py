"""Copies and ``out=`` for libraries with strided memory (numpy, cupy, torch), written once.

A library gives the primitives (a new flat array, reshape, transpose, copy, the rows of an
array, its own views by a plan, where an array's bytes lie); :class:`Strided` makes of them:

- ``copies``: one allocation and as few copies as the layout allows
  (:func:`~splitops.arrays._layout.copy_layout`): the split axis first (or no longer axis
  before it): one copy of ``x``, then the library's views of the copy; a run of equal parts
  elsewhere: one gather; only sizes with no run form copy part by part;
- ``write``: ``out=``. Arrays that lie one after the other in one buffer, in order (the parts
  of an earlier ``copy=True`` call), are filled as ``copies`` fills its buffer; any other
  arrays are checked (:mod:`splitops.arrays._out`) and receive one copy each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import SplitPlan
from ._layout import Block, copy_layout, part_shapes
from ._out import check_apart, check_arrays, check_count, overlap, writing_failed

__all__ = ["Strided"]


class Strided:
    """Copies and ``out=`` writes of one strided library, from its primitives."""

    # The primitives ----------------------------------------------------------------------

    def empty(self, x: Any, count: int) -> Any:
        """A new flat array of ``count`` elements of ``x``'s dtype, on its device."""
        raise NotImplementedError

    def contiguous(self, x: Any) -> Any:
        """A new C-ordered copy of ``x``."""
        raise NotImplementedError

    def copy(self, destination: Any, source: Any) -> None:
        raise NotImplementedError

    def reshape(self, a: Any, shape: tuple[int, ...]) -> Any:
        return a.reshape(shape)

    def transpose(self, a: Any, order: tuple[int, ...]) -> Any:
        raise NotImplementedError

    def rows(self, a: Any) -> Sequence[Any]:
        """The views of ``a`` at each position of its first axis."""
        raise NotImplementedError

    def views(self, x: Any, plan: SplitPlan) -> Sequence[Any]:
        """The parts of ``x`` by ``plan``, as views: the library's own split."""
        raise NotImplementedError

    def span(self, a: Any) -> tuple[int, int] | None:
        """The bytes ``a`` may touch, or ``None`` (empty, or memory nobody can tell)."""
        raise NotImplementedError

    def owner(self, first: Any, x: Any) -> Any:
        """The contiguous array of ``x``'s dtype, writeable where ``x``'s parts may be
        written, that ``first`` (an array of ``out``) is a view of; else ``None``."""
        raise NotImplementedError

    def piece(self, array: Any, owner: Any, shape: tuple[int, ...]) -> int | None:
        """Where ``array`` starts when it is a C-contiguous, writeable view of ``owner`` of
        ``shape`` and ``owner``'s dtype (-1 when it is empty: anywhere will do); else
        ``None``."""
        raise NotImplementedError

    def flat(self, owner: Any, start: int, stop: int) -> Any:
        """The flat view of ``owner`` over its bytes ``[start, stop)`` (addresses), or
        ``None`` when no view of its elements lies there."""
        raise NotImplementedError

    def tiled(self, out: Sequence[Any], x: Any, shapes: Sequence[tuple[int, ...]]) -> Any:
        """The flat array that the arrays of ``out`` fill one after the other, in order,
        each a C-contiguous view of one array, of ``x``'s dtype, of its part's shape and
        writeable as its library allows (so that no check of :meth:`check_array` could
        fail); else ``None``. The parts of one ``copy=True`` call are such arrays.

        It runs once per array of ``out``: each step reads as little as it can.
        """
        owner = self.owner(out[0], x)
        if owner is None:
            return None
        first: int | None = None
        position: int | None = None
        for array, shape in zip(out, shapes, strict=True):
            address = self.piece(array, owner, shape)
            if address is None:
                return None
            if address < 0:
                continue
            if address != position:
                if position is not None:
                    return None
                first = address
            position = address + array.nbytes
        if first is None or position is None:
            return None
        return self.flat(owner, first, position)

    def overlaps(self, a: Any, b: Any) -> bool:
        """Whether ``a`` and ``b`` may share memory."""
        return overlap(self.span(a), self.span(b))

    def check_array(self, x: Any, array: Any, i: int, name: str) -> None:
        """What the library refuses to write into, as a SplitError naming ``out[i]``."""

    # Made of them ------------------------------------------------------------------------

    def copies(self, x: Any, plan: SplitPlan) -> Sequence[Any]:
        """Copies of the parts, cut from one new buffer: contiguous, sharing no bytes with
        ``x`` or with each other, the memory given back when the last of them dies."""
        if not plan.axis:  # the common case first, without the layout's arithmetic
            return self.views(self.contiguous(x), plan)
        blocks = copy_layout(tuple(x.shape), plan)
        if blocks[0].kind == "whole":
            return self.views(self.contiguous(x), plan)
        buffer = self.empty(x, blocks[-1].stop)
        if self.fuses(x, plan, each=blocks[0].kind == "part"):
            parts = self.destinations(buffer, plan, blocks)
            self.copy_each(x, plan, parts)
            return parts
        # Filled first, cut after: autograd allows no in-place write into a base whose
        # several views (rows) were taken before.
        self.fill(buffer, x, blocks)
        return self.destinations(buffer, plan, blocks)

    def destinations(self, buffer: Any, plan: SplitPlan, blocks: Sequence[Block]) -> list[Any]:
        """The parts as they lie in ``buffer``, views of it (filled or not)."""
        parts: list[Any] = []
        for block in blocks:
            target = self.reshape(buffer[block.start : block.stop], block.shape)
            if block.kind == "whole":
                parts.extend(self.views(target, plan))
            elif block.kind == "rows":
                parts.extend(self.rows(target))
            else:
                parts.append(target)
        return parts

    def fill(self, buffer: Any, x: Any, blocks: Sequence[Block]) -> None:
        """Copy the parts of ``x`` into ``buffer``, a block at a time."""
        for block in blocks:
            target = self.reshape(buffer[block.start : block.stop], block.shape)
            self.copy(target, self.source(x, block))

    def fuses(self, x: Any, plan: SplitPlan, *, each: bool) -> bool:
        """Whether :meth:`copy_each` copies the parts in one call of the library, rather than
        a copy per block (``each``: the layout copies each part on its own anyway)."""
        return False

    def copy_each(self, x: Any, plan: SplitPlan, parts: Sequence[Any]) -> None:
        """Copy every part of ``x`` into its array of ``parts`` in one call of the library."""
        raise NotImplementedError

    def source(self, x: Any, block: Block) -> Any:
        """The view of ``x`` that ``block`` copies, in the block's shape."""
        part = x[block.index]
        if block.grouped:
            part = self.reshape(part, block.grouped)
        if block.order:
            part = self.transpose(part, block.order)
        return part

    def write(self, x: Any, plan: SplitPlan, out: object, name: str) -> list[Any]:
        """``out=``: the parts of ``x`` copied into the arrays of ``out``, which are returned.

        ``name`` (``Split-18``, ...) starts every error message.
        """
        shape = tuple(x.shape)
        shapes = part_shapes(shape, plan)
        arrays = check_count(out, len(shapes), name)
        buffer = self.tiled(arrays, x, shapes) if arrays else None
        if buffer is not None and not self.overlaps(buffer, x):
            blocks = copy_layout(shape, plan) if plan.axis else ()
            if not blocks or blocks[0].kind == "whole":
                self.copy(self.reshape(buffer, shape), x)
            elif self.fuses(x, plan, each=blocks[0].kind == "part"):
                self.copy_each(x, plan, arrays)
            else:
                self.fill(buffer, x, blocks)
            return arrays
        check_arrays(x, arrays, shapes, name, self.check_array)
        check_apart(self.span(x), [self.span(array) for array in arrays], name)
        self.write_each(x, plan, arrays, name)
        return arrays

    def write_each(self, x: Any, plan: SplitPlan, arrays: Sequence[Any], name: str) -> None:
        """Copy each part of ``x`` into its array (checked), one copy per part."""
        for index, (array, part) in enumerate(zip(arrays, self.views(x, plan), strict=True)):
            try:
                self.copy(array, part)
            except (RuntimeError, ValueError, TypeError) as error:
                raise writing_failed(index, error, name) from error
