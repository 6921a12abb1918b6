"""Which runtimes compute a model's Split and SplitToSequence nodes otherwise than the spec,
found by running them, and whether :func:`~splitops.lower_model` fixes it.

Each valid node is *probed*: a small model holds it (and, for a SplitToSequence, the nodes that
read its sequence, as lowering would see them), its input typed as in the model. It runs on
every installed runtime (onnxruntime, onnx.reference, OpenVINO, tract, TVM, tinygrad,
onnx2torch: each in a worker process of its own; and onnx shape inference, which is compared by
shapes) at the axis length the model declares, or, where that length is known only at run time,
at every length from 0 up to a few times the number of parts. splitops' own engine gives what
the spec says. A runtime *refuses* a length the spec runs, computes it *wrong*, or *accepts*
one the spec rejects (a silent answer where an error is due). The same probe, lowered for that
runtime's target, runs again on it: where it then agrees with the spec at every length the
original departed, ``lower --target <runtime>`` fixes it. The runtimes not installed are named,
with the command that installs each.

Nodes whose probes are alike (same operator, attributes, input type and constant split)
are probed once. A probe is bounded before it is made: its input by the
``max_input_elements`` limit, the parts all probes make together by ``max_model_parts``; a
node past either is not probed, and the result says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import ml_dtypes
import numpy as np
import onnx
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from ...core import Rule, SplitError, current_limits, report_progress, require_argument
from ..inference import infer_model_and_nodes
from ..model import (
    ModelView,
    Node,
    SequenceType,
    SplitNode,
    SplitSite,
    TensorType,
    ValueType,
    location,
    read_node,
)
from ..model.protobuf import (
    add_initializers,
    element_of_code,
    links_attributes,
    numpy_dtype,
    onnx_output_types,
)
from ..rewrite import SequenceReader, Target, lower_model, sequence_readers
from ._runtimes import RUNTIMES, Runtime, RuntimeWorkers
from .backend import SplitopsRep

__all__ = ["Departure", "Portability", "check_portability"]

#: The most axis lengths probed for one node whose axis length is known only at run time.
MAX_LENGTHS = 16

#: The runtimes that compile a model before running it, and the most parts a probe runs on
#: them: OpenVINO and TVM compile a node of 65,536 outputs for minutes; tinygrad runs a
#: Split of 2,048 outputs in 100 s, onnx2torch its lowered Slices in 50 s.
COMPILING = frozenset({"openvino", "tract", "tvm", "tinygrad", "onnx2torch"})
COMPILED_PARTS = 1024
_SLOW = f"which compiles more than {COMPILED_PARTS} outputs for minutes"

#: The length of the other axes of a probe where the model does not say.
OTHER_AXES = 2

#: What stands for a sequence among shapes (its element shape is not compared).
_SEQUENCE = "sequence"


_BEHAVIOURS = {
    "refuses": "refuses it",
    "wrong": "computes it wrong",
    "accepts": "computes parts where the spec rejects it",
}


@dataclass(frozen=True)
class Departure:
    """A runtime computing a node otherwise than the spec."""

    #: Where the node lives: "main", "main/loop_1.body", "function:domain.name".
    graph: str
    node: str
    op: str
    #: The operator version (since_version).
    opset: int
    #: The runtime and its version: "onnxruntime 1.32.0", "onnx.reference (onnx 1.23.2)".
    runtime: str
    #: "refuses" (an error where the spec computes parts), "wrong" (other parts than the
    #: spec's), or "accepts" (parts where the spec rejects the length).
    behaviour: str
    #: The axis lengths at which it happens.
    lengths: tuple[int, ...]
    #: The runtime's error, or the shapes it gives against the spec's, at the first length.
    detail: str
    #: Whether the lowered node agrees with the spec on that runtime at all those lengths.
    fixed_by_lower: bool

    def __str__(self) -> str:
        lengths = ", ".join(map(str, self.lengths))
        fixed = "lower fixes it" if self.fixed_by_lower else "lower does not fix it"
        does = _BEHAVIOURS[self.behaviour]
        where = location(self.graph, self.node)
        return (
            f"{where} ({self.op}-{self.opset}) {self.runtime} {does} at axis "
            f"length {lengths}: {self.detail}; {fixed}"
        )

    def as_dict(self) -> dict[str, object]:
        """The fields as a JSON-ready dict."""
        found = asdict(self)
        found["lengths"] = list(self.lengths)
        return found


@dataclass(frozen=True)
class Portability:
    """What probing found: the departures, the runtimes probed, the nodes not probed (with
    why), and the runtimes not installed (with how to install each)."""

    departures: list[Departure]
    runtimes: list[str]
    probed: int
    not_probed: list[tuple[str, str]]
    #: The runtimes not installed here, with the command that installs each.
    not_installed: list[tuple[str, str]] = field(default_factory=list)


def check_portability(
    model: ModelProto,
    *,
    runtimes: Sequence[str] | None = None,
    workers: RuntimeWorkers | None = None,
) -> Portability:
    """Probe every valid Split and SplitToSequence node of ``model`` on the installed runtimes
    (those named in ``runtimes`` only, where given; onnx's shape inference always).

    Invalid nodes are left out: :func:`~splitops.check_model` reports them. Each runtime runs
    in a worker process of its own (a runtime that crashes on a probe is that probe's
    error); pass ``workers`` to share them between calls, else they stop on return.
    """
    require_argument(model, ModelProto, "check_portability", "an onnx.ModelProto")
    if workers is None:
        with RuntimeWorkers() as own:
            return check_portability(model, runtimes=runtimes, workers=own)
    asked = [r for r in RUNTIMES if runtimes is None or r.name in runtimes]
    unknown = sorted(set(runtimes or ()) - {r.name for r in RUNTIMES})
    if unknown:
        raise SplitError(
            f"no runtime is called {unknown[0]!r}; the runtimes are "
            f"{', '.join(r.name for r in RUNTIMES)}.",
            rule=Rule.ARGUMENT,
        )
    report_progress("inferring the types")
    inferred, records = infer_model_and_nodes(model)
    invalid = {(r.scope, r.index) for r in records if r.problems}
    view = ModelView.read(model, types=inferred)
    probing = _runtimes(workers, asked)
    found: dict[bytes, list[tuple[str, str, bool, tuple[int, ...], str]]] = {}
    departures: list[Departure] = []
    not_probed: list[tuple[str, str]] = []
    probed = 0
    parts_left = current_limits().max_model_parts
    # Nodes alike (a model may hold one Split thousands of times, in every branch) are read
    # and made into a probe once.
    made: dict[tuple[Any, ...], tuple[int, _Probe | str, bytes]] = {}
    for split_node in view.split_nodes():
        body, node = split_node.scope, split_node.proto
        where = split_node.where
        if (body.key, split_node.index) in invalid or body.opset is None:
            continue
        if links_attributes(node):
            not_probed.append((where, "its attributes come from the call"))
            continue
        alike = _alike(split_node)
        if alike is None or alike not in made:
            since = read_node(node, body.opset).rule.since_version
            try:
                probe: _Probe | str = _Probe.of(split_node, model.ir_version)
            except _NotProbedError as reason:
                probe = str(reason)
            key = probe.key() if isinstance(probe, _Probe) else b""
            if alike is not None:
                made[alike] = since, probe, key
        else:
            since, probe, key = made[alike]
        if isinstance(probe, str):
            not_probed.append((where, probe))
            continue
        if key not in found:
            if probe.parts > parts_left:
                not_probed.append((where, _over_parts(probe.parts, parts_left)))
                continue
            parts_left -= probe.parts
            # The workers start at the first probe, all at once, so that their imports
            # overlap (none starts for a model with nothing to probe).
            workers.start([runtime for runtime in asked if runtime.is_installed()])
            usable = probing
            report_progress(f"probing {where} ({len(found) + 1} node(s) probed)")
            if probe.parts > COMPILED_PARTS:
                usable = [r for r in probing if r[0].split()[0] not in COMPILING]
                for name in sorted({r[0] for r in probing} - {r[0] for r in usable}):
                    not_probed.append((where, f"{probe.parts} parts: not on {name}, {_SLOW}"))
            found[key] = list(probe.run(usable))
        probed += 1
        for runtime, behaviour, fixed, lengths, detail in found[key]:
            departures.append(
                Departure(
                    body.label,
                    split_node.label,
                    split_node.op_type,
                    since,
                    runtime,
                    behaviour,
                    lengths,
                    detail,
                    fixed,
                )
            )
    not_installed = [(r.name, r.install) for r in asked if not r.is_installed()]
    names = [name for name, *_ in probing]
    return Portability(departures, names, probed, not_probed, not_installed)


class _NotProbedError(Exception):
    """Why a node cannot be probed."""


def _alike(split_node: Node) -> tuple[Any, ...] | None:
    """What a Split node's probe is made of (the node, its opset, its input's type, its
    constant sizes): nodes of one key have one probe. ``None`` for a SplitToSequence, whose
    probe holds the nodes that read its sequence too."""
    scope = split_node.scope
    if split_node.op_type != "Split":
        return None
    x = split_node.input_names[0]
    sizes = None
    split = split_node.input_value(1)
    if split is not None:
        value = split.constant()
        sizes = None if value is None else (value.dtype.str, value.shape, value.tobytes())
    dims = scope.dims(x)
    return (
        split_node.proto.SerializeToString(deterministic=True),
        scope.opset,
        scope.element(x),
        None if dims is None else tuple(dims),
        sizes,
    )


def _over_parts(parts: int, left: int) -> str:
    limit = current_limits().max_model_parts
    return (
        f"its probes would make {parts} parts, and {left} of the max_model_parts limit of "
        f"{limit} are left for this model (raise it with --max-model-parts N)"
    )


# --- the runtimes ---------------------------------------------------------------------------

#: A runtime: what it gives for a model, loaded once, and each of several feeds (outputs, or
#: the exception it raised).
_Run = Callable[[ModelProto, Sequence[dict[str, Any]]], list[Any]]

#: The runtimes, how each runs a model, whether it compares by shapes only (shape
#: inference), the lowering target for it, and the release lowering is for (that of a
#: runtime whose target is its own; ``None`` for one that takes another's target's forms).
_Runtimes = list[tuple[str, _Run, bool, str, str | None]]


def _runtimes(workers: RuntimeWorkers, asked: Sequence[Runtime]) -> _Runtimes:
    """The runtimes ``asked`` that are installed, each in its worker process, and onnx's
    shape inference."""
    found: _Runtimes = []
    for runtime in asked:
        if runtime.is_installed():
            version = runtime.version()
            release = version if runtime.target == runtime.name else None
            run = _in_worker(workers, runtime)
            found.append((f"{runtime.name} {version}", run, False, runtime.target, release))
    shape_inference = f"onnx shape inference (onnx {onnx.__version__})"
    found.append((shape_inference, _infer_each, True, "portable", None))
    return found


def _in_worker(workers: RuntimeWorkers, runtime: Runtime) -> _Run:
    def run(model: ModelProto, runs: Sequence[dict[str, Any]]) -> list[Any]:
        return workers.run_each(runtime, model.SerializeToString(), runs)

    return run


def _infer_each(model: ModelProto, runs: Sequence[dict[str, Any]]) -> list[Any]:
    return [_outcome(lambda feeds: _infer(model, feeds), feeds) for feeds in runs]


def _infer(model: ModelProto, feeds: dict[str, Any]) -> list[Any]:
    """The output shapes onnx infers, for the feeds' shapes (``None`` for an unknown dim)."""
    shapes = {name: np.shape(value) for name, value in feeds.items()}
    return [_shape_of(found) for found in onnx_output_types(model, shapes)]


