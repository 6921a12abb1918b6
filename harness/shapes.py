"""What inference knows of split outputs, against what runs: the shapes onnxruntime executes
for each Split and SplitToSequence output at given inputs, and each dim an inference gives
judged against them (``known``, ``unknown``, ``wrong``; ``none`` where it gives no shape).
``python -m benchmarks.inference`` tabulates it for each peer over the exported corpus
(:mod:`harness.corpus`), and the tests of inference read it.

>>> split_dim_verdicts(None, {"y": [({"N": 4}, [(2, 4)])]})
{'y': ['none']}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import ModelProto

__all__ = [
    "KNOWN",
    "NONE",
    "UNKNOWN",
    "WRONG",
    "executed_shapes",
    "split_dim_verdicts",
    "split_outputs",
    "without_shapes",
]

#: How an inferred dim describes an executed one, at every input size tried.
KNOWN, UNKNOWN, WRONG, NONE = "known", "unknown", "wrong", "none"


def _dims(type_proto: onnx.TypeProto | None) -> list[int | str | None] | None:
    if type_proto is None:
        return None
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        return _dims(type_proto.sequence_type.elem_type)
    if kind != "tensor_type" or not type_proto.tensor_type.HasField("shape"):
        return None
    return [
        int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None)
        for d in type_proto.tensor_type.shape.dim
    ]


def _value(dim: int | str | None, bindings: dict[str, int]) -> int | None:
    """A dim's value with the graph inputs' dim names bound (sympy reads ``//`` as floor
    division, as the exporters write it); ``None`` for an unknown dim or a name that no
    input binds (onnx's ``unk__0``, onnxruntime's ``Flatten_56_o0__d0``)."""
    if dim is None or isinstance(dim, int):
        return None if dim is None or dim < 0 else dim
    import sympy  # splitops' inference needs it too: pip install 'splitops[inference]'

    symbols = {name: sympy.Symbol(name) for name in bindings}
    try:
        expr = sympy.sympify(dim, locals=symbols)
    except (sympy.SympifyError, SyntaxError, TypeError, ValueError):
        return None
    if not isinstance(expr, sympy.Expr) or expr.free_symbols - set(symbols.values()):
        return None
    value = expr.subs({symbols[k]: v for k, v in bindings.items()})
    return int(value) if value.is_Integer else None


def split_outputs(model: ModelProto) -> list[str]:
    """The outputs of the main graph's Split and SplitToSequence nodes."""
    return [
        name
        for node in model.graph.node
        if node.op_type in ("Split", "SplitToSequence") and node.domain in ("", "ai.onnx")
        for name in node.output
        if name
    ]


def executed_shapes(
    model: ModelProto, feeds: Sequence[dict[str, np.ndarray[Any, Any]]]
) -> dict[str, list[tuple[dict[str, int], list[tuple[int, ...]]]]]:
    """The shapes onnxruntime executes for each split output at each of ``feeds`` (a list of
    shapes: one for a tensor, one per element for a sequence), with the dim names of the
    graph inputs bound to the sizes fed."""
    import onnxruntime

    observed = ModelProto()
    observed.CopyFrom(model)
    names = split_outputs(model)
    declared = {o.name for o in observed.graph.output}
    observed.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names if n not in declared)
    session = onnxruntime.InferenceSession(
        observed.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    outputs = [o.name for o in observed.graph.output]
    found: dict[str, list[tuple[dict[str, int], list[tuple[int, ...]]]]] = {n: [] for n in names}
    for feed in feeds:
        bindings = {
            dim.dim_param: int(np.shape(feed[entry.name])[k])
            for entry in model.graph.input
            if entry.name in feed
            for k, dim in enumerate(entry.type.tensor_type.shape.dim)
            if dim.dim_param
        }
        for name, result in zip(outputs, session.run(None, feed), strict=True):
            if name in found:
                parts = result if isinstance(result, list) else [result]
                found[name].append((bindings, [tuple(np.shape(p)) for p in parts]))
    return found


def split_dim_verdicts(
    inferred: ModelProto | None,
    executed: dict[str, list[tuple[dict[str, int], list[tuple[int, ...]]]]],
) -> dict[str, list[str]]:
    """Per split output, per dim: ``known`` (its value is the executed length at every size),
    ``unknown``, or ``wrong``; ``[none]`` for an output with no shape (or rank) at all. A
    sequence's dim is judged against each element."""
    types = {} if inferred is None else {v.name: v.type for v in _entries(inferred)}
    verdicts: dict[str, list[str]] = {}
    for name, runs in executed.items():
        dims = _dims(types.get(name))
        if dims is None:
            verdicts[name] = [NONE]
            continue
        if any(len(shape) != len(dims) for _, shapes in runs for shape in shapes):
            verdicts[name] = [WRONG] * len(dims)
            continue
        row = []
        for axis, dim in enumerate(dims):
            seen = []
            for bindings, shapes in runs:
                value = _value(dim, bindings)
                lengths = {shape[axis] for shape in shapes}
                seen.append(UNKNOWN if value is None else WRONG if lengths - {value} else KNOWN)
            row.append(WRONG if WRONG in seen else KNOWN if set(seen) == {KNOWN} else UNKNOWN)
        verdicts[name] = row
    return verdicts


def _entries(model: ModelProto) -> Iterator[onnx.ValueInfoProto]:
    yield from model.graph.value_info
    yield from model.graph.output


def without_shapes(model: ModelProto) -> ModelProto:
    """``model`` without ``value_info`` and graph output shapes: what inference finds alone."""
    copy = ModelProto()
    copy.CopyFrom(model)
    del copy.graph.value_info[:]
    for output in copy.graph.output:
        if output.type.WhichOneof("value") == "tensor_type":
            output.type.tensor_type.ClearField("shape")
    return copy
