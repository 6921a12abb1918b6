"""The forms a Split node may take when lowered, as rules: each says when it applies (and,
when not, why not), what it builds, and the report row of what it did.

A target's Split forms are an ordered list of these rules (``Forms.split`` in
:mod:`~splitops.onnx.rewrite._lower`): the first that applies to a node rewrites it, or
keeps it with its reason. Adding a runtime's form is adding a rule to its list, as
onnxscript's rewriter gives each rule a ``check`` whose failure carries why.

>>> [form.name for form in SPLIT1_SIZES]
['split-1-sizes-as-attribute', 'split-1-sizes-at-run-time']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

from onnx import NodeProto, helper

from ...core import PartCount, split_part_sizes
from ..model import Scope, SplitSite, node_label, write_split_sizes
from ..model.protobuf import keep_attributes, set_attributes
from ._forms import Context, Form, Reason
from ._graph_sizes import GraphArithmetic, GraphBuilder

__all__ = [
    "FOLD_STATIC_SIZES",
    "RUNTIME_SIZES_AS_CHECKED_SLICES",
    "RUNTIME_SIZES_AS_SLICES",
    "RUNTIME_SIZES_CHECKED",
    "SPLIT1_AS_SLICES",
    "SPLIT1_SIZES",
    "SPLIT18_AS_SLICES",
    "UNSIZED",
    "ZERO_SIZES_AS_SLICES",
    "Rewritten",
    "SharedSizes",
    "SplitForm",
    "axis_symbol",
    "checkable_length",
    "computed_part_sizes",
    "computed_sizes",
    "constant_slices",
    "copy_node",
    "copy_without_split",
    "explicit_sizes_kept",
    "kept_at_run_time",
    "name_base",
    "slices_per_part",
]


@dataclass(frozen=True)
class Rewritten:
    """What a form made of a node: the nodes in its place (``None``: the node stays), and the
    report row's outcome and detail."""

    nodes: list[NodeProto] | None
    detail: str
    #: Whether the split input goes once nothing else reads it.
    drops_split: bool = False

    @property
    def outcome(self) -> str:
        return "unchanged" if self.nodes is None else "rewritten"


#: One form of a Split node (:class:`~splitops.onnx.rewrite._forms.Form`): it says whether
#: it applies to a site or why not, and builds it.
SplitForm = Form[SplitSite[Scope], Rewritten]


# --- Split-1 ---------------------------------------------------------------------------------


class _Split1AsSlices(SplitForm):
    """Split-1 of static sizes (given, or equal parts of a static axis): a Slice-1 per part,
    its bounds as attributes. onnxruntime (and onnx.reference) have no Split-1 and run
    Slice-1; TVM runs Split-1 and fails Slice-1 ("Cannot cast NoneType to list of Expr"),
    OpenVINO and tract run both."""

    name = "split-1-as-slices"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        if site.spec.rule.since_version != 1:
            return Reason("not Split-1")
        if site.axis < 0:
            return Reason("its axis counts from the back of a rank that is not known")
        return (
            None if _split1_sizes(site) is not None else Reason("its sizes are known at run time")
        )

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        sizes = _split1_sizes(site)
        assert sizes is not None
        slices, start = [], 0
        for output, size in zip(site.spec.outputs, sizes, strict=False):
            if output:
                end = start + size
                slices.append(
                    helper.make_node(
                        "Slice", [site.data], [output], axes=[site.axis], starts=[start], ends=[end]
                    )
                )
            start += size
        detail = f"Split-1 {list(sizes)} -> a Slice-1 per part"
        return Rewritten(slices, detail, drops_split=site.spec.split_input is not None)


def _split1_sizes(site: SplitSite[Scope]) -> tuple[int, ...] | None:
    """A Split-1's sizes, where they are static."""
    if site.spec.has_sizes or site.spec.split_input is not None:
        return site.given_sizes
    return site.part_sizes()


