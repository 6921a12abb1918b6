"""Calls of local functions that hold a Split: each call inferred by inlining that one call
(``onnx.inliner.inline_selected_functions``) into a small model and running the whole
inference on it, so that the body's Split nodes are inferred per call site.

Calls alike (the same input types and constants, the same attributes) are inferred once, in
the whole inference: functions that call one another twice per level make 2^k calls of a
few alike. What the calls find is gathered per place in the function's body; a function that
no call reaches is inferred from a call of untyped inputs and its attributes' defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from onnx import ModelProto
from onnx.checker import ValidationError

from ..model import FunctionId, ModelView, Node, Scope
from ..model.protobuf import (
    InputFacts,
    call_model,
    function_defaults,
    inline_call,
    links_only,
    with_functions,
)
from ._split import Inferred, outcome_key
from ._symbolic import DimParams

__all__ = ["Calls", "add_call", "infer_uncalled"]

#: The inference of one inlined call's model, given the dim names of the whole inference and
#: the calls met so far.
InferModel = Callable[[ModelProto, DimParams, "Calls"], Inferred]


class Calls:
    """The inference of each call alike met in one inference of a model, by the call's
    model (see :func:`~splitops.onnx.model.call_model`); ``None`` where onnx cannot inline
    or infer it. Shared by the passes over the calls inside it."""

    def __init__(self, infer: InferModel) -> None:
        self._infer = infer
        self._found: dict[bytes, Inferred | None] = {}

    def infer(
        self,
        function: Scope,
        call: Node | None,
        facts: Callable[[str], InputFacts],
        params: DimParams,
    ) -> tuple[bytes, Inferred | None]:
        """The key and the inference of ``call`` (of ``function``, its inputs as ``facts``
        gives them; ``None``: a call of the function's defaults), once per calls alike."""
        model, key = call_model(function, call, facts)
        if key not in self._found:
            self._found[key] = self._inlined(with_functions(model, function.view), function, params)
        return key, self._found[key]

    def _inlined(self, model: ModelProto, function: Scope, params: DimParams) -> Inferred | None:
        try:
            inlined = inline_call(model, function)
            return None if inlined is None else self._infer(inlined, params, self)
        except (RuntimeError, ValueError, ValidationError):
            return None


def add_call(inferred: Inferred, function: Scope, call: Inferred, *, nested: bool) -> None:
    """Add what inference found inside one call of ``function`` to the outcomes of its body
    (with ``nested``, and what it found in the calls inside that call)."""
    key = function.key[0]
    assert key is not None  # a function's scope
    found = inferred.functions.setdefault(key, {})
    view = function.view
    for site, outcome in call.own:
        # The inliner renamed the values; a node keeps its place in the body.
        body = view.scope((key, site.where))
        assert body is not None  # a place of the body, inlined
        names = dict(zip(site.output_names, body.nodes[site.position].output_names, strict=True))
        outputs = tuple((names[name], t) for name, t in outcome.outputs)
        renamed_outcome = replace(outcome, outputs=outputs)
        at_place = found.setdefault((site.where, site.position), {})
        at_place.setdefault(outcome_key(renamed_outcome), renamed_outcome)
    if not nested:
        return
    for inner, places in call.functions.items():
        target = inferred.functions.setdefault(inner, {})
        for place, outcomes in places.items():
            kept = target.setdefault(place, {})
            for alike, outcome in outcomes.items():
                kept.setdefault(alike, outcome)


def _untyped(name: str) -> InputFacts:
    """What a call nobody makes gives of its inputs: nothing."""
    return None, None


def infer_uncalled(
    inferred: Inferred,
    view: ModelView,
    holders: set[FunctionId],
    params: DimParams,
    calls: Calls,
) -> None:
    """Infer the body of each function no call reached, from a call with untyped inputs and
    only the attributes' defaults. Nodes that refer to other attributes are left out."""
    for key, function in view.functions.items():
        if key not in holders or key in inferred.functions:
            continue
        _, found = calls.infer(function, None, _untyped, params)
        if found is None:
            continue
        defaults = function_defaults(function.proto).keys()
        kept: list[Any] = []
        for site, outcome in found.own:
            body = view.scope((key, site.where))
            if body is not None and links_only(body.nodes[site.position].proto, defaults):
                kept.append((site, outcome))
        add_call(inferred, function, replace(found, own=kept), nested=False)