def _shape_of(found: ValueType | None) -> Any:
    """An inferred type's shape (a negative length as onnx wrote it), or :data:`_SEQUENCE`."""
    if isinstance(found, SequenceType):
        return _SEQUENCE
    if not isinstance(found, TensorType) or found.dims is None:
        return None
    return tuple(d if isinstance(d, int) else None for d in found.dims)


# --- one probe ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Probe:
    """A small model holding one node (and its sequence's readers), and the axis lengths to
    run it at."""

    model: ModelProto
    #: The name of its input.
    data: str
    element: int
    dims: tuple[int | None, ...]
    axis: int
    lengths: tuple[int, ...]
    #: The parts the node makes at all those lengths together (each run makes them again).
    parts: int

    @classmethod
    def of(cls, node: Node, ir_version: int) -> _Probe:
        body = node.scope
        newest = onnx.defs.onnx_opset_version()
        if (body.opset or 0) > newest:
            raise _NotProbedError(
                f"its opset {body.opset} is past the newest this onnx knows ({newest}), which "
                "no installed runtime runs"
            )
        site = SplitSite.read(node)
        x, spec, element, dims, axis = site.data, site.spec, site.element, site.dims, site.axis
        if element is None or dims is None:
            raise _NotProbedError("the type of its input is not known")
        initializers = []
        split_value = site.split_value
        if spec.split_input is not None:
            if split_value is None:
                raise _NotProbedError("its sizes are known only at run time")
            initializers.append(numpy_helper.from_array(split_value, spec.split_input))
        node_proto = site.proto
        drop = bool(site.drops_axis)  # the split is constant here: known
        nodes, outputs = [node_proto], _outputs(spec, element, len(dims), drop)
        if spec.op == "SplitToSequence":
            found, why = sequence_readers(node)
            if why is None:
                nodes, outputs = _with_readers(node_proto, found, element, len(dims), drop)
                positions = {
                    r.node.input_names[1]: r.position for r in found if r.position is not None
                }
                initializers += [
                    numpy_helper.from_array(np.array(position, np.int64), name)
                    for name, position in positions.items()
                ]
        shape: list[int | str] = [
            length if length is not None else (f"d{i}" if i == axis else OTHER_AXES)
            for i, length in enumerate(dims)
        ]
        graph = helper.make_graph(
            nodes, "probe", [helper.make_tensor_value_info(x, element, shape)], outputs
        )
        add_initializers(graph, initializers)
        opsets = [helper.make_opsetid("", body.opset or 0)]
        model = helper.make_model(
            graph,
            opset_imports=opsets,
            ir_version=max(ir_version, helper.find_min_ir_version_for(opsets)),
        )
        static = dims[axis]
        count = len(node.output_names)
        lengths = (static,) if static is not None else _lengths(spec, split_value, count)
        full = tuple(length if length is not None else OTHER_AXES for length in dims)
        _check_input_size(full, axis, max(lengths, default=0))
        parts = sum(_part_count(spec, split_value, length) for length in lengths)
        return cls(model, x, element, full, axis, lengths, parts)

    def key(self) -> bytes:
        model: bytes = self.model.SerializeToString(deterministic=True)
        return model + repr(self.lengths).encode()

    def feeds(self, length: int) -> dict[str, Any]:
        shape = [OTHER_AXES if d is None else d for d in self.dims]
        shape[self.axis] = length
        return {self.data: _values(self.element, tuple(shape))}

    def run(self, runtimes: _Runtimes) -> list[tuple[str, str, bool, tuple[int, ...], str]]:
        """Each departure found: (runtime, behaviour, fixed by lower, lengths, detail); the
        lowered probe is lowered for each runtime's own target."""
        spec = SplitopsRep(self.model)
        lowered: dict[tuple[str, str | None], ModelProto | SplitError] = {}
        expected = {length: _outcome(spec.run, self.feeds(length)) for length in self.lengths}
        found = []
        for name, run, by_shape, target, release in runtimes:
            # The probe is loaded once on each runtime and run at every length; the lowered
            # probe once, at the lengths where the original departs.
            got = run(self.model, [self.feeds(length) for length in self.lengths])
            groups: dict[str, tuple[list[int], str]] = {}
            departing = []
            for length, outcome in zip(self.lengths, got, strict=True):
                behaviour, detail = _compare(expected[length], _result(outcome), by_shape)
                if behaviour:
                    groups.setdefault(behaviour, ([], detail))[0].append(length)
                    departing.append(length)
            fixed = True
            if departing:
                if (target, release) not in lowered:
                    lowered[target, release] = _lowered(self.model, target, release)
                again_model = lowered[target, release]
                if isinstance(again_model, SplitError):
                    fixed = False
                else:
                    again = run(again_model, [self.feeds(length) for length in departing])
                    fixed = not any(
                        _compare(expected[length], _result(outcome), by_shape)[0]
                        for length, outcome in zip(departing, again, strict=True)
                    )
            for behaviour, (lengths, detail) in groups.items():
                found.append((name, behaviour, fixed, tuple(lengths), detail))
        return found