SPLIT1_AS_SLICES: SplitForm = _Split1AsSlices()


# --- explicit sizes ------------------------------------------------------------------------


class _Split1SizesAsAttribute(SplitForm):
    """Split-1's second input (sizes typed like the data), where it is constant: the
    ``split`` attribute, which every runtime with Split-1 reads."""

    name = "split-1-sizes-as-attribute"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        if not _split1_input(site):
            return Reason("not Split-1 sizes as an input")
        return None if site.given_sizes is not None else Reason("its sizes are known at run time")

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        sizes = site.given_sizes
        assert sizes is not None
        new = copy_without_split(site.proto)
        set_attributes(new, split=list(sizes))
        return Rewritten([new], f"split input -> split={list(sizes)}", drops_split=True)


class _Split1SizesAtRunTime(SplitForm):
    name = "split-1-sizes-at-run-time"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        return None if _split1_input(site) else Reason("not Split-1 sizes as an input")

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        return Rewritten(None, "Split-1 sizes known at run time")


class _ZeroSizesAsSlices(SplitForm):
    """Constant sizes holding a 0: a Slice per part (TVM's Split refuses a part of size 0,
    "split_indices must be sorted"), checked to add up to an axis known only at run time
    (:func:`constant_slices`)."""

    name = "zero-sizes-as-slices"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        given = site.given_sizes
        if given is None or 0 not in given:
            return Reason("no constant size of 0")
        return (
            None
            if (site.scope.opset or 0) >= 10
            else Reason("Slice takes bounds as inputs from 10")
        )

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        given = site.given_sizes
        assert given is not None
        build = context.builder(site)
        static = site.length is not None
        outputs = site.spec.outputs
        nodes = constant_slices(build, site.data, site.spec.axis, outputs, given, static=static)
        unchecked = ""
        if not static and context.check_form(site) == "none":
            unchecked = " (unchecked: sizes that do not add up to the axis cut parts)"
        detail = f"split {list(given)} -> a Slice per part{unchecked}"
        return Rewritten([*build.nodes, *nodes], detail, drops_split=True)


@dataclass(frozen=True)
class _ExplicitSizesKept(SplitForm):
    """Constant sizes stay. ``checks_sum``: whether the target's runtime fails where they do
    not add up to an axis known only at run time (tract cuts [4, 4] from 9 without an
    error, and no check form loads on tract)."""

    checks_sum: bool = True
    name = "explicit-sizes"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        if not site.spec.has_sizes:
            return Reason("no explicit sizes")
        if site.spec.split_input is not None and site.split_value is None:
            return Reason("its sizes are known at run time")
        return None

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        if self.checks_sum or site.length is not None:
            return Rewritten(None, "explicit sizes")
        unchecked = "sizes that do not add up to the axis cut parts"
        return Rewritten(None, f"explicit sizes (unchecked on {context.target}: {unchecked})")


def explicit_sizes_kept(*, checks_sum: bool) -> SplitForm:
    return _ExplicitSizesKept(checks_sum)


class _FoldStaticSizes(SplitForm):
    """Sizes computed from static shapes (torch's ``tensor_split``): a constant, which
    runtimes that refuse computed sizes (TVM) take."""

    name = "fold-static-sizes"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        if not site.spec.has_sizes or site.spec.split_input is None:
            return Reason("no sizes input")
        return (
            None if _static_parts(site) is not None else Reason("its parts' lengths are not static")
        )

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        folded = _static_parts(site)
        assert folded is not None
        new = copy_without_split(site.proto)
        opset = site.scope.opset or 0
        constants = write_split_sizes(
            new, site.scope, opset, folded, context.edits, name_base(site.proto)
        )
        detail = f"split computed from static shapes -> {folded}"
        return Rewritten([*constants, new], detail, drops_split=True)


