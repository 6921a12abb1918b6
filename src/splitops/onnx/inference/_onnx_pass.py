"""onnx's own pass over a model, which types every value once, and the nodes it must not see.

onnx infers the whole model once, Split nodes included (but those that onnx cannot take),
without its data propagation. That pass is right for every other operator, and for a valid
Split it is right where it says something; it only says less (``unk__0`` for a size
splitops can write as ``N - 3*ceiling(N/4)``), or something impossible for an invalid node
(a dim of -1), which the overlay walk (:mod:`._overlay`) then corrects.

onnx's data propagation stays off. splitops follows the values of shape computations itself
(:mod:`._values`, tensors of at most ``SMALL_TENSOR`` items), and onnx 1.23's propagation
allocates some 150 bytes per item of every 1-d tensor whose length it knows when it meets
an Add, a Cast or a Concat: an Add of a declared ``[2**31]`` vector took all memory (found
by fuzzing). On the exported corpus splitops knows the same 580 of 582 split dims either way.

onnx 1.23 aborts the process on a Split-18 that lists more outputs than ``num_outputs``, and
allocates ``num_outputs`` sizes whatever the node lists (``2**31 - 1`` exhausts the memory).
Those nodes, and calls of local functions that hold a Split (whose bodies onnx would infer
with them), are hidden from its pass (:func:`~splitops.onnx.model.typed_copy`). A
``value_info`` entry with a negative dim (no tensor has one; an earlier pass of onnx writes
them for invalid nodes) is dropped first (:func:`~splitops.onnx.model.without_negative_dims`).
"""

from __future__ import annotations

from onnx import ModelProto

from ..model import (
    DEFAULT_DOMAINS,
    FunctionId,
    ModelView,
    Node,
    NodeKey,
    ScopeKey,
    declares_negative_dims,
    typed_copy,
    without_negative_dims,
)

__all__ = ["onnx_takes", "onnx_takes_bodies", "split_holders", "typed_by_onnx"]

#: The most parts onnx's pass is left to infer for a Split-18 that lists fewer outputs.
_ONNX_MOST_PARTS = 4096


def typed_by_onnx(view: ModelView, holders: set[FunctionId]) -> tuple[ModelView, ModelProto]:
    """onnx's pass over the view's model, the nodes it cannot take hidden from it: the
    Splits of :func:`onnx_takes`, and the calls of the local functions ``holders``. The view
    of the model onnx was given (a copy without negative dims, where the model declared
    some), and onnx's typed copy of it; one walk of the view finds both."""
    hidden: list[NodeKey] = []
    negative: list[ScopeKey] = []
    for scope in view.main.below():
        if declares_negative_dims(scope):
            negative.append(scope.key)
        # Without local functions that hold a Split, only Splits may be hidden.
        for node in scope.nodes if holders else scope.split_nodes():
            if _hidden(node, holders):
                hidden.append((scope.key, node.index))
    if negative:
        view = ModelView.read(without_negative_dims(view, negative))
    return view, typed_copy(view, hidden)


def _hidden(node: Node, holders: set[FunctionId]) -> bool:
    if node.domain in DEFAULT_DOMAINS:
        return node.op_type == "Split" and not onnx_takes(node)
    return node.function_id in holders


def onnx_takes(node: Node) -> bool:
    """Whether onnx's own inference of a Split or SplitToSequence node is safe to run: every
    node but a Split whose ``num_outputs`` is below the outputs it lists, or far above."""
    count = node.attribute("num_outputs") if node.op_type == "Split" else None
    if not isinstance(count, int):
        return True
    listed = len(node.output_names)
    return bool(listed <= count <= max(listed, _ONNX_MOST_PARTS))


def onnx_takes_bodies(node: Node) -> bool:
    """Whether onnx can infer every Split in the graphs ``node`` holds, at any depth."""
    return all(
        onnx_takes(inner)
        for scope in node.held
        for inner in scope.walk()
        if inner.domain in DEFAULT_DOMAINS
    )


def split_holders(view: ModelView) -> set[FunctionId]:
    """The local functions whose bodies hold a Split or SplitToSequence, directly or by a
    call."""
    calls: dict[FunctionId, set[FunctionId]] = {}
    holders = set()
    for key, body in view.functions.items():
        called = calls[key] = set()
        for node in body.walk():
            if node.is_split:
                holders.add(key)
            called.add(node.function_id)
    grown = True
    while grown:
        grown = False
        for key, called in calls.items():
            if key not in holders and called & holders:
                holders.add(key)
                grown = True
    return holders
