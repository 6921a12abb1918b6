"""What every rewrite promises, checked on its result before anyone sees it.

A rewrite (:func:`~splitops.convert_model`, :func:`~splitops.lower_model`) must give a model
that a caller uses exactly as the original: the same graph inputs and outputs (names, order,
types), valid by onnx's full check wherever the original was, and computing what the
original computed, at every size that inference knows. onnx-ir's passes state such
``requires`` and ``ensures``; here :func:`check_rewrite` is the ``ensures`` of both rewrites.
A broken promise is a defect of splitops, never a problem of the model: it is a
:class:`RewriteError` that names the node, and no file is written.

>>> from onnx import TensorProto, helper
>>> from splitops.onnx.model._view import ModelView
>>> graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> changed = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> changed.graph.input[0].name = "x2"
>>> check_rewrite(model, changed, "lowering", before=ModelView.read(model))
Traceback (most recent call last):
  ...
splitops.onnx.rewrite._contract.RewriteError: lowering changed the main graph's inputs: ...
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import onnx
from onnx import ModelProto, TensorProto

from ...core import SplitopsError
from ..model import (
    ModelEdits,
    ModelView,
    ScopeKey,
    TensorType,
    ValueType,
    location,
    types_only,
    value_type,
)
from ..model.protobuf import (
    GraphsAt,
    declared_types,
    defined_names,
    initializers,
    input_types,
    is_large_weight,
    output_types,
)

__all__ = ["RewriteError", "check_fully", "check_rewrite"]


class RewriteError(SplitopsError, AssertionError):
    """A rewrite broke its own promise (see :func:`check_rewrite`): a defect of splitops."""


def check_rewrite(
    original: ModelProto,
    rewritten: ModelProto,
    what: str,
    *,
    before: ModelView,
    edits: ModelEdits | None = None,
    full_check: bool = True,
    corrected: Collection[tuple[ScopeKey, str]] = (),
) -> None:
    """:class:`RewriteError` unless ``rewritten`` keeps the promises of a rewrite of
    ``original``, whose view, with the types inference gave it, is ``before``:

    - the main graph's inputs and outputs are unchanged (names, order, types), but for
      the declared shapes ``corrected`` (scope, as the edits moved it, and name), which the
      rewrite found untrue of what the model computes: of a main graph's output, its name
      and element type stay; a value so declared is not compared below;
    - onnx's full check passes, wherever it passed on the original (``full_check=False``
      where the caller ran it already);
    - no value that both models hold is typed by onnx's inference of the result in a way
      that contradicts its type before (element type, rank, a static length): no rewritten
      node computes other sizes than the planner's, wherever they are known. onnx's C++
      pass types the result: it is fast, and it is not splitops' own reading. Each scope
      of ``before`` is compared with the graph that lies where ``edits`` (the rewrite's)
      moved it, by identity, never by label.
    """
    main = {name for key, name in corrected if key == (None, ())}
    _check_interface(original, rewritten, what, main)
    if full_check:
        problem = check_fully(rewritten)
        if problem is not None and check_fully(original) is None:
            raise RewriteError(f"{what} wrote a model that onnx's full check refuses: {problem}.")
    after = _onnx_types(rewritten)
    if after is None:
        return  # onnx cannot type it: the full check has said what it could
    _check_types(before, after, what, edits, set(corrected), lambda: _onnx_types(original))


def _onnx_types(model: ModelProto) -> ModelProto | None:
    """``model`` (without its large weights) typed by onnx's C++ pass, or ``None`` where
    onnx cannot type it."""
    light = types_only(model)
    if light.ir_version < 4 and initializers(light.graph):
        # Before IR 4 every initializer is a constant, and onnx's pass ignores one that is
        # not also listed as an input (onnxruntime does not): read at IR 4, where such an
        # initializer is a constant to onnx too.
        light = _at_ir4(light)
    try:
        typed: ModelProto = onnx.shape_inference.infer_shapes(
            light, strict_mode=False, data_prop=False
        )
    except (onnx.shape_inference.InferenceError, ValueError, TypeError, RuntimeError):
        return None
    return typed


def _at_ir4(model: ModelProto) -> ModelProto:
    """A copy of ``model`` (holding no large weight) that claims IR version 4."""
    copy = ModelProto()
    copy.CopyFrom(model)
    copy.ir_version = 4
    return copy


def _check_interface(
    original: ModelProto, rewritten: ModelProto, what: str, corrected: set[str]
) -> None:
    sides = (
        ("input", list(input_types(original).items()), list(input_types(rewritten).items())),
        ("output", output_types(original), output_types(rewritten)),
    )
    for field, declared_before, declared_after in sides:
        shaped = set(corrected) if field == "output" else set()
        before, after = _entries(declared_before, shaped), _entries(declared_after, shaped)
        if before != after:
            names = [name for name, _ in before], [name for name, _ in after]
            change = (
                f"{names[0]} became {names[1]}"
                if names[0] != names[1]
                else "their types changed, names " + str(names[0])
            )
            raise RewriteError(f"{what} changed the main graph's {field}s: {change}.")


def _entries(
    declared: list[tuple[str, ValueType | None]], corrected: set[str]
) -> list[tuple[str, Any]]:
    """Each entry's name and type (of those ``corrected``, its element type alone: 0 where
    it declares no tensor)."""
    return [
        (name, found.element if isinstance(found, TensorType) else 0)
        if name in corrected
        else (name, found)
        for name, found in declared
    ]


def check_fully(model: ModelProto) -> str | None:
    """What onnx.checker's full check finds wrong with ``model``, in one line, or ``None``.

    The model is checked without its large weights, each of which is checked on its own:
    onnx.checker copies a model it is given several times over (serialized, parsed, and once
    more for shape inference), which for a model of 1 GiB of weights took 4 GiB of memory. A
    weight kept in external data is not: onnx's check looks for its file from the working
    folder, and the loader has checked its file where it really lies (its place, its
    length).
    """
    try:
        for tensor in filter(is_large_weight, initializers(model.graph)):
            if tensor.data_location != TensorProto.EXTERNAL:
                onnx.checker.check_tensor(tensor)
        onnx.checker.check_model(types_only(model), full_check=True)
    # ValueError: onnx's C++ parser refuses what Python's protobuf accepted.
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError, ValueError) as error:
        return " ".join(str(error).split())
    return None


#: How the contract words what the original and the rewritten model say of one value.
_SAID = ("{} before", "{} after")


def _check_types(
    before: ModelView,
    after: ModelProto,
    what: str,
    edits: ModelEdits | None,
    corrected: set[tuple[ScopeKey, str]],
    original: Callable[[], ModelProto | None],
) -> None:
    """No value typed in ``before`` and by ``after`` (the rewritten model, typed by onnx)
    may have contradicting types (element type, rank, or a static length), unless onnx types
    the value so in the original too (``original()``, typed when first needed): that is
    onnx's misreading of both, not the rewrite's change (onnx 1.23 reads Split's axis as 32
    bits, so that a part of 2^31 is 0 to it before and after).

    The scopes compared are those ``edits`` changed (every scope without ``edits``): a
    rewritten node that computes other sizes shows it in its own scope, where its outputs
    keep their names, before any other scope reads them. Each is matched with the graph of
    ``after`` at its identity, moved by ``edits``; of ``after``, only those graphs' own
    protobufs are read (the values they define and the types they give), not a whole view.
    """
    onnx_before: list[GraphsAt | None] = []
    graphs_at = GraphsAt(after)
    scopes = before.scopes if edits is None else edits.edited_scopes()
    for scope in scopes:
        key = scope.key if edits is None else edits.key_after(scope.key)
        other = graphs_at(key)
        if other is None:
            continue
        types = declared_types(other)
        defined = defined_names(other)
        for name, value in scope.values.items():
            if name not in defined or (key, name) in corrected:
                continue
            type_before = value.type
            type_after = value_type(types.get(name))
            if type_before is None or type_after is None or type_before == type_after:
                continue
            contradiction = next(type_before.conflicts(type_after, _SAID), None)
            if contradiction is None:
                continue
            if not onnx_before:
                typed = original()
                onnx_before.append(None if typed is None else GraphsAt(typed))
            if onnx_before[0] is not None:
                graph = onnx_before[0](scope.key)
                if graph is not None and value_type(declared_types(graph).get(name)) == type_after:
                    continue
            producer = value.producer
            where = (
                location(scope.label, producer.label)
                if producer is not None
                else f"{scope.label} input {name!r}"
            )
            raise RewriteError(
                f"{what} changed what {where} computes: of {name!r}, {contradiction}."
            )