class _RuntimeSizesAsSlices(SplitForm):
    """Sizes given at run time (torch's ``tensor_split`` on a run-time axis): a Slice per
    part, each part's end its start plus its size, one after another. tract fails a Split
    whose sizes it cannot work out while loading ("Undetermined symbol"), and a CumSum of
    the sizes; it runs these Slices. Unchecked: sizes that do not add up to the axis cut
    parts instead of failing."""

    name = "run-time-sizes-as-slices"
    detail = (
        "split input known at run time -> a Slice per part (unchecked: sizes that do not "
        "add up to the axis cut parts)"
    )

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        spec = site.spec
        if not spec.has_sizes or spec.split_input is None:
            return Reason("no sizes input")
        return None if site.split_value is None else Reason("its sizes are constant")

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        spec = site.spec
        assert spec.split_input is not None
        build = context.builder(site)
        sizes = build.as_int64(spec.split_input, site.split_element)
        slices = self.cut(build, site.data, sizes, spec.axis, spec.outputs)
        return Rewritten([*build.nodes, *slices], self.detail)

    def cut(
        self, build: GraphBuilder, data: str, sizes: str, axis: int, outputs: Sequence[str]
    ) -> list[NodeProto]:
        """The Slices cutting ``outputs`` of ``data`` by the int64 ``sizes``, unchecked (the
        nodes computing their bounds go in ``build``)."""
        return _slices_by_sizes(build, data, sizes, axis, outputs, build.ints([0]))


#: How a target cuts parts by sizes given at run time with Slices, where its runtime fails a
#: Split of them: ``(build, data, sizes, axis, outputs) -> slices``.
SizesCut = Callable[[GraphBuilder, str, str, int, Sequence[str]], list[NodeProto]]


def _slices_by_sizes(
    build: GraphBuilder, data: str, sizes: str, axis: int, outputs: Sequence[str], start: str
) -> list[NodeProto]:
    """A Slice of ``data`` per output, one after another from ``start``, each end its start
    plus its size in ``sizes`` (tract fails a CumSum of them); unnamed outputs skipped."""
    where, slices = build.ints([axis]), []
    for index, output in enumerate(outputs):
        size = build.add("Slice", [sizes, build.ints([index]), build.ints([index + 1])], "size")
        end = build.add("Add", [start, size], "end")
        if output:
            slices.append(helper.make_node("Slice", [data, start, end, where], [output]))
        start = end
    return slices


class _RuntimeSizesAsCheckedSlices(_RuntimeSizesAsSlices):
    """Sizes given at run time (torch's ``tensor_split`` on a run-time axis, or a
    SplitToSequence of such sizes once its sequence is removed): checked, then a Slice per
    part. TVM refuses a Split whose sizes are not constant ("Dynamic Split not yet
    supported") and runs these Slices. The checks are the spec's, in the target's check
    form: one size per output (a Reshape to their count), no size below 0, and their sum
    the axis length; every part's bounds start from the checked sum, so that no part is cut
    without the checks."""

    name = "run-time-sizes-as-checked-slices"
    detail = "split input known at run time -> checked, then a Slice per part"

    def cut(
        self, build: GraphBuilder, data: str, sizes: str, axis: int, outputs: Sequence[str]
    ) -> list[NodeProto]:
        """The Slices cutting ``outputs`` of ``data`` by the int64 ``sizes`` (the nodes
        computing their bounds go in ``build``)."""
        listed = build.add("Reshape", [sizes, build.ints([len(outputs)])], "split")
        build.nodes[-1].name = build.edits.view.fresh_name(f"{build.label}/one_size_per_output")
        total = build.add("ReduceSum", [listed], "total", keepdims=1)
        negative = build.any_negative(listed)
        length = build.axis_length(data, axis)
        wrong_sum = build.add("Not", [build.add("Equal", [total, length], "sum")], "wrong_sum")
        bad = build.add("Or", [wrong_sum, negative], "bad_sizes")
        checked = build.checked(total, bad, "sizes_must_be_non_negative_and_add_up_to_the_axis")
        start = build.add("Sub", [checked, checked], "zero")
        return _slices_by_sizes(build, data, listed, axis, outputs, start)