def _lowered(model: ModelProto, target: str, release: str | None) -> ModelProto | SplitError:
    """``model`` lowered for ``target`` (the ``release`` of its runtime), or the SplitError
    of a target that cannot take it (a sequence that must stay, for a runtime without
    sequences)."""
    try:
        return lower_model(model, target=cast(Target, target), release=release)
    except SplitError as refused:
        return refused


def _result(outcome: Any) -> Any:
    """A run's outputs as a list, or the exception it gave."""
    return outcome if isinstance(outcome, Exception) else list(outcome)


def _outcome(run: Callable[[dict[str, Any]], Any], feeds: dict[str, Any]) -> Any:
    """What a run gives: its outputs, or the exception it raised."""
    try:
        return list(run(feeds))
    except MemoryError:
        raise
    except Exception as error:  # every runtime raises its own classes
        return error


def _compare(want: Any, got: Any, by_shape: bool) -> tuple[str, str]:
    """How ``got`` departs from the spec's ``want``: ("", "") when it agrees."""
    if isinstance(want, Exception):
        # Another operator's error (a SequenceAt past the parts) says nothing of the split.
        if isinstance(got, Exception) or not isinstance(want, SplitError):
            return "", ""
        if by_shape and any(d is not None and d < 0 for d in _dims_of(got)):
            return "wrong", f"a negative dim in {_text(got)}; the spec: {_one_line(want)}"
        if by_shape and not _fully_known(got):
            return "", ""
        return "accepts", f"the spec: {_one_line(want)}"
    if isinstance(got, Exception):
        return "refuses", _one_line(got)
    if by_shape:
        shapes = [_spec_shape(value) for value in want]
        if all(_fits(g, w) for g, w in zip(got, shapes, strict=True)):
            return "", ""
        return "wrong", f"shapes {_text(got)} where the spec gives {_text(shapes)}"
    if _identical(got, want):
        return "", ""
    return "wrong", f"shapes {_text(_shapes(got))} where the spec gives {_text(_shapes(want))}"


