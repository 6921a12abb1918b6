"""Loop and Scan as the ONNX spec says, for the reference engine, where onnx.reference departs.

onnx.reference (1.23) runs no iteration of a Loop whose optional ``cond`` input is left out
(the spec, and onnxruntime, run ``M`` of them), concatenates a Loop's scan outputs of rank 2
or more along their first axis instead of stacking them along a new one (``[2, 1]`` twice
gives ``[4, 1]``, not ``[2, 2, 1]``), fails on a zero-trip Loop or Scan with scan outputs,
and runs a Scan only along axis 0, forwards. These classes replace its Loop and Scan in
:class:`~splitops.backend.SplitopsEvaluator`; the body still runs on the evaluator, so Split
nodes in it run on splitops.

>>> import numpy as np
>>> from onnx import TensorProto, helper
>>> from splitops.backend import SplitopsEvaluator
>>> x = helper.make_tensor_value_info
>>> body = helper.make_graph(
...     [helper.make_node("Identity", ["c"], ["c_out"]),
...      helper.make_node("Identity", ["v"], ["v_out"]),
...      helper.make_node("Identity", ["v"], ["scanned"])], "body",
...     [x("i", TensorProto.INT64, []), x("c", TensorProto.BOOL, []),
...      x("v", TensorProto.FLOAT, [2, 1])],
...     [x("c_out", TensorProto.BOOL, []), x("v_out", TensorProto.FLOAT, [2, 1]),
...      x("scanned", TensorProto.FLOAT, [2, 1])])
>>> loop = helper.make_node("Loop", ["M", "", "v"], ["v_final", "stacked"], body=body)
>>> graph = helper.make_graph([loop], "g",
...     [x("M", TensorProto.INT64, []), x("v", TensorProto.FLOAT, [2, 1])],
...     [x("v_final", TensorProto.FLOAT, None), x("stacked", TensorProto.FLOAT, None)])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> feeds = {"M": np.array(3), "v": np.zeros((2, 1), np.float32)}
>>> SplitopsEvaluator(model).run(None, feeds)[1].shape  # cond left out: M iterations, stacked
(3, 2, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from onnx import TypeProto
from onnx.reference.op_run import OpRun
from onnx.reference.ops.op_loop import Loop as _ReferenceLoop

from ..model import TensorType, value_type
from ..model.protobuf import dtype_of_code

__all__ = ["Loop", "Scan", "control_flow_ops"]


class Loop(_ReferenceLoop):
    """ONNX Loop (every version): ``M`` and ``cond`` each optional, scan outputs stacked."""

    op_domain = ""

    def _run(  # type: ignore[override]
        self,
        trip_count: Any,
        cond: Any,
        *initial: Any,
        context: dict[str, Any] | None = None,
        attributes: dict[str, Any] | None = None,
        bindings: Any = None,
        **_: Any,
    ) -> tuple[Any, ...]:
        body, run_body = _body_of(self)
        names_in: list[str] = body.input_names
        carried_count = len(names_in) - 2
        # Outer-scope values first: the body's own inputs shadow them.
        inputs = dict(context or {})
        carried = list(initial)
        count = None if trip_count is None else int(np.asarray(trip_count).reshape(-1)[0])
        going = np.asarray(True if cond is None else cond)
        scanned: list[list[Any]] = [[] for _ in range(self.K)]
        iteration = 0
        while bool(going.reshape(-1)[0]) and (count is None or iteration < count):
            inputs[names_in[0]] = np.array(iteration, dtype=np.int64)
            inputs[names_in[1]] = going
            inputs.update(zip(names_in[2:], carried, strict=True))
            outputs = run_body(inputs, attributes=attributes, bindings=bindings)
            going = np.asarray(outputs[0])
            carried = list(outputs[1 : 1 + carried_count])
            for values, value in zip(scanned, outputs[1 + carried_count :], strict=True):
                values.append(value)
            iteration += 1
        types = body.output_types_[1 + carried_count :]
        stacked = [_stack(values, 0, kind) for values, kind in zip(scanned, types, strict=True)]
        return (*carried, *stacked)


class Scan(OpRun):
    """ONNX Scan-9 and later: every scan axis and direction, of inputs and outputs."""

    op_domain = ""

    def need_context(self) -> bool:
        return True  # the body may read names of the enclosing graphs

    def _run(
        self,
        *args: Any,
        context: dict[str, Any] | None = None,
        attributes: dict[str, Any] | None = None,
        bindings: Any = None,
        **_: Any,
    ) -> tuple[Any, ...]:
        body, run_body = _body_of(self)
        scan_count: int = self.num_scan_inputs  # type: ignore[attr-defined]
        state_count = len(args) - scan_count
        names_in: list[str] = body.input_names
        states = list(args[:state_count])
        sources = [np.asarray(value) for value in args[state_count:]]
        in_axes = _listed(self.scan_input_axes, scan_count)  # type: ignore[attr-defined]
        in_axes = [a % max(v.ndim, 1) for a, v in zip(in_axes, sources, strict=True)]
        in_backwards = _listed(self.scan_input_directions, scan_count)  # type: ignore[attr-defined]
        lengths = {v.shape[a] for v, a in zip(sources, in_axes, strict=True)}
        if len(lengths) != 1:
            raise ValueError(f"Scan's scan inputs differ in length along their axes: {lengths}.")
        (length,) = lengths
        output_count = len(body.output_names) - state_count
        scanned: list[list[Any]] = [[] for _ in range(output_count)]
        inputs = dict(context or {})
        for step in range(length):
            inputs.update(zip(names_in[:state_count], states, strict=True))
            for name, value, axis, backwards in zip(
                names_in[state_count:], sources, in_axes, in_backwards, strict=True
            ):
                inputs[name] = np.take(value, length - 1 - step if backwards else step, axis=axis)
            outputs = run_body(inputs, attributes=attributes, bindings=bindings)
            states = list(outputs[:state_count])
            for values, value in zip(scanned, outputs[state_count:], strict=True):
                values.append(value)
        out_axes = _listed(self.scan_output_axes, output_count)  # type: ignore[attr-defined]
        out_backwards = _listed(self.scan_output_directions, output_count)  # type: ignore[attr-defined]
        types = body.output_types_[state_count:]
        results = [
            _stack(values[::-1] if backwards else values, axis, kind)
            for values, axis, backwards, kind in zip(
                scanned, out_axes, out_backwards, types, strict=True
            )
        ]
        return (*states, *results)


def _body_of(op: OpRun) -> tuple[Any, Any]:
    """The evaluator of a node's ``body`` attribute, and the method that runs it (``OpRun``
    sets both on the instance for each graph attribute)."""
    held = vars(op)
    return held["body"], held["_run_body"]


def _listed(values: Sequence[int] | None, count: int) -> list[int]:
    """An attribute listing one int per scan input or output (0 where it is left out)."""
    given = list(values or ())
    return given + [0] * (count - len(given))


def _stack(values: list[Any], axis: int, kind: TypeProto) -> Any:
    """Per-iteration values stacked along a new ``axis``; with no iteration, an empty array of
    the body output's declared type, its static dims kept (as onnxruntime gives it)."""
    if values:
        first = np.asarray(values[0])
        return np.stack([np.asarray(v) for v in values], axis=axis % (first.ndim + 1))
    declared = value_type(kind)
    if not isinstance(declared, TensorType):
        declared = TensorType(0, None)
    dtype = dtype_of_code(declared.element) if declared.element else None
    shape = [d if isinstance(d, int) else 0 for d in declared.static_dims or ()]
    shape.insert(axis % (len(shape) + 1), 0)
    return np.empty(shape, dtype=dtype if dtype is not None else np.float32)


def control_flow_ops() -> list[type[OpRun]]:
    """The op classes replacing onnx.reference's Loop and Scan."""
    return [Loop, Scan]