class _RuntimeSizesChecked(SplitForm):
    """Sizes given at run time go through a Reshape to one size per output: onnxruntime
    takes an empty split input for an absent one, and cuts equal parts."""

    name = "run-time-sizes-checked"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        return None if site.spec.has_sizes else Reason("no explicit sizes")

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        spec = site.spec
        assert spec.split_input is not None
        build = context.builder(site)
        checked = build.add("Reshape", [spec.split_input, build.ints([len(spec.outputs)])], "split")
        build.nodes[-1].name = context.view.fresh_name(
            f"{name_base(site.proto)}/one_size_per_output"
        )
        new = copy_node(site.proto)
        new.input[1] = checked
        detail = "split input known at run time -> checked for one size per output"
        return Rewritten([*build.nodes, new], detail)


class _Split18AsSlices(SplitForm):
    """Any Split at opset 18 or later whose parts are known now, or whose sizes come at run
    time: a Slice per listed part (onnx2torch 1.5.15 has no Split-18 converter, and converts
    Slice). Constant sizes on an axis known only at run time are checked to add up to it in
    the target's check form; a Split by ``num_outputs`` of such an axis is left to the forms
    after it."""

    name = "split-18-as-slices"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        if site.spec.rule.since_version < 18:
            return Reason("not Split-18")
        if site.axis < 0:
            return Reason("its axis counts from the back of a rank that is not known")
        spec = site.spec
        if spec.has_sizes and spec.split_input is not None and site.split_value is None:
            return None  # sizes given at run time
        return None if _known_sizes(site) is not None else Reason("the axis length is not static")

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        sizes = _known_sizes(site)
        if sizes is None:
            return RUNTIME_SIZES_AS_SLICES.rewrite(context, site)
        build = context.builder(site)
        outputs = site.spec.outputs
        static = site.length is not None
        slices = constant_slices(build, site.data, site.axis, outputs, sizes, static=static)
        unchecked = ""
        if not static and context.check_form(site) == "none":
            unchecked = " (unchecked: sizes that do not add up to the axis cut parts)"
        detail = f"{_how_sized(site)} -> a Slice per part{unchecked}"
        return Rewritten(
            [*build.nodes, *slices], detail, drops_split=site.spec.split_input is not None
        )


def constant_slices(
    build: GraphBuilder,
    data: str,
    axis: int,
    outputs: Sequence[str],
    sizes: Sequence[int],
    *,
    static: bool,
) -> list[NodeProto]:
    """A Slice of ``data`` per named output, cutting parts of constant ``sizes`` along
    ``axis``, one after another (the unnamed and unlisted ones skipped). On an axis known
    only at run time (``static`` false) the bounds start from a value checked, in the
    builder's check form, to be 0 only where the sizes add up to the axis."""
    start = build.ints([0])
    if not static and build.check == "part":
        # 0-d: TVM follows them as symbolic sizes, and knows the checked shape.
        shape = build.add("Shape", [data], "shape")
        length = build.add("Gather", [shape, build.scalar(axis)], "length", axis=0)
        total = build.scalar(sum(sizes))
        for more, less in ((length, total), (total, length)):
            left = build.add("Sub", [more, less], "left")
            build.must_not_be_negative(left, "sizes_must_add_up_to_the_axis", scalar=True)
    elif not static:
        total = build.ints([sum(sizes)])
        same = build.add("Equal", [build.axis_length(data, axis), total], "sum")
        wrong = build.add("Not", [same], "wrong_sum")
        start = build.checked(start, wrong, "sizes_must_add_up_to_the_axis")
    where, slices, offset = build.ints([axis]), [], 0
    for output, size in zip(outputs, sizes, strict=False):
        if output:
            if static:
                bounds = [build.ints([offset]), build.ints([offset + size])]
            else:
                bounds = [
                    build.add("Add", [start, build.ints([bound])], "bound")
                    for bound in (offset, offset + size)
                ]
            slices.append(helper.make_node("Slice", [data, *bounds, where], [output]))
        offset += size
    return build.on_part(slices)


