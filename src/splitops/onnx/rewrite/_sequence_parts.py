"""The parts of a SplitToSequence computed in the graph, for the forms that remove its
sequence where its number of parts, or a position read, is known only at run time.

The spec's three forms: chunks of 1 (no split, or the scalar 1 that is the default;
``keepdims=0`` then drops the axis), chunks of a scalar length ``s`` (the last smaller),
and 1-d sizes. What the readers share (the axis length, the checked chunk length, the ends
of the sizes) is computed once, in the SplitToSequence's place, and every reader computes
its own part from it, in its own scope: a SequenceAt at a constant position, at a Loop's
iteration number (inside the Loop's body), its count for SequenceLength, all parts at once
for ConcatFromSequence.

A position past the parts fails at run time, as SequenceAt does: a run-time check for
chunks, Gather for sizes, unless the Loop reading it runs for the sequence's length (its
positions then lie inside). The checks of the split itself (``s >= 1``; sizes >= 0 adding up
to the axis) lie on the path of every part.
"""

from __future__ import annotations

from onnx import TensorProto

from ..model import Scope, SplitSite
from ._graph_sizes import GraphBuilder

__all__ = ["RuntimeParts", "concatenated", "not_joinable"]

#: The most sizes whose ends are summed one by one rather than by a CumSum.
_SUMMED_ONE_BY_ONE = 64


#: The rule named in the check that fails where a Loop stacks parts of unequal lengths.
_EQUAL_RULE = "parts_must_be_of_one_length_where_a_loop_stacks_them"


