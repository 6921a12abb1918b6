"""Load and save ONNX models safely, whoever wrote them.

:func:`load_model` reads a model file without trusting it, and refuses with a
:class:`~splitops.ModelLoadError` that says what is wrong, before anything big is allocated:

- a missing, empty, truncated or non-ONNX file, or one over protobuf's 2 GB limit;
- text fields that are not UTF-8 (node names, op types, ...), unknown fields that onnx's own
  parser refuses (protobuf groups), local functions defined twice or calling themselves, a
  node holding graphs under one attribute name twice;
- a tensor whose data type is unknown, whose dims are negative or claim more elements than
  the ``max_tensor_elements`` limit, or whose data does not fit its dims;
- a Split or SplitToSequence asking for more parts than the ``max_parts`` limit, counted
  from what the file stores (outputs, ``num_outputs``, the length of a constant ``split``);
- external data outside the model's folder (absolute paths, ``..``, or a link resolving
  outside: onnx itself failed to refuse them before CVE-2024-27318 and CVE-2024-27319), the
  model file itself, data shorter than its tensor's dims, or more bytes in all than the
  ``max_external_bytes`` limit. Each file is opened once, and what is read is read from the
  opened file after checking where it really lies, so swapping a file for a link between
  the check and the read reads nothing outside the folder.

>>> import tempfile, pathlib
>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "ab"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> save_model(model, folder / "split.onnx")
>>> load_model(folder / "split.onnx").graph.node[0].op_type
'Split'
>>> _ = (folder / "notes.txt").write_text("not a model")
>>> load_model(folder / "notes.txt")
Traceback (most recent call last):
...
splitops.ModelLoadError: cannot load .../notes.txt: it is not an ONNX model...
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import IO, Any, BinaryIO

import numpy as np
import onnx
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet
from onnx import (
    AttributeProto,
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    SequenceProto,
    TensorProto,
    numpy_helper,
)

from ..._files import replacing, temporary_sibling
from ...core import ModelLoadError, Rule, SplitError, current_limits, require_argument
from ._memory import reserve_memory
from ._node import is_split_node, node_label
from ._types import element_name, stored_bytes, tensor_problem
from ._view import ModelView
from ._walk import (
    check_node_total,
    copy_without,
    expanded_node_count,
    graph_attributes,
    graphs_below,
    is_large_weight,
    iter_tensors,
    model_graphs,
)

__all__ = [
    "MAX_MODEL_BYTES",
    "DataFolder",
    "ExternalClaim",
    "ModelRead",
    "check_model_size",
    "check_node_count",
    "check_part_counts",
    "external_claim",
    "leaves_folder",
    "load_model",
    "load_value",
    "load_without_weights",
    "model_shell",
    "pieces_size",
    "save_model",
    "write_pieces",
]

#: Protobuf cannot hold a message of 2 GiB or more: bigger models keep weights outside.
MAX_MODEL_BYTES = 2**31 - 1

#: First bytes of files people pass by mistake, and what they are.
_OTHER_FORMATS = {
    b"\x93NUMPY": "a NumPy .npy array",
    b"PK\x03\x04": "a zip archive (.npz, PyTorch .pt, ...)",
    b"\x80": "a Python pickle",
    b"\x89HDF": "an HDF5 file (Keras .h5, ...)",
}

_TRUST_HINT = "Move the data beside the model, or pass --trust-external-data if you trust it."


def load_model(
    path: str | os.PathLike[str] | bytes,
    *,
    trust_external_data: bool = False,
    load_external_data: bool = True,
    name: str | None = None,
) -> ModelProto:
    """Read an ONNX model file, with its external data, refusing anything unsafe.

    External data must lie in the model's folder (or below it) unless
    ``trust_external_data=True``, which lifts that one check for models you trust. With
    ``load_external_data=False`` its locations are checked but nothing is read: tensors keep
    their references (enough for tools that read shapes, not weights).

    ``path`` may also be the model's bytes, as ``onnx.load_model_from_string`` takes them,
    checked alike. Bytes have no folder: a model whose tensors lie in external data is refused
    unless ``load_external_data=False`` (then its references are kept, unchecked). ``name``
    says in messages where the bytes came from.
    """
    reads = _Reads.ALL if load_external_data else _Reads.NONE
    return _load(path, trust=trust_external_data, reads=reads, name=name).model


def load_without_weights(path: str | os.PathLike[str], *, trust: bool = False) -> ModelRead:
    """Read an ONNX model file as :func:`load_model` does, every check included, but leave
    its weights where they lie: an initializer of the main graph that holds more than
    ``SMALL_TENSOR`` elements and keeps its data in a file keeps its reference (checked, not
    read). Every other tensor kept in external data is read (the sizes a Split is cut by, a
    Constant's value), and the ``max_external_bytes`` limit counts those only.
    """
    require_argument(path, (str, os.PathLike), "load_without_weights", "a path")
    return _load(path, trust=trust, reads=_Reads.ALL_BUT_WEIGHTS)


class _Reads(enum.Enum):
    """Which tensors kept in external data a load reads into the model."""

    ALL = "all"
    NONE = "none"
    #: All but the main graph's large initializers (:func:`load_without_weights`).
    ALL_BUT_WEIGHTS = "all but the weights"


@dataclass
class ModelRead:
    """A model read from a file, and what it keeps outside that file."""

    #: The model; its weights keep references to files of :attr:`data` where they were not
    #: read.
    model: ModelProto
    #: Where its external data lies (``None``: bytes, which have no folder).
    data: DataFolder | None


def _load(
    path: str | os.PathLike[str] | bytes, *, trust: bool, reads: _Reads, name: str | None = None
) -> ModelRead:
    if isinstance(path, (bytes, bytearray, memoryview)):
        file, prefix = None, f"cannot load {name}" if name else "cannot load the model's bytes"
        data = _checked_bytes(bytes(path), prefix)
    else:
        require_argument(path, (str, os.PathLike), "load_model", "a path or the model's bytes")
        file = Path(path)
        prefix = f"cannot load {file}"
        data = _model_bytes(file, prefix)
    model, clean_text = _parse(data, prefix)
    problem = (None if clean_text else _text_problem(model)) or _function_problem(model)
    tensors: list[TensorProto] = []
    if not problem:
        survey = _Survey.of(model)
        problem = _graph_problem(model) if survey.graphs_twice else None
    if not problem:
        try:
            survey.check_size(model)
        except SplitError as error:
            raise ModelLoadError(f"{prefix}: {error}") from error
        tensors = survey.stored_tensors(model)
        problem = _tensor_problem(tensors)
    if problem:
        raise ModelLoadError(f"{prefix}: {problem}")
    external = [t for t in tensors if t.data_location == TensorProto.EXTERNAL]
    if file is None:
        if external and reads is not _Reads.NONE:
            hint = (
                "It must hold its data itself"
                if name
                else "Load the model from its file, or pass load_external_data=False"
            )
            raise ModelLoadError(
                f"{prefix}: its tensors lie in external data, which bytes have no folder to "
                f"find. {hint}."
            )
        return ModelRead(model, None)
    folder = DataFolder(file.resolve().parent, _identity(os.stat(file)), prefix, trust)
    loaded = ModelRead(model, folder)
    weights = (
        {t.name for t in model.graph.initializer if is_large_weight(t)}
        if reads is _Reads.ALL_BUT_WEIGHTS
        else set()
    )

    def read(tensor: TensorProto) -> bool:
        if weights and tensor.name in weights:
            return not is_large_weight(tensor)
        return reads is not _Reads.NONE

    _load_external_data(external, folder, read=read)
    return loaded


def load_value(data: bytes, *, sequence: bool, name: str) -> Any:
    """The value in ``data`` as ONNX's node tests store one (``input_0.pb``): a
    ``TensorProto`` as a numpy array, or with ``sequence`` a ``SequenceProto`` of tensors as a
    list of them; a :class:`~splitops.ModelLoadError` that names ``name`` where it is none.

    Nothing is read from elsewhere: a tensor that keeps its data outside the file (onnx would
    read it from a path relative to the process's folder) is refused, as is one whose data
    does not fit its dims, and the elements of all its tensors together are held against the
    ``max_input_elements`` limit (and their number against ``max_parts``) before numpy
    allocates them.

    >>> tensor = onnx.helper.make_tensor("x", TensorProto.INT64, [2], [4, 5])
    >>> load_value(tensor.SerializeToString(), sequence=False, name="x.pb")
    array([4, 5])
    """
    prefix = f"cannot read {name}"
    message: TensorProto | SequenceProto = SequenceProto() if sequence else TensorProto()
    try:
        message.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as error:
        what = "SequenceProto" if sequence else "TensorProto"
        raise ModelLoadError(f"{prefix}: it is no ONNX {what} ({_reason(error)}).") from error
    if isinstance(message, SequenceProto):
        if message.elem_type not in (SequenceProto.TENSOR, SequenceProto.UNDEFINED) or any(
            (message.sequence_values, message.map_values, message.optional_values)
        ):
            raise ModelLoadError(f"{prefix}: it is a sequence of something other than tensors.")
        tensors = list(message.tensor_values)
    else:
        tensors = [message]
    limits_now = current_limits()
    if len(tensors) > limits_now.max_parts:
        raise ModelLoadError(
            f"{prefix}: it holds {len(tensors)} tensors, over the max_parts limit of "
            f"{limits_now.max_parts}."
        )
    total = 0
    for tensor in tensors:
        if tensor.data_location == TensorProto.EXTERNAL or len(tensor.external_data):
            raise ModelLoadError(
                f"{prefix}: tensor {tensor.name!r} keeps its data outside the file, which a "
                "value file may not: its data must lie in it."
            )
        total += math.prod(max(dim, 0) for dim in tensor.dims)
        if total > limits_now.max_input_elements:
            raise ModelLoadError(
                f"{prefix}: its tensors claim {total} elements or more, over the "
                f"max_input_elements limit of {limits_now.max_input_elements}."
            )
        problem = tensor_problem(tensor, limits_now.max_input_elements)
        if problem:
            raise ModelLoadError(f"{prefix}: tensor {tensor.name!r}: {problem}.")
    try:
        arrays = [np.asarray(numpy_helper.to_array(tensor)) for tensor in tensors]
    except (ValueError, TypeError, KeyError) as error:
        raise ModelLoadError(f"{prefix}: {_reason(error)}.") from error
    return arrays if sequence else arrays[0]


def _checked_bytes(data: bytes, prefix: str) -> bytes:
    """A model's bytes, checked as :func:`_model_bytes` checks a file's."""
    if not data:
        raise ModelLoadError(f"{prefix}: there are none (0 bytes).")
    if len(data) > MAX_MODEL_BYTES:
        raise ModelLoadError(f"{prefix}: {len(data)} bytes, over protobuf's 2 GB limit.")
    return data


def _model_bytes(file: Path, prefix: str) -> bytes:
    """The bytes of the model file, read only once it is known to be a regular file of at
    most :data:`MAX_MODEL_BYTES`: checked before it is opened (a FIFO or a device is never
    opened), and again on the opened file (``O_NONBLOCK``: a FIFO swapped in between cannot
    block the open)."""
    try:
        status = os.stat(file)
    except FileNotFoundError:
        raise ModelLoadError(f"{prefix}: no such file.") from None
    except (OSError, ValueError) as error:
        raise ModelLoadError(f"{prefix}: {_reason(error)}.") from error
    _check_model_status(status, prefix)
    try:
        descriptor = os.open(file, _READ_FLAGS)
    except OSError as error:
        raise ModelLoadError(f"{prefix}: {_reason(error)}.") from error
    with os.fdopen(descriptor, "rb") as stream:
        opened = os.fstat(descriptor)
        _check_model_status(opened, prefix)
        data = stream.read(opened.st_size + 1)
    if len(data) != opened.st_size:
        raise ModelLoadError(f"{prefix}: the file changed while it was read.")
    return data


def _check_model_status(status: os.stat_result, prefix: str) -> None:
    if not stat.S_ISREG(status.st_mode):
        raise ModelLoadError(f"{prefix}: it is not a regular file (a folder, a device or a pipe).")
    if status.st_size == 0:
        raise ModelLoadError(f"{prefix}: the file is empty (0 bytes).")
    if status.st_size > MAX_MODEL_BYTES:
        raise ModelLoadError(
            f"{prefix}: the file is {status.st_size} bytes, over protobuf's 2 GB limit for one "
            "message. Save the model with its weights as external data "
            "(onnx.save_model(model, path, save_as_external_data=True))."
        )


#: How every file a model names is opened: read-only, and never blocking (a FIFO opens at
#: once, and is then refused as no regular file).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _reason(error: BaseException) -> str:
    return str(getattr(error, "strerror", None) or error)


def save_model(model: ModelProto, path: str | os.PathLike[str]) -> None:
    """Write ``model`` to ``path``, whole or not at all (a temporary file beside it, renamed
    over ``path``), creating the folders above it where missing; weights go to
    ``<name>.data`` beside it past protobuf's 2 GB. An ``OSError`` names ``path``.

    A model under 2 GB is written in pieces (:func:`write_pieces`), so that no more than one
    weight is serialized at a time.
    """
    require_argument(model, ModelProto, "save_model", "an onnx.ModelProto")
    require_argument(path, (str, os.PathLike), "save_model", "a path (str or os.PathLike)")
    file = Path(path)
    shell = model_shell(model)
    if pieces_size(shell, model.graph.initializer) > MAX_MODEL_BYTES:
        with temporary_sibling(file) as temporary:
            onnx.save_model(
                model, temporary, save_as_external_data=True, location=f"{file.name}.data"
            )
        return
    with replacing(file) as stream:
        write_pieces(stream, shell, model.graph.initializer)


def model_shell(model: ModelProto) -> ModelProto:
    """A copy of ``model`` without the main graph's initializers: what :func:`write_pieces`
    writes first."""
    shell = copy_without(model, "graph")
    shell.graph.CopyFrom(copy_without(model.graph, "initializer"))
    return shell


def pieces_size(shell: ModelProto, initializers: Iterable[TensorProto]) -> int:
    """The bytes :func:`write_pieces` writes, summed piece by piece: a model's own
    ``ByteSize()`` serializes it whole to count."""
    size: int = shell.ByteSize()
    return size + sum(_piece_size(tensor) for tensor in initializers)


def _piece_size(tensor: TensorProto) -> int:
    size: int = tensor.ByteSize()
    # The tag and length of the tensor in its graph, and of the graph in its model.
    return size + 2 * (1 + _varint_size(size))


def _varint_size(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


def write_pieces(stream: IO[bytes], shell: ModelProto, initializers: Iterable[TensorProto]) -> None:
    """Write the model of ``shell`` (:func:`model_shell`) and ``initializers`` to ``stream``:
    the shell, then each initializer as a model message of its own, holding it alone.

    Protobuf reads concatenated messages as one, merged (repeated fields appended in order),
    so any reader loads the whole model, and no more than one weight is serialized at a
    time. Serialized whole, a model of 1 GiB of weights took 3 GiB more memory to write.
    """
    stream.write(shell.SerializeToString())
    for tensor in initializers:
        piece = ModelProto()
        reserve_memory(2 * tensor.ByteSize())  # its copy, and its bytes
        piece.graph.initializer.append(tensor)
        stream.write(piece.SerializeToString())


def check_model_size(model: ModelProto) -> None:
    """SplitError (rule ``limit``) for a model bigger than the limits allow, counted from
    what it stores before any work starts: a node asking for more parts than ``max_parts``
    (:func:`check_part_counts`), or more nodes than ``max_nodes`` once each call of a local
    function counts the nodes of its body, at any depth (:func:`expanded_node_count`)."""
    _Survey.of(model).check_size(model)


def check_node_count(model: ModelProto) -> None:
    """SplitError (rule ``limit``) for a model of more nodes than ``max_nodes``, each call of
    a local function counting the nodes of its body, at any depth."""
    check_node_total(expanded_node_count(model, cap=current_limits().max_nodes + 1))


def check_part_counts(model: ModelProto) -> None:
    """SplitError (rule ``limit``) for a Split or SplitToSequence node listing or asking for
    more parts than the ``max_parts`` limit.

    Only counts the model stores are read (outputs, ``num_outputs``, the ``split``
    attribute, the dims of a constant ``split`` input), so nothing big is allocated whatever
    the node asks for. The model's view, which finds a constant ``split`` input by ONNX's
    scoping, is read only where a node has such an input.
    """
    limit = current_limits().max_parts
    split_inputs = False
    for position, proto in enumerate(model_graphs(model)):
        for node in proto.node:
            if not is_split_node(node):
                continue
            asked = _stored_part_count(node)
            if asked > limit:  # the view names where it lies (its scopes, in the same order)
                _check_asked(node, ModelView.read(model).scopes[position].label, asked, limit)
            split_inputs = split_inputs or _has_split_input(node)
    if split_inputs:
        _check_split_input_lengths(model, limit)


def _stored_part_count(node: NodeProto) -> int:
    """The most parts a Split or SplitToSequence node asks for by what it stores: its
    outputs, ``num_outputs``, the length of its ``split`` attribute."""
    asked = len(node.output)
    for attribute in node.attribute:
        if attribute.name == "num_outputs" and attribute.type == AttributeProto.INT:
            asked = max(asked, attribute.i)
        if attribute.name == "split" and attribute.type == AttributeProto.INTS:
            asked = max(asked, len(attribute.ints))
    return asked


def _has_split_input(node: NodeProto) -> bool:
    return len(node.input) > 1 and node.input[1] != ""


def _check_split_input_lengths(model: ModelProto, limit: int) -> None:
    """:func:`_check_asked` for the length of each constant ``split`` input, found by the
    model's view."""
    for site in ModelView.read(model).split_nodes():
        split = site.input_value(1)
        length = 0 if split is None else split.constant_length() or 0
        _check_asked(site.proto, site.scope.label, length, limit)


@dataclass
class _Survey:
    """What one walk over every graph and function body of a model finds, for the checks of
    :func:`load_model` and :func:`check_model_size`: the model is read once for all of them,
    not once per check.

    The walk takes the graphs in no particular order, so each problem it finds is told by
    the function that finds the first one in the model's order (:func:`check_part_counts`,
    :func:`_graph_problem`, :func:`~splitops.onnx.model._walk.iter_tensors`): the message is
    the one those checks give alone.
    """

    #: Whether a node holds graphs under one attribute name twice.
    graphs_twice: bool = False
    #: The nodes stored, in every graph and function body (calls not expanded).
    nodes: int = 0
    #: Whether a Split or SplitToSequence node asks for more parts than ``max_parts``.
    parts_over: bool = False
    #: Whether a Split or SplitToSequence node has a ``split`` input.
    split_inputs: bool = False
    #: Every tensor the model stores (those of
    #: :func:`~splitops.onnx.model._walk.iter_tensors`, in another order).
    tensors: list[TensorProto] = dataclasses.field(default_factory=list)

    @classmethod
    def of(cls, model: ModelProto) -> _Survey:
        survey = cls()
        limit = current_limits().max_parts
        tensors = survey.tensors
        nodes = 0
        pending: list[GraphProto | FunctionProto] = [model.graph, *model.functions]
        while pending:
            proto = pending.pop()
            if isinstance(proto, GraphProto):
                tensors.extend(proto.initializer)
                for sparse in proto.sparse_initializer:
                    tensors += (sparse.values, sparse.indices)
            for node in proto.node:
                nodes += 1
                if is_split_node(node):
                    survey.parts_over = survey.parts_over or _stored_part_count(node) > limit
                    survey.split_inputs = survey.split_inputs or _has_split_input(node)
                if node.attribute:
                    survey._read_attributes(node, pending)
        survey.nodes = nodes
        return survey

    def _read_attributes(self, node: NodeProto, graphs: list[GraphProto | FunctionProto]) -> None:
        """Add the graphs ``node`` holds in its attributes to ``graphs``, and keep the tensors
        it holds: those :func:`~splitops.onnx.model._walk.graph_attributes` and
        :func:`~splitops.onnx.model._walk.iter_tensors` find, read from the fields each
        attribute has (one call) rather than asked field by field."""
        tensors = self.tensors
        places: list[tuple[str, int]] = []
        for attribute in node.attribute:
            kind = attribute.type
            if kind == AttributeProto.TENSOR:
                tensors.append(attribute.t)
            elif kind == AttributeProto.SPARSE_TENSOR:
                tensors += (attribute.sparse_tensor.values, attribute.sparse_tensor.indices)
            for field, value in attribute.ListFields():
                number = field.number
                if number == _GRAPH:
                    places.append((attribute.name, -1))
                    graphs.append(value)
                elif number == _GRAPHS:
                    places += ((attribute.name, k) for k in range(len(value)))
                    graphs.extend(value)
                elif number == _TENSORS:
                    tensors.extend(value)
                elif number == _SPARSE_TENSORS:
                    for sparse in value:
                        tensors += (sparse.values, sparse.indices)
        if len(places) > 1 and len(set(places)) < len(places):
            self.graphs_twice = True

    def check_size(self, model: ModelProto) -> None:
        """:func:`check_model_size`, from what the walk found."""
        limit = current_limits().max_parts
        if self.parts_over:
            check_part_counts(model)
        if self.split_inputs:
            _check_split_input_lengths(model, limit)
        if model.functions:
            check_node_count(model)
        else:
            check_node_total(self.nodes)

    def stored_tensors(self, model: ModelProto) -> list[TensorProto]:
        """The tensors the model stores, in the order of
        :func:`~splitops.onnx.model._walk.iter_tensors` where the order tells (a problem to
        report first, external data to read in order)."""
        limit = current_limits().max_tensor_elements
        if any(
            t.data_location == TensorProto.EXTERNAL or tensor_problem(t, limit)
            for t in self.tensors
        ):
            return list(iter_tensors(model))
        return self.tensors


#: The numbers of the fields of ``AttributeProto`` that hold graphs or tensors.
_GRAPH = AttributeProto.DESCRIPTOR.fields_by_name["g"].number
_GRAPHS = AttributeProto.DESCRIPTOR.fields_by_name["graphs"].number
_TENSORS = AttributeProto.DESCRIPTOR.fields_by_name["tensors"].number
_SPARSE_TENSORS = AttributeProto.DESCRIPTOR.fields_by_name["sparse_tensors"].number


def _check_asked(node: NodeProto, where: str, asked: int, limit: int) -> None:
    if asked > limit:
        raise SplitError(
            f"node {node_label(node)!r} ({node.op_type}) in {where} asks for {asked} parts; "
            f"splitops makes at most {limit} (the max_parts limit), so that a hostile file "
            "cannot exhaust memory.",
            rule=Rule.LIMIT,
            hint="Raise the limit with --max-parts N (splitops.limits(max_parts=N)) if the "
            "model really needs it.",
        )


def _parse(data: bytes, prefix: str) -> tuple[ModelProto, bool]:
    """The model ``data`` holds, and whether its text is known to be sound
    (:func:`_sound_text`)."""
    for magic, what in _OTHER_FORMATS.items():
        if data.startswith(magic):
            raise ModelLoadError(f"{prefix}: it is {what}, not an ONNX model.")
    reserve_memory(len(data))
    sound = _sound_text(data)
    model = ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as error:
        raise ModelLoadError(
            f"{prefix}: it is not an ONNX model, or it is truncated ({error})."
        ) from error
    if model.ir_version < 1 or not model.HasField("graph"):
        raise ModelLoadError(
            f"{prefix}: it is not an ONNX model, or it is truncated (no IR version or no graph "
            "in its protobuf)."
        )
    return model, sound


def _sound_text(data: bytes) -> bool:
    """Whether ``data`` is known to hold UTF-8 in every text field onnx knows and no field
    that onnx does not know (so no protobuf group): what :func:`_text_problem` looks for,
    told by protobuf's C++ parser at its speed rather than field by field in Python.

    ``data`` is parsed once more as a model of the same schema whose text fields the parser
    checks (:func:`_utf8_checking_model`), and measured with and without the fields it does
    not know (weights left out: measuring serializes). ``False`` says nothing: the model's
    fields are then read one by one. The copy is gone before the model itself is parsed, so
    the memory a load needs does not grow.
    """
    checking = _utf8_checking_model()
    if checking is None:
        return False
    copy = checking()
    try:
        copy.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError):
        return False
    for tensor in copy.graph.initializer:
        tensor.ClearField("raw_data")
    size = copy.ByteSize()
    copy.DiscardUnknownFields()
    return bool(copy.ByteSize() == size)


@functools.cache
def _utf8_checking_model() -> type[Message] | None:
    """A message class of onnx's ``ModelProto`` schema whose parser refuses text fields that
    are not UTF-8 (the file declared at edition 2023, whose text fields are checked; onnx's
    proto2 file leaves them unchecked), or ``None`` where this protobuf cannot build one.

    Built once per process: a schema, not a model (a class built per call would leave a
    reference cycle per load).
    """
    file = descriptor_pb2.FileDescriptorProto()
    try:
        ModelProto.DESCRIPTOR.file.CopyToProto(file)
        if file.dependency:
            return None
        file.syntax = "editions"
        file.edition = descriptor_pb2.EDITION_2023
        features = file.options.features
        features.utf8_validation = descriptor_pb2.FeatureSet.VERIFY
        # proto2's ways: unknown enum values kept aside, repeated numbers unpacked unless
        # a field says packed.
        features.enum_type = descriptor_pb2.FeatureSet.CLOSED
        features.repeated_field_encoding = descriptor_pb2.FeatureSet.EXPANDED
        pending = list(file.message_type)
        while pending:
            message = pending.pop()
            pending.extend(message.nested_type)
            for entry in message.field:
                if entry.label == entry.LABEL_REQUIRED:
                    return None
                if entry.options.HasField("packed"):
                    packed = entry.options.packed
                    entry.options.ClearField("packed")
                    entry.options.features.repeated_field_encoding = (
                        descriptor_pb2.FeatureSet.PACKED
                        if packed
                        else descriptor_pb2.FeatureSet.EXPANDED
                    )
        pool = descriptor_pool.DescriptorPool()
        pool.Add(file)
        found: type[Message] = message_factory.GetMessageClass(
            pool.FindMessageTypeByName(ModelProto.DESCRIPTOR.full_name)
        )
    except Exception:  # a protobuf without editions: the fields are read one by one
        return None
    return found


def _text_problem(model: ModelProto) -> str | None:
    """A text field that is not UTF-8 (protobuf hands such a field over as ``bytes``), or a
    protobuf group among the fields this onnx does not know: no ONNX field is a group, and
    onnx's own parser refuses what Python's keeps (a group holding a field number 0)."""
    return _field_problem(model, "model")


def _field_problem(message: Message, path: str) -> str | None:
    if any(field.wire_type == _START_GROUP for field in UnknownFieldSet(message)):
        return (
            f"{path} holds a protobuf group, which no ONNX field is: the file is damaged or forged."
        )
    for field, value in message.ListFields():
        where = f"{path}.{field.name}"
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            items = value if _repeated(field) else [value]
            for index, item in enumerate(items):
                found = _field_problem(item, f"{where}[{index}]" if _repeated(field) else where)
                if found:
                    return found
        elif field.type == FieldDescriptor.TYPE_STRING:
            for item in value if _repeated(field) else [value]:
                if isinstance(item, bytes):
                    return (
                        f"{where} is not UTF-8 text ({item[:40]!r}): the file is damaged or forged."
                    )
    return None


#: The wire type of a protobuf group's start.
_START_GROUP = 3


def _repeated(field: FieldDescriptor) -> bool:
    repeated: bool = field.is_repeated
    return repeated


def _graph_problem(model: ModelProto) -> str | None:
    """A node holding graphs under one attribute name twice: which graph a place such as
    ``main/if.then_branch`` names would be ambiguous, and onnx's inference takes both."""
    pending: list[onnx.GraphProto | onnx.FunctionProto] = [model.graph, *model.functions]
    while pending:
        for node in pending.pop().node:
            places: set[tuple[str, int]] = set()
            for name, k, graph in graph_attributes(node):
                if (name, k) in places:
                    return (
                        f"node '{node_label(node)}' ({node.op_type}) gives the attribute "
                        f"{name!r} twice, each holding a graph: the file is damaged or forged."
                    )
                places.add((name, k))
                pending.append(graph)
    return None


def _function_problem(model: ModelProto) -> str | None:
    """A local function defined twice, or one that calls itself (directly or not)."""
    keys = [(f.domain, f.name, f.overload) for f in model.functions]
    seen: set[tuple[str, str, str]] = set()
    for key in keys:
        if key in seen:
            return f"the local function {_function_name(key)} is defined twice."
        seen.add(key)
    calls = {
        (f.domain, f.name, f.overload): {
            (node.domain, node.op_type, node.overload)
            for proto in graphs_below(f)
            for node in proto.node
        }
        & seen
        for f in model.functions
    }
    for key in keys:
        cycle = _cycle_from(key, calls, [])
        if cycle:
            names = " -> ".join(_function_name(k) for k in cycle)
            return (
                f"the local function {_function_name(key)} calls itself ({names}): "
                "ONNX functions may not recurse."
            )
    return None


def _cycle_from(
    key: tuple[str, str, str],
    calls: dict[tuple[str, str, str], set[tuple[str, str, str]]],
    path: list[tuple[str, str, str]],
) -> list[tuple[str, str, str]] | None:
    if key in path:
        return [*path[path.index(key) :], key]
    for callee in sorted(calls.get(key, ())):
        found = _cycle_from(callee, calls, [*path, key])
        if found:
            return found
    return None


def _function_name(key: tuple[str, str, str]) -> str:
    domain, name, overload = key
    return f"{domain}.{name}" + (f" (overload {overload!r})" if overload else "")


def _tensor_problem(tensors: Iterable[TensorProto]) -> str | None:
    """A stored tensor that cannot be read as its dims and type claim."""
    limit = current_limits().max_tensor_elements
    for tensor in tensors:
        problem = tensor_problem(tensor, limit)
        if problem:
            return f"tensor {tensor.name!r}: {problem}."
    return None


def _load_external_data(
    tensors: Iterable[TensorProto],
    folder: DataFolder,
    *,
    read: Callable[[TensorProto], bool],
) -> None:
    """Check the tensors kept in external data, then read each that ``read`` names into its
    ``raw_data``.

    Every tensor's bytes are counted from its element type and dims before any file is
    opened, and the total read is held against the ``max_external_bytes`` limit; each file is
    checked by its status before it is opened (only a regular file is opened), and again once
    open, where its real place and its links are read from the opened file.
    """
    claims = []
    for tensor in tensors:
        claim = external_claim(tensor, folder.prefix)
        claims.append((tensor, folder.file(claim), claim, read(tensor)))
    total = sum(claim.length for *_, claim, reading in claims if reading)
    limit = current_limits().max_external_bytes
    if total > limit:
        raise ModelLoadError(
            f"{folder.prefix}: its tensors claim {total} bytes of external data in all, over the "
            f"max_external_bytes limit of {limit}. Raise it with --max-external-bytes N "
            "(splitops.limits(max_external_bytes=N)) if you trust the model."
        )
    for tensor, _, claim, reading in claims:
        with folder.opened(claim) as stream:
            if not reading:
                continue
            # The bytes read, and their copy in raw_data: where memory lacks, a MemoryError
            # now rather than protobuf's crash.
            reserve_memory(2 * claim.length)
            stream.seek(claim.offset)
            data = stream.read(claim.length)
        if len(data) != claim.length:
            raise ModelLoadError(f"{claim.where}, which changed while it was read.")
        tensor.raw_data = data
        tensor.data_location = TensorProto.DEFAULT
        del tensor.external_data[:]


@dataclass(frozen=True)
class ExternalClaim:
    """Where a tensor says its data lies: a file, and the bytes of it."""

    location: str
    offset: int
    #: The bytes its dims need as ONNX stores them (a ``length`` entry must say the same).
    length: int
    #: How messages name the tensor and its place: ``cannot load m.onnx: tensor 'w' keeps
    #: its data in 'w.bin'``.
    where: str


def external_claim(tensor: TensorProto, prefix: str) -> ExternalClaim:
    """Where ``tensor`` (kept in external data) says its data lies, or a
    :class:`~splitops.ModelLoadError` (``prefix`` in front) for a location that is not text,
    an offset or length that is not a whole number, a length its dims do not need, or
    elements of no fixed size. The file itself is not looked at."""
    entries = {entry.key: entry.value for entry in tensor.external_data}
    location = entries.get("location", "")
    if not isinstance(location, str):
        raise ModelLoadError(
            f"{prefix}: tensor {tensor.name!r} keeps its data at a location that is not "
            f"UTF-8 text ({location[:40]!r})."
        )
    shown = location if len(location) <= 80 else f"{location[:60]}...({len(location)} chars)"
    where = f"{prefix}: tensor {tensor.name!r} keeps its data in {shown!r}"
    offset = _bound(entries, "offset", where) or 0
    length = _bound(entries, "length", where)
    needed = _external_bytes(tensor, where)
    if length is not None and length != needed:
        raise ModelLoadError(
            f"{where}, with length {length}, but its dims {list(tensor.dims)} need {needed} bytes."
        )
    return ExternalClaim(location, offset, needed, where)


def _external_bytes(tensor: TensorProto, where: str) -> int:
    """The bytes a tensor's dims need as ONNX stores them (sub-byte types packed)."""
    count = 1
    for dim in tensor.dims:
        count *= dim
    needed = stored_bytes(tensor.data_type, count)
    if needed is None:
        raise ModelLoadError(
            f"{where}, but its elements are {element_name(tensor.data_type)}, which have no "
            "fixed size: ONNX keeps strings in the model (string_data), and neither onnx nor "
            "onnxruntime reads them from external data. Save the tensor inside the model."
        )
    return needed


def _external_file(folder: Path, location: str, where: str, *, trust: bool) -> Path:
    if not location:
        raise ModelLoadError(f"{where}: the location is empty.")
    if "\0" in location:
        raise ModelLoadError(f"{where}, a path holding a NUL character, which no file name can.")
    if not trust:
        if _is_absolute(location):
            raise ModelLoadError(
                f"{where}, an absolute path: external data must lie in the model's folder. "
                f"{_TRUST_HINT}"
            )
        if _climbs(location):
            raise ModelLoadError(
                f"{where}, which climbs out with '..': external data must lie in the model's "
                f"folder. {_TRUST_HINT}"
            )
    return folder / location


def leaves_folder(location: str) -> bool:
    """Whether an external-data location names a place outside the model's folder by its
    text (an absolute path, or one that climbs with ``..``): one that only a trusted model
    may name."""
    return _is_absolute(location) or _climbs(location)


def _is_absolute(location: str) -> bool:
    return PurePosixPath(location).is_absolute() or PureWindowsPath(location).is_absolute()


def _climbs(location: str) -> bool:
    return ".." in re.split(r"[\\/]", location)


@dataclass(frozen=True)
class DataFolder:
    """The folder a model file keeps its external data in, and how each of its files is
    opened: checked as :func:`load_model` checks it, every time."""

    #: The model's folder, resolved.
    folder: Path
    #: The model file's identity (device, inode): no tensor's data may be the model itself.
    model: tuple[int, int]
    #: The start of every message: ``cannot load <model file>``.
    prefix: str
    #: Whether locations outside :attr:`folder` are followed (``--trust-external-data``).
    trust: bool

    def file(self, claim: ExternalClaim) -> Path:
        """The file ``claim`` names, or a :class:`~splitops.ModelLoadError` for a location
        that no file can have or (unless trusted) that lies outside the folder by its text."""
        return _external_file(self.folder, claim.location, claim.where, trust=self.trust)

    @contextlib.contextmanager
    def opened(self, claim: ExternalClaim) -> Iterator[BinaryIO]:
        """The file ``claim`` names, open for reading once it is known to be a regular file
        that holds the claim's bytes, in the model's folder unless trusted, not the model
        itself, and (unless trusted) of one link only.

        The file's status is read before it is opened, so that a FIFO or a device (or a link
        to one) is refused without opening it; the opened file is checked again (a file
        swapped in between is refused too, and ``O_NONBLOCK`` keeps a FIFO from blocking the
        open).
        """
        trust, where, file = self.trust, claim.where, self.file(claim)
        try:
            status = os.stat(file)
        except FileNotFoundError:
            raise ModelLoadError(f"{where}, which does not exist beside the model.") from None
        except (OSError, ValueError) as error:
            raise ModelLoadError(f"{where}, which cannot be read: {_reason(error)}.") from error
        if not trust:
            try:
                _check_inside(Path(os.path.realpath(file)), self.folder, where)
            except ModelLoadError:
                raise
            except OSError:
                # A link swapped for a file while it was resolved: the place read from the
                # opened file below is the one that counts.
                pass
        _check_data_status(status, where, self.model, trust=trust)
        try:
            descriptor = os.open(file, _READ_FLAGS)
        except FileNotFoundError:
            raise ModelLoadError(f"{where}, which does not exist beside the model.") from None
        except OSError as error:
            raise ModelLoadError(f"{where}, which cannot be read: {_reason(error)}.") from error
        with os.fdopen(descriptor, "rb") as stream:
            opened = os.fstat(descriptor)
            if not trust:
                _check_inside(_opened_path(descriptor, file), self.folder, where)
            _check_data_status(opened, where, self.model, trust=trust)
            offset, length = claim.offset, claim.length
            if offset + length > opened.st_size:
                raise ModelLoadError(
                    f"{where}, which is too short: offset {offset} and length {length} lie past "
                    f"its end ({opened.st_size} bytes; a truncated data file?)."
                )
            yield stream


def _check_inside(real: Path, folder: Path, where: str) -> None:
    if not real.is_relative_to(folder):
        raise ModelLoadError(
            f"{where}, which resolves to {real}, outside the model's folder. {_TRUST_HINT}"
        )


def _check_data_status(
    status: os.stat_result, where: str, model_identity: tuple[int, int], *, trust: bool
) -> None:
    """Refuse a data file by its status: not a regular file, the model itself, or (unless
    trusted) a file with other hard links.

    A hard link is the file itself under another name, and nothing tells where the other
    names lie without searching every folder: a link in the model's folder to a file outside
    it passes every check by path. So a file of more than one link is refused unless the
    model is trusted; a copy of it (``cp``) loads.
    """
    if not stat.S_ISREG(status.st_mode):
        raise ModelLoadError(
            f"{where}, which is not a regular file (a folder, a device or a pipe)."
        )
    if _identity(status) == model_identity:
        raise ModelLoadError(f"{where}, which is the model file itself.")
    if not trust and status.st_nlink > 1:
        raise ModelLoadError(
            f"{where}, which has {status.st_nlink} hard links: the others may lie outside the "
            "model's folder, and splitops cannot tell where. Copy the data file instead of "
            "linking it, or pass --trust-external-data if you trust the model."
        )


def _opened_path(descriptor: int, file: Path) -> Path:
    """Where the file open at ``descriptor`` really is: read from the descriptor itself where
    the system tells (Linux's ``/proc/self/fd``), else resolved from its path just opened."""
    if sys.platform.startswith("linux"):
        try:
            return Path(os.readlink(f"/proc/self/fd/{descriptor}"))
        except OSError:
            pass
    return file.resolve()


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


def _bound(entries: dict[str, str], key: str, where: str) -> int | None:
    if key not in entries:
        return None
    text = entries[key]
    if not isinstance(text, str) or not re.fullmatch(r"[0-9]{1,19}", text):
        raise ModelLoadError(f"{where}, with {key} {text!r}: it must be a whole number >= 0.")
    return int(text)