def _known_sizes(site: SplitSite[Scope]) -> tuple[int, ...] | None:
    """The size of every part of a Split, where it is known now: constant sizes, sizes
    computed from static shapes, or a static axis cut by ``num_outputs`` (the unlisted
    parts last)."""
    given = site.given_sizes
    if given is not None:
        return given
    if site.spec.has_sizes:
        folded = _static_parts(site)
        return None if folded is None else tuple(folded)
    length = checkable_length(site)
    return None if length is None else site.spec.part_sizes(length)


def _how_sized(site: SplitSite[Scope]) -> str:
    given = site.given_sizes
    if given is not None:
        return f"split {list(given)}"
    return "split computed from static shapes" if site.spec.has_sizes else _how(site)


# --- without sizes -------------------------------------------------------------------------


class _OnePartAsIdentity(SplitForm):
    name = "one-part-as-identity"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        return None if _count(site) == 1 else Reason("more than one part")

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        node = site.node
        identity = helper.make_node("Identity", [site.data], [node.output_names[0]], name=node.name)
        return Rewritten([identity], f"{_how(site)} -> Identity (one part)")


class _ConstantSizesOnStaticAxis(SplitForm):
    name = "constant-sizes-on-static-axis"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        return (
            None if checkable_length(site) is not None else Reason("the axis length is not static")
        )

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        length = checkable_length(site)
        assert length is not None
        listed = listed_sizes(site.spec.part_sizes(length), len(site.spec.outputs))
        new = _new_split(context, site, len(listed))
        opset = site.scope.opset or 0
        constants = write_split_sizes(
            new, site.scope, opset, listed, context.edits, name_base(site.proto)
        )
        return Rewritten([*constants, new], f"{_how(site)} -> split {list(listed)} (constant)")


class _EqualPartsBeforeOpset13(SplitForm):
    name = "equal-parts-before-opset-13"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        return (
            None
            if (site.scope.opset or 0) < 13
            else Reason("Split takes sizes as an input from 13")
        )

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        return Rewritten(
            None,
            f"{_how(site)} on an axis of length known at run time: "
            f"Split-{site.spec.rule.since_version} takes sizes only as an attribute, and every "
            "runtime cuts equal parts alike",
        )


#: By what a Split without sizes gives its part count: ``num_outputs`` (Split-18) or the
#: number of outputs it lists (equal parts, before 18).
PartsBy = Literal["num_outputs", "equal"]


@dataclass(frozen=True)
class _ForParts(SplitForm):
    """A form for Splits whose parts come one way (:data:`PartsBy`) only."""

    by: PartsBy

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        if _parts_by(site) != self.by:
            return Reason(f"its parts are not by {self.by}")
        return self._check(context, site)

    def _check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        return None


@dataclass(frozen=True)
class _KeptAtRunTime(_ForParts):
    """The node as it is, where the target's runtime computes it as the spec says. With
    ``lists_every_part``, a node listing fewer outputs than ``num_outputs`` is kept too, given
    one unused output per part it leaves unlisted: onnxruntime 1.32 refuses a node listing
    fewer outputs than parts, and cuts every part as the spec says once each is listed."""

    lists_every_part: bool = False
    name = "kept-at-run-time"

    def _check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        unlisted = _count(site) - len(site.spec.outputs)
        if unlisted and not self.lists_every_part:
            return Reason("it lists fewer outputs than parts")
        if not context.can_spend(unlisted):
            return Reason(
                "the parts it leaves out would take the model over the max_model_parts limit"
            )
        return None

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        how = f"{_how(site)} on an axis of length known at run time"
        count, listed = _count(site), len(site.spec.outputs)
        if listed == count:
            return Rewritten(None, f"{how}: {context.target} computes it as the spec says")
        context.spend(site.node, count - listed)
        new = copy_node(site.proto)
        base = f"{name_base(site.proto)}_rest"
        new.output.extend(context.view.fresh_name(base) for _ in range(count - listed))
        detail = (
            f"{how}: its {count - listed} unlisted part(s) listed as unused outputs, which "
            f"{context.target} computes as the spec says"
        )
        return Rewritten([new], detail)