class RuntimeParts:
    """The parts of one SplitToSequence, as Slices (or a Gather) of its input.

    ``end_by_min``: a chunk's end as ``Min(start + chunk, length)`` (tract fails a Slice whose
    end a Where picks); else by a Where, as Min takes int64 from opset 12 only.
    ``unsqueezed_chunk``: a 0-d chunk length given at run time becomes ``[1]`` by an
    Unsqueeze and a Cast (TVM's Reshape refuses a 0-d value computed from ``Shape``).
    """

    def __init__(
        self,
        site: SplitSite[Scope],
        shared: GraphBuilder,
        *,
        end_by_min: bool = False,
        unsqueezed_chunk: bool = False,
    ) -> None:
        self.site = site
        self.unsqueezed_chunk = unsqueezed_chunk
        self.shared = shared
        self.x = site.data
        #: The split axis as given (for the Slices), and counted from the front where the
        #: rank is known (for moving the axes).
        self.axis = site.spec.axis
        self.at = site.axis
        #: Whether the parts lose the split axis: ``None`` where a 0-d split given at run
        #: time decides it (``keepdims=0``; the scalar 1 is the default split, which drops
        #: it): each part is then reshaped to its shape without the axis where it is 1.
        self.squeeze = site.drops_axis
        # Min takes int64 from opset 12 on.
        self.end_by_min = end_by_min and shared.opset >= 12
        self._values: dict[str, str] = {}
        if site.spec.split_input is None or site.split_rank == 0:
            self.kind, self.how = "chunks", "Slice per SequenceAt"
        else:
            self.kind, self.how = "sizes", "Slice per SequenceAt, offsets by CumSum"

    def _value(self, name: str) -> str:
        """A shared value, made at first use."""
        if name not in self._values:
            self._values[name] = getattr(self, f"_make_{name}")()
        return self._values[name]

    def _make_length(self) -> str:
        return self.shared.axis_length(self.x, self.axis)

    def _make_chunk(self) -> str:
        build, site = self.shared, self.site
        if site.chunk is not None:  # a constant, checked >= 1 by the model check
            return build.ints([site.chunk])
        assert site.spec.split_input is not None
        given = site.spec.split_input
        if self.unsqueezed_chunk:  # 0-d, as the split of chunks is
            flat = build.add("Cast", [build.unsqueeze(given, 0)], "chunk", to=TensorProto.INT64)
        else:
            given = build.as_int64(given, site.split_element)
            flat = build.add("Reshape", [given, build.ints([1])], "chunk")
        return self._at_least(flat, flat, 1, "chunk_length_must_be_at_least_1")

    def _at_least(self, value: str, checked: str, least: int, rule: str) -> str:
        """``value`` (one element) where ``checked`` (``[1]`` int64) is at least ``least``,
        failing at run time where not, in the builder's check form: on a part's path for the
        ``part`` form (``checked - least``, which must not be negative), else on
        ``value``'s."""
        build = self.shared
        if build.check == "part":
            less = build.add("Sub", [checked, build.ints([least])], "less")
            build.must_not_be_negative(less, rule, scalar=False)
            return value
        small = build.add("Less", [checked, build.ints([least])], "below")
        return build.checked(value, small, rule)

    def _make_chunk_count(self) -> str:
        build, chunk = self.shared, self._value("chunk")
        less = build.add("Sub", [chunk, build.ints([1])], "chunk_less_one")
        raised = build.add("Add", [self._value("length"), less], "raised")
        return build.add("Div", [raised, chunk], "count")

    def _make_sizes(self) -> str:
        site = self.site
        assert site.spec.split_input is not None
        return self.shared.as_int64(site.spec.split_input, site.split_element)

    def _make_ends(self) -> str:
        build, sizes = self.shared, self._value("sizes")
        count = self.site.split_length
        if count is not None and 0 < count <= _SUMMED_ONE_BY_ONE:
            # Sizes of a static count: each end the one before plus a size (tract fails a
            # CumSum of sizes known only at run time).
            ends: list[str] = []
            for index in range(count):
                size = build.add(
                    "Slice", [sizes, build.ints([index]), build.ints([index + 1])], "size"
                )
                ends.append(build.add("Add", [ends[-1], size], "end") if ends else size)
            ends_all = build.add("Concat", ends, "ends", axis=0) if count > 1 else ends[0]
        else:
            # ``reverse`` written out, though 0 is its default: onnx2torch 1.5.15 reads an
            # absent one as 1, and sums from the back.
            ends_all = build.add("CumSum", [sizes, build.scalar(0)], "ends", reverse=0)
        return self._checked_ends(ends_all)

    def _checked_ends(self, ends: str) -> str:
        build, sizes = self.shared, self._value("sizes")
        total = build.add("Gather", [ends, build.ints([-1])], "total", axis=0)
        same = build.add("Equal", [total, self._value("length")], "sum")
        wrong_sum = build.add("Not", [same], "wrong_sum")
        bad = build.add("Or", [wrong_sum, build.any_negative(sizes)], "bad_sizes")
        checked = build.checked(total, bad, "sizes_must_be_non_negative_and_add_up_to_the_axis")
        return build.add("Add", [ends, build.add("Sub", [checked, total], "zero")], "ends")

    def check(self) -> None:
        """What the spec checks of the split at run time, reading no part: the axis (through
        the axis length), the chunk length, or the sizes."""
        if self.kind == "sizes":
            self._value("ends")
            return
        if self.site.rank is None:
            self._value("length")  # the axis, against a rank known only at run time
        if self.site.spec.split_input is not None:
            self._value("chunk")

    def count(self, step: GraphBuilder, out: str) -> None:
        """SequenceLength: the number of parts, a 0-d int64 tensor."""
        if self.kind == "chunks":
            step.add("Reshape", [self._value("chunk_count"), step.ints([])], "n", output=out)
        else:
            self._value("ends")  # the sizes are checked wherever the sequence is read
            step.add("Size", [self._value("sizes")], "count", output=out)

    def _gathered(self) -> bool:
        """Whether a part is one Gather of the input (and an Unsqueeze where the axis stays):
        chunks of 1, whose parts a runtime then knows are of length 1 along the axis (from a
        Slice of bounds known at run time, it does not). Not of strings: onnxruntime's
        Gather copies only the first string of each row."""
        return (
            self.kind == "chunks"
            and self.squeeze is not None
            and self.site.chunk == 1
            and self.site.element not in (None, TensorProto.STRING)
        )

    def _gather(self, step: GraphBuilder, position: str, out: str) -> None:
        """The part at the 0-d ``position`` by a Gather, which fails past the parts as
        SequenceAt does (negative counts from the back)."""
        if self.squeeze:
            step.add("Gather", [self.x, position], "part", output=out, axis=self.axis)
            return
        part = step.add("Gather", [self.x, position], "row", axis=self.axis)
        if step.opset >= 13:
            step.add("Unsqueeze", [part, step.ints([self.axis])], "part", output=out)
        else:
            step.add("Unsqueeze", [part], "part", output=out, axes=[self.axis])

    def part(self, step: GraphBuilder, position: int, out: str) -> None:
        """SequenceAt at a constant ``position`` (negative counts from the back)."""
        if self._gathered():
            self._gather(step, step.scalar(position), out)
            return
        if self.kind == "sizes":
            start, end = self._size_bounds(step, step.ints([position]))
        else:
            chunk, length = self._value("chunk"), self._value("length")
            if position < 0:
                index = step.add("Add", [self._value("chunk_count"), step.ints([position])], "i")
                before = step.add("Less", [index, step.ints([0])], "before_first")
                index = step.checked(index, before, "sequence_position_out_of_range")
                start = step.add("Mul", [index, chunk], "start")
            else:
                start = step.add("Mul", [step.ints([position]), chunk], "start")
                start = self._inside(step, start, length)
            end = self._chunk_end(step, start)
        self._slice(step, start, end, out)

    def part_at(
        self, step: GraphBuilder, position: str, out: str, *, inside: bool, equal: bool = False
    ) -> None:
        """SequenceAt at ``position``, an int64 value known at run time (a Loop's iteration
        number, never negative: 0-d, or of shape [1] as torch declares it, which onnxruntime
        then gives); ``inside``: known to lie inside the parts; ``equal``: every part must be
        as long as the first (the Loop stacks them), which fails at run time where not."""
        if self._gathered():
            self._gather(step, step.add("Reshape", [position, step.ints([])], "at"), out)
            return
        where = step.add("Reshape", [position, step.ints([1])], "at")
        if self.kind == "sizes":
            start, end = self._size_bounds(step, where, equal=equal)
        else:
            chunk = self._value("equal_chunk" if equal else "chunk")
            start = step.add("Mul", [where, chunk], "start")
            if not inside:
                start = self._inside(step, start, self._value("length"))
            end = self._chunk_end(step, start)
        self._slice(step, start, end, out)

    def _make_equal_chunk(self) -> str:
        """The chunk length, checked to cut parts of one length: the last is as long as the
        others, or the only one."""
        build, chunk, count = self.shared, self._value("chunk"), self._value("chunk_count")
        covered = build.add("Mul", [count, chunk], "covered")
        short = build.add("Sub", [covered, self._value("length")], "short")
        shorter = build.add("Less", [build.ints([0]), short], "last_shorter")
        several = build.add("Less", [build.ints([1]), count], "several")
        unequal = build.add("And", [shorter, several], "unequal")
        return self._at_least(chunk, self._unequal_flag(unequal), 0, _EQUAL_RULE)

    def _make_equal_ends(self) -> str:
        """The ends of the sizes, checked to be of one length (an empty list is)."""
        build, sizes, ends = self.shared, self._value("sizes"), self._value("ends")
        first = build.add("Slice", [sizes, build.ints([0]), build.ints([1])], "first")
        differ = build.add("Not", [build.add("Equal", [sizes, first], "same")], "differ")
        flags = build.add("Cast", [differ], "differ", to=TensorProto.INT64)
        count = build.add("ReduceSum", [flags], "unequal", keepdims=1)
        unequal = build.add("Less", [build.ints([0]), count], "unequal")
        total = build.add("Gather", [ends, build.ints([-1])], "total", axis=0)
        checked = self._at_least(total, self._unequal_flag(unequal), 0, _EQUAL_RULE)
        return build.add("Add", [ends, build.add("Sub", [checked, total], "zero")], "ends")

    def _unequal_flag(self, unequal: str) -> str:
        """``[1]`` int64: -1 where the bool ``unequal`` holds, else 0 (what must not be
        negative)."""
        build = self.shared
        return build.add(
            "Neg", [build.add("Cast", [unequal], "flag", to=TensorProto.INT64)], "flag"
        )

    def _size_bounds(
        self, step: GraphBuilder, where: str, *, equal: bool = False
    ) -> tuple[str, str]:
        """The start and end of the part at ``where`` (``[1]``) of sizes: Gather fails past
        the parts, as SequenceAt does; ``equal``: the sizes checked to be equal."""
        ends = self._value("equal_ends" if equal else "ends")
        end = step.add("Gather", [ends, where], "end", axis=0)
        size = step.add("Gather", [self._value("sizes"), where], "size", axis=0)
        return step.add("Sub", [end, size], "start"), end

    def _inside(self, step: GraphBuilder, start: str, length: str) -> str:
        """``start`` (of a chunk, at a position >= 0), checked to lie inside the axis."""
        past = step.add("Not", [step.add("Less", [start, length], "inside")], "past")
        return step.checked(start, past, "sequence_position_out_of_range")

    def _chunk_end(self, step: GraphBuilder, start: str) -> str:
        """A chunk's end: a chunk's length on, the last one shorter (ONNX's Slice clamps an
        end past the axis; tract's does not)."""
        length = self._value("length")
        end = step.add("Add", [start, self._value("chunk")], "end")
        if self.site.chunk == 1:  # a start inside the axis ends inside it, or at its end
            return end
        if self.end_by_min:
            return step.add("Min", [end, length], "end")
        inside = step.add("Less", [end, length], "inside")  # Min takes int64 from opset 12
        return step.add("Where", [inside, end, length], "end")

    def _slice(self, step: GraphBuilder, start: str, end: str, out: str) -> None:
        axes = step.ints([self.axis])
        if self.squeeze:
            step.squeeze(step.add("Slice", [self.x, start, end, axes], "slice"), self.axis, out)
        elif self.squeeze is None:
            part = step.add("Slice", [self.x, start, end, axes], "slice")
            self._maybe_squeezed(step, part, out)
        else:
            step.add("Slice", [self.x, start, end, axes], "part", output=out)

    def _maybe_squeezed(self, step: GraphBuilder, part: str, out: str) -> None:
        """``part`` without the split axis where the chunk given at run time is 1 (the
        default split), else as it is: a Reshape to its shape with the axis's entry cut
        out where the chunk is 1 (a Slice of the shape one entry shorter)."""
        axis, rank = self.at, self.site.rank
        assert rank is not None  # the forms keep such a sequence of unknown rank
        shape = step.add("Shape", [part], "shape")
        one = step.add("Equal", [self._value("chunk"), step.ints([1])], "default_split")
        dropped = step.add("Cast", [one], "dropped", to=TensorProto.INT64)
        kept_end = step.add("Sub", [step.ints([axis + 1]), dropped], "kept_end")
        dims = [
            step.add("Slice", [shape, step.ints([0]), step.ints([axis])], "before"),
            step.add("Slice", [shape, step.ints([axis]), kept_end], "axis"),
            step.add("Slice", [shape, step.ints([axis + 1]), step.ints([rank])], "after"),
        ]
        joined = step.add("Concat", dims, "dims", axis=0)
        step.add("Reshape", [part, joined], "part", output=out)

    # --- all parts at once ------------------------------------------------------------------

    def concatenated(self, step: GraphBuilder, node_axis: int, new_axis: bool, out: str) -> str:
        """ConcatFromSequence of every part, in order (``node_axis`` and ``new_axis`` its
        attributes), computed from the input itself (:func:`concatenated`); the empty
        sequence fails, as ConcatFromSequence of it does. Returns why it cannot be, or
        ``""`` where it is written."""
        why = not_joinable(self.site, node_axis, new_axis)
        if why is not None:
            return why
        rank = self.site.rank
        assert rank is not None
        if self.kind == "sizes":
            self._value("ends")  # the sizes checked, as every reader checks them
        elif self.site.spec.split_input is not None:
            self._value("chunk")
        # A Slice of the whole axis, to the checked length: the check lies on the path.
        length = self._value("length")
        checked = self._at_least(length, length, 1, "concat_of_an_empty_sequence")
        axes = step.ints([self.axis])
        x = step.add("Slice", [self.x, step.ints([0]), checked, axes], "whole")
        assert self.squeeze is not None  # the forms keep such a sequence (``_why_kept``)
        layout = concatenated(rank, self.at, node_axis, new_axis, squeezed=self.squeeze)
        total = rank
        # The dims of what is reshaped, worked out from the input's own (TVM follows no
        # Shape of a tensor a Reshape to computed dims made: "Slice requires a statically
        # known input rank").
        shape = step.add("Shape", [self.x], "shape")
        if layout.split_axis:
            # Chunks of c: the axis as (count, c); where c does not divide the axis, the
            # Reshape fails, as joining unequal parts does. One chunk is the whole axis.
            given = self._value("chunk")
            if step.opset >= 12:  # Min takes int64 from opset 12; TVM follows no Where
                chunk = step.add("Min", [given, length], "chunk")
            else:
                shorter = step.add("Less", [given, length], "shorter")
                chunk = step.add("Where", [shorter, given, length], "chunk")
            before, _, after = self._dims(step, shape, rank, self.at, self.at + 1)
            count = self._value("chunk_count")
            shape = step.add("Concat", [before, count, chunk, after], "dims", axis=0)
            x = _reshape(step, x, shape, "chunks")
            total += 1
        if layout.perm is not None:
            x = step.add("Transpose", [x], "moved", perm=list(layout.perm))
            order = step.ints(list(layout.perm))
            shape = step.add("Gather", [shape, order], "moved_dims", axis=0)
        if layout.merge is not None:
            at = layout.merge
            before, pair, after = self._dims(step, shape, total, at, at + 2)
            first = step.add("Gather", [pair, step.ints([0])], "first", axis=0)
            second = step.add("Gather", [pair, step.ints([1])], "second", axis=0)
            merged = step.add("Mul", [first, second], "merged")
            dims = step.add("Concat", [before, merged, after], "dims", axis=0)
            x = _reshape(step, x, dims, "joined")
        step.add("Identity", [x], "concat", output=out)
        return ""

    @staticmethod
    def _dims(step: GraphBuilder, shape: str, rank: int, start: int, end: int) -> list[str]:
        """The dims in ``shape`` (of a tensor of ``rank``) before ``start``, from ``start`` to
        ``end``, and from ``end`` on: three 1-d int64 values."""

        def cut(a: int, b: int) -> str:
            return step.add("Slice", [shape, step.ints([a]), step.ints([b])], "dims")

        return [cut(0, start), cut(start, end), cut(end, rank)]