def _identical(got: Sequence[Any], want: Sequence[Any]) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        if isinstance(w, list):
            if not isinstance(g, list) or not _identical(g, w):
                return False
            continue
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        if w.dtype == object:
            if g.tolist() != w.tolist():
                return False
        elif g.tobytes() != np.ascontiguousarray(w).tobytes():
            return False
    return True


def _spec_shape(value: Any) -> Any:
    return _SEQUENCE if isinstance(value, list) else tuple(np.shape(value))


def _fits(inferred: Any, shape: Any) -> bool:
    """Whether an inferred shape (``None`` dims unknown) agrees with the spec's; a sequence's
    element shape is not compared."""
    if inferred is None or _SEQUENCE in (inferred, shape):
        return True
    if len(inferred) != len(shape):
        return False
    return all(i is None or i == s for i, s in zip(inferred, shape, strict=True))


def _dims_of(shapes: Sequence[Any]) -> list[int | None]:
    return [d for s in shapes if s is not None and s != _SEQUENCE for d in s]


def _fully_known(shapes: Sequence[Any]) -> bool:
    return all(s is not None and s != _SEQUENCE and None not in s for s in shapes)


def _shapes(values: Sequence[Any]) -> list[Any]:
    return [[np.shape(p) for p in v] if isinstance(v, list) else np.shape(v) for v in values]