@dataclass(frozen=True)
class _ComputedSizes(_ForParts):
    """The planner's sizes computed in the graph from ``Shape``, checked in the target's
    form."""

    name = "computed-sizes"

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        build = context.builder(site)
        planned = context.sizes.computed(site, build)
        outputs = len(site.spec.outputs)
        parts = tuple(str(size) for size in _listed_in_graph(build, planned, outputs))
        new = _new_split(context, site, len(parts))
        new.input.append(context.sizes.tensor(parts, build))
        detail = f"{_how(site)} -> split computed in the graph{_unchecked(context, site)}"
        return Rewritten([*build.nodes, new], detail)


@dataclass(frozen=True)
class _SlicesPerPart(_ForParts):
    """A Slice per listed part, its bounds computed in the graph from ``Shape`` (the forms
    before it keep every Split before opset 13). With ``scalars``, the bounds are computed
    as 0-d values (:class:`~splitops.onnx.rewrite._graph_sizes.GraphBuilder`), whose parts
    TVM knows the shapes of."""

    scalars: bool = False
    name = "slices-per-part"

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> Rewritten:
        build = context.builder(site, scalars=self.scalars)
        bounds = context.sizes.bounds(context.sizes.computed(site, build), build)
        where = build.ints([site.spec.axis])
        slices = [
            helper.make_node("Slice", [site.data, start, end, where], [output])
            for output, (start, end) in zip(site.spec.outputs, bounds, strict=False)
            if output
        ]
        slices = build.on_part(slices)
        detail = f"{_how(site)} -> a Slice per part{_unchecked(context, site)}"
        return Rewritten([*build.nodes, *slices], detail)


class SharedSizes:
    """The sizes of Splits without sizes on an axis known at run time, computed in the graph
    once for the nodes of one scope that cut an axis of the same symbolic length into as
    many parts (in the same check form), with their 1-d tensor and their parts' bounds.
    Computed sizes are values of fresh names, so a tensor or bounds made of them is asked
    for again only by a node sharing them."""

    def __init__(self) -> None:
        self._sizes: dict[tuple[Any, ...], tuple[str, ...]] = {}
        self._tensors: dict[tuple[str, ...], str] = {}
        self._bounds: dict[tuple[str, ...], list[tuple[str, str]]] = {}

    def computed(self, site: SplitSite[Scope], build: GraphBuilder) -> tuple[str, ...]:
        """The sizes of ``site``'s parts, computed by ``build`` (once for the scope where the
        axis has a symbolic length)."""
        symbol = axis_symbol(site)
        if symbol is None:
            return computed_part_sizes(site, build)
        spec = site.spec
        key = (
            site.scope.key,
            symbol,
            spec.num_outputs or len(spec.outputs),
            spec.rule.since_version,
            build.scalars,
            build.check,
        )
        planned = self._sizes.get(key)
        if planned is None:
            planned = self._sizes[key] = computed_part_sizes(site, build)
        return planned

    def tensor(self, parts: tuple[str, ...], build: GraphBuilder) -> str:
        """The 1-d tensor of ``parts`` (sizes of :meth:`computed`, as many as a node lists)."""
        found = self._tensors.get(parts)
        if found is None:
            found = self._tensors[parts] = build.sizes(parts)
        return found

    def bounds(self, planned: tuple[str, ...], build: GraphBuilder) -> list[tuple[str, str]]:
        """The start and end of each part of ``planned`` (sizes of :meth:`computed`)."""
        found = self._bounds.get(planned)
        if found is None:
            found = self._bounds[planned] = _bounds(build, planned)
        return found