def not_joinable(site: SplitSite[Scope], node_axis: int, new_axis: bool) -> str | None:
    """Why ConcatFromSequence(``node_axis``, ``new_axis``) of every part of ``site``'s
    sequence, whose number of parts is known only at run time, cannot be written from its
    input (:meth:`RuntimeParts.concatenated`); ``None`` where it can."""
    rank = site.rank
    if rank is None:
        return "ConcatFromSequence reads it, and the rank of its input is not known"
    sizes = site.spec.split_input is not None and site.split_rank != 0
    if sizes and (new_axis or _normal(node_axis, rank) != site.axis):
        return (
            "ConcatFromSequence joins its parts, of sizes known only at run time, along "
            "another axis than theirs"
        )
    return None


def _reshape(step: GraphBuilder, x: str, dims: str, what: str) -> str:
    """``x`` reshaped to ``dims``, a 0 among them a length of 0 (``allowzero``, from opset
    14; before it, a 0 keeps the input's dim at its index, which fails where the dims of
    length 0 do not line up)."""
    if step.opset >= 14:
        return step.add("Reshape", [x, dims], what, allowzero=1)
    return step.add("Reshape", [x, dims], what)


class _Layout:
    """How the parts of a SplitToSequence join back, as moves of its input's axes."""

    def __init__(self, split_axis: bool, perm: tuple[int, ...] | None, merge: int | None) -> None:
        #: Whether the split axis is first cut into (count, chunk) by a Reshape.
        self.split_axis = split_axis
        #: The Transpose's permutation, or ``None`` for none.
        self.perm = perm
        #: The axis merged with the next one by a Reshape, or ``None`` for none.
        self.merge = merge


