"""Copies of big protobuf messages that end in a ``MemoryError``, never in a crash.

Python's protobuf (upb) ends the process with SIGSEGV where it cannot allocate the bytes of a
copy (``CopyFrom``, setting ``raw_data``), instead of raising: a model whose weights fit
every limit but not the memory left would kill the command without a word. So a copy of
something big is preceded by :func:`reserve_memory`, which maps as many bytes without
touching them and gives them back at once: where the system refuses them, it is a
``MemoryError`` (which the command reports in one line), before protobuf asks.

>>> reserve_memory(2**20)
>>> reserve_memory(2**62)
Traceback (most recent call last):
...
MemoryError: cannot have 4611686018427387904 more bytes of memory...
"""

from __future__ import annotations

import copy
import mmap

from onnx import ModelProto

from ._walk import without_large_weights

__all__ = ["copy_model", "copy_over", "reserve_memory", "types_only", "weight_bytes"]

#: Copies smaller than this need no reservation: a failure there is a failure anywhere.
_SMALL = 64 * 2**20


def reserve_memory(nbytes: int) -> None:
    """``MemoryError`` unless ``nbytes`` more bytes of memory can be mapped now."""
    if nbytes < _SMALL:
        return
    try:
        mmap.mmap(-1, nbytes).close()
    except (OSError, OverflowError, ValueError) as error:
        raise MemoryError(
            f"cannot have {nbytes} more bytes of memory ({error.__class__.__name__}: {error})"
        ) from error


def weight_bytes(model: ModelProto) -> int:
    """The bytes of the main graph's initializers' data: the bulk of a model's copy."""
    return sum(len(tensor.raw_data) for tensor in model.graph.initializer)


def types_only(model: ModelProto) -> ModelProto:
    """``model`` with its large weights set aside as typed inputs
    (:func:`~splitops.onnx.model._walk.without_large_weights`), for onnx's checker and shape
    inference to read; ``model`` itself where it holds no large weight, rather than a copy of
    it all. Read it, never change it.

    >>> from onnx import helper
    >>> model = helper.make_model(helper.make_graph([], "g", [], []))
    >>> types_only(model) is model
    True
    """
    return without_large_weights(model)[0]


def copy_model(model: ModelProto) -> ModelProto:
    """A copy of ``model``, or ``MemoryError`` where its weights do not fit the memory left."""
    reserve_memory(weight_bytes(model))
    copy = ModelProto()
    copy.CopyFrom(model)
    return copy


def copy_over(model: ModelProto, source: ModelProto) -> None:
    """Make ``model`` a copy of ``source`` (a ``MemoryError`` where its weights do not fit the
    memory left), but for what stays its author's: its model-local functions and its main
    graph's declared inputs and outputs. onnx.version_converter's result, say, has no
    functions, and the shapes its inference found written into the graph's interface.

    >>> from onnx import TensorProto, helper
    >>> mine, theirs = (helper.make_tensor_value_info("x", TensorProto.FLOAT, [d]) for d in "N3")
    >>> function = helper.make_function("d", "F", [], [], [], [])
    >>> model = helper.make_model(helper.make_graph([], "g", [mine], []), functions=[function])
    >>> copy_over(model, helper.make_model(helper.make_graph([], "new", [theirs], [])))
    >>> model.graph.name, model.graph.input[0] == mine, len(model.functions)
    ('new', True, 1)
    """
    functions = list(model.functions)
    interface = copy.deepcopy([list(model.graph.input), list(model.graph.output)])
    reserve_memory(weight_bytes(source))
    model.CopyFrom(source)
    del model.functions[:]
    model.functions.extend(functions)
    for declared, entries in zip((model.graph.input, model.graph.output), interface, strict=True):
        del declared[:]
        declared.extend(entries)