def _new_split(context: Context, site: SplitSite[Scope], parts: int) -> NodeProto:
    """A copy of a Split node without its sizes, listing ``parts`` outputs: its own, then
    one unused output for the rest where it lists fewer than there are parts."""
    new = copy_without_split(site.proto)
    rest = range(parts - len(site.spec.outputs))
    label = name_base(site.proto)
    outputs = [*site.spec.outputs, *(context.view.fresh_name(f"{label}_rest") for _ in rest)]
    del new.output[:]
    new.output.extend(outputs)
    return new


def kept_at_run_time(by: PartsBy, *, lists_every_part: bool = False) -> SplitForm:
    return _KeptAtRunTime(by, lists_every_part)


def computed_sizes(by: PartsBy) -> SplitForm:
    return _ComputedSizes(by)


def slices_per_part(by: PartsBy, *, scalars: bool = False) -> SplitForm:
    return _SlicesPerPart(by, scalars)


#: Split-1's sizes given as a second input (typed like the data), which a target keeps
#: as Split-1: the attribute where they are constant, else as they are.
SPLIT1_SIZES: tuple[SplitForm, ...] = (_Split1SizesAsAttribute(), _Split1SizesAtRunTime())
ZERO_SIZES_AS_SLICES: SplitForm = _ZeroSizesAsSlices()
FOLD_STATIC_SIZES: SplitForm = _FoldStaticSizes()
RUNTIME_SIZES_CHECKED: SplitForm = _RuntimeSizesChecked()
RUNTIME_SIZES_AS_SLICES = _RuntimeSizesAsSlices()
SPLIT18_AS_SLICES: SplitForm = _Split18AsSlices()
RUNTIME_SIZES_AS_CHECKED_SLICES = _RuntimeSizesAsCheckedSlices()
#: The forms every target gives a Split without sizes first.
UNSIZED: tuple[SplitForm, ...] = (
    _OnePartAsIdentity(),
    _ConstantSizesOnStaticAxis(),
    _EqualPartsBeforeOpset13(),
)


# --- helpers --------------------------------------------------------------------------------


def _split1_input(site: SplitSite[Scope]) -> bool:
    """Whether the node is a Split-1 given its sizes as its second input."""
    return site.spec.rule.split_input_types is None and site.spec.split_input is not None


def _parts_by(site: SplitSite[Scope]) -> PartsBy:
    if site.spec.rule.part_count is PartCount.NUM_OUTPUTS:
        return "num_outputs"
    return "equal"


def _count(site: SplitSite[Scope]) -> int:
    """The number of parts of a Split without sizes."""
    spec = site.spec
    count = spec.num_outputs if _parts_by(site) == "num_outputs" else len(spec.outputs)
    assert count is not None  # read_node and the check saw to it
    return count


def _how(site: SplitSite[Scope]) -> str:
    count = _count(site)
    return f"num_outputs={count}" if _parts_by(site) == "num_outputs" else f"{count} equal parts"


def _unchecked(context: Context, site: SplitSite[Scope]) -> str:
    # Two parts by num_outputs cannot be invalid (d - ceil(d/2) >= 0): nothing to check.
    can_fail = _parts_by(site) == "equal" or _count(site) > 2
    if context.check_form(site) == "none" and can_fail:
        return " (unchecked: an invalid length cuts parts)"
    return ""


def name_base(node: NodeProto) -> str:
    """A base for the names of the values and nodes written for ``node``."""
    return node_label(node).strip("/").replace("/", "_") or "split"


#: The longest axis whose Split onnx's own check takes: onnx 1.23's inference of Split reads
#: the axis length as a 32-bit int, and refuses constant sizes on an axis of 2^31 or more
#: (their sum against a length of -2^31). A longer axis is lowered as one whose length is
#: known only at run time: the sizes computed in the graph.
_LONGEST_CHECKED_AXIS = 2**31 - 1