def _text(shapes: Sequence[Any]) -> str:
    return "[" + ", ".join(str(s).replace(" ", "") for s in shapes) + "]"


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 160 else text[:157] + "..."


def _check_input_size(dims: tuple[int, ...], axis: int, longest: int) -> None:
    """``_NotProbedError`` where the probe's input would hold more elements than the
    ``max_input_elements`` limit (a model may declare ``x: [2**62]``)."""
    count = math.prod(longest if i == axis else d for i, d in enumerate(dims))
    limit = current_limits().max_input_elements
    if count > limit:
        raise _NotProbedError(
            f"its input would hold {count} elements, over the max_input_elements limit of "
            f"{limit} (raise it with --max-input-elements N)"
        )


def _part_count(spec: SplitNode, split: Any, length: int) -> int:
    """How many parts the node makes at axis length ``length`` (what the spec allows)."""
    if spec.op == "Split":
        return max(len(spec.outputs), spec.num_outputs or 0)
    if split is None:
        return length
    if np.ndim(split) == 1:
        return int(np.size(split))
    chunk = max(int(split), 1)
    return -(-length // chunk)


def _lengths(spec: SplitNode, split: Any, outputs: int) -> tuple[int, ...]:
    """Axis lengths to probe where the model's is known only at run time."""
    if split is not None and np.ndim(split) == 1:
        total = int(np.sum(split))
        return tuple(length for length in (total - 1, total, total + 1) if length >= 0)
    if spec.op == "Split":
        parts = spec.num_outputs or outputs
        return tuple(range(min(2 * parts + 2, MAX_LENGTHS)))
    chunk = 1 if split is None else max(int(split), 1)
    return tuple(range(min(3 * chunk + 2, MAX_LENGTHS)))


def _outputs(spec: SplitNode, element: int, rank: int, drop: bool) -> list[onnx.ValueInfoProto]:
    if spec.op == "Split":
        return [helper.make_tensor_value_info(o, element, [None] * rank) for o in spec.outputs if o]
    parts = rank - drop
    return [helper.make_tensor_sequence_value_info(spec.outputs[0], element, [None] * parts)]


def _with_readers(
    node: NodeProto,
    readers: list[SequenceReader],
    element: int,
    rank: int,
    squeezed: bool,
) -> tuple[list[NodeProto], list[onnx.ValueInfoProto]]:
    """The SplitToSequence and the nodes that read its sequence, their outputs typed (its
    parts without the split axis where they are ``squeezed``)."""
    nodes = [node]
    outputs = []
    for reader in readers:
        read = reader.node
        nodes.append(read.proto)
        out = read.output_names[0]
        if read.op_type == "SequenceAt":
            outputs.append(helper.make_tensor_value_info(out, element, [None] * (rank - squeezed)))
        elif read.op_type == "SequenceLength":
            outputs.append(helper.make_tensor_value_info(out, TensorProto.INT64, []))
        else:
            joined = rank - squeezed + int(read.attribute("new_axis", 0))
            outputs.append(helper.make_tensor_value_info(out, element, [None] * joined))
    return nodes, outputs


def _values(element: int, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """Distinct values of ``element``'s type: the probe tells parts apart by them."""
    count = int(np.prod(shape, dtype=np.int64))
    numbers = np.arange(count).reshape(shape)
    dtype = numpy_dtype(element_of_code(element))
    if dtype.kind == "O":
        return numbers.astype(str).astype(object)
    if dtype.kind == "b":
        return np.asarray(numbers % 2 == 1)
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return np.asarray(numbers.astype(np.float32).astype(ml_dtypes.bfloat16))
    return np.asarray(numbers.astype(dtype))