def concatenated(
    rank: int, axis: int, node_axis: int, new_axis: bool, *, squeezed: bool
) -> _Layout:
    """How ConcatFromSequence(``node_axis``, ``new_axis``) of every part of a SplitToSequence
    along ``axis`` (>= 0) of an input of ``rank`` is the input moved: parts that lost the
    axis (``squeezed``) are its slices ``x[.., i, ..]``; else chunks, ``x`` cut into
    ``(count, chunk)`` at ``axis`` first. The count's axis goes where the parts stack, or
    just before the axis they concatenate along, with which it then merges.

    >>> [vars(concatenated(3, 1, 2, True, squeezed=True))[k] for k in ("perm", "merge")]
    [(0, 2, 1), None]
    >>> vars(concatenated(3, 1, 1, False, squeezed=False))
    {'split_axis': False, 'perm': None, 'merge': None}
    >>> vars(concatenated(3, 1, 2, False, squeezed=False))
    {'split_axis': True, 'perm': (0, 2, 1, 3), 'merge': 2}
    """
    if not squeezed and not new_axis and _normal(node_axis, rank) == axis:
        return _Layout(False, None, None)  # chunks joined along their own axis: the input
    # The axes of the moved tensor: the parts' axes, with the count's axis ("n") among them.
    part_rank = rank - 1 if squeezed else rank
    parts = [a for a in range(rank + (0 if squeezed else 1)) if a != axis]
    if new_axis:
        at = _normal(node_axis, part_rank + 1)
        order = [*parts[:at], axis, *parts[at:]]
        merge = None
    else:
        at = _normal(node_axis, part_rank)
        order = [*parts[:at], axis, *parts[at:]]
        merge = at
    perm = tuple(order)
    identity = perm == tuple(range(len(perm)))
    return _Layout(not squeezed, None if identity else perm, merge)


def _normal(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis
