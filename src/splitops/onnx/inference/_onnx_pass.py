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
Those nodes (:func:`~splitops.onnx.model.onnx_takes`), and calls of local functions that
hold a Split (whose bodies onnx would infer with them, where inference infers them per
call), are hidden from its pass (:func:`~splitops.onnx.model.typed_copy`). A ``value_info``
entry with a negative dim (no tensor has one; an earlier pass of onnx writes them for
invalid nodes) is dropped first.
"""

from __future__ import annotations

from onnx import ModelProto

from ..model import FunctionId, ModelView, Node
from ..model.protobuf import onnx_takes, typed_copy

__all__ = ["onnx_takes_bodies", "split_holders", "typed_by_onnx"]


def typed_by_onnx(
    view: ModelView, holders: set[FunctionId], *, count_nodes: bool = False
) -> tuple[ModelView, ModelProto]:
    """onnx's pass over the view's model, the Splits it cannot take and the calls of the
    local functions ``holders`` hidden from it: the view of the model onnx was given (a copy
    without negative dims, where the model declared some), and onnx's typed copy of it.
    ``count_nodes``: the walk that finds what to hide holds the model's nodes against the
    ``max_nodes`` limit (a model without local functions)."""
    given, typed = typed_copy(view.model, holders, count_nodes=count_nodes)
    return (view if given is view.model else ModelView.read(given)), typed


def onnx_takes_bodies(node: Node) -> bool:
    """Whether onnx can infer every Split in the graphs ``node`` holds, at any depth."""
    return all(onnx_takes(inner) for scope in node.held for inner in scope.walk())


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