def checkable_length(site: SplitSite[Scope]) -> int | None:
    """The static length of the split axis, or ``None`` where it is unknown or too long for
    onnx's check (:data:`_LONGEST_CHECKED_AXIS`)."""
    length = site.length
    return None if length is None or length > _LONGEST_CHECKED_AXIS else length


def axis_symbol(site: SplitSite[Scope]) -> str | None:
    """The symbolic length (a dim_param) that inference gives the split axis, where it gives
    one: nodes cutting axes of one such length share their computed sizes."""
    found = site.scope.tensor_type(site.data)
    dims, axis = None if found is None else found.dims, site.axis
    if dims is None or not -len(dims) <= axis < len(dims):
        return None
    dim = dims[axis]
    return dim if isinstance(dim, str) else None


def computed_part_sizes(site: SplitSite[Scope], build: GraphBuilder) -> tuple[str, ...]:
    """The planner's sizes of a Split without sizes, computed in the graph."""
    length = build.axis_length(site.data, site.spec.axis)
    rule = site.spec.rule
    computed = split_part_sizes(length, None, _count(site), rule, GraphArithmetic(build))
    return tuple(str(size) for size in computed)


def copy_node(node: NodeProto) -> NodeProto:
    new = NodeProto()
    new.CopyFrom(node)
    return new


def copy_without_split(node: NodeProto) -> NodeProto:
    """A copy of a Split node that keeps only its data input and its axis."""
    new = copy_node(node)
    del new.input[1:]
    keep_attributes(new, {"axis"})
    return new


def listed_sizes(sizes: tuple[int, ...], listed: int) -> tuple[int, ...]:
    """The sizes of the parts a node lists, and the rest as one more part when it lists fewer
    parts than there are."""
    if listed >= len(sizes):
        return sizes
    return (*sizes[:listed], sum(sizes[listed:]))


def _listed_in_graph(build: GraphBuilder, planned: tuple[Any, ...], listed: int) -> tuple[Any, ...]:
    """:func:`listed_sizes` in the graph: the parts before the last are all ``ceil(d/n)``,
    so the rest is the (checked) last part plus the unlisted parts before it."""
    if listed >= len(planned):
        return planned
    chunk, last = planned[0], planned[-1]
    between = build.add("Mul", [chunk, build.ints([len(planned) - 1 - listed])], "between")
    rest = build.add("Add", [last, between], "rest")
    return (*planned[:listed], rest)


def _bounds(build: GraphBuilder, sizes: Sequence[str]) -> list[tuple[str, str]]:
    """The start and end of each part of ``sizes`` (values of the graph, one size for all
    but the last, which may differ), one after another, as a Slice takes them
    (:meth:`~splitops.onnx.rewrite._graph_sizes.GraphBuilder.bound`). Where the last size
    went through a run-time check, every bound starts from ``last - last``, so that no part
    is cut without the check, whether the last part is listed or not (the ``part`` check
    form is on a part instead: :meth:`~splitops.onnx.rewrite._graph_sizes.GraphBuilder.on_part`)."""
    first, last = sizes[0], sizes[-1]
    guarded = build.check not in ("none", "part") and last != first
    start = build.add("Sub", [last, last], "zero") if guarded else build.number(0)
    points = [start]
    for size in sizes:
        points.append(build.add("Add", [points[-1], size], "end"))
    bounds = [build.bound(point) for point in points]
    return list(pairwise(bounds))


def _static_parts(site: SplitSite[Scope]) -> list[int] | None:
    """The size of every part of a Split whose outputs inference gives a static length on
    the split axis, or ``None``."""
    if site.dims is None:
        return None
    sizes = []
    for output in site.spec.outputs:
        found = site.scope.dims(output) if output else None
        if found is None or len(found) != len(site.dims) or found[site.axis] is None:
            return None
        sizes.append(int(found[site.axis]))  # type: ignore[arg-type]
    return sizes
