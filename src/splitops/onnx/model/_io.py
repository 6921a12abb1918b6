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

import os
import re
import stat
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet
from onnx import AttributeProto, ModelProto, TensorProto

from ..._files import replacing, temporary_sibling
from ...core import ModelLoadError, Rule, SplitError, current_limits
from ._node import node_label
from ._types import tensor_problem
from ._view import ModelView
from ._walk import (
    copy_without,
    function_body,
    graph_attributes,
    iter_tensors,
    with_subgraphs,
)

__all__ = ["MAX_MODEL_BYTES", "check_part_counts", "load_model", "save_model"]

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
    path: str | os.PathLike[str],
    *,
    trust_external_data: bool = False,
    load_external_data: bool = True,
) -> ModelProto:
    """Read an ONNX model file, with its external data, refusing anything unsafe.

    External data must lie in the model's folder (or below it) unless
    ``trust_external_data=True``, which lifts that one check for models you trust. With
    ``load_external_data=False`` its locations are checked but nothing is read: tensors keep
    their references (enough for tools that read shapes, not weights).
    """
    file = Path(path)
    prefix = f"cannot load {file}"
    if not file.exists():
        raise ModelLoadError(f"{prefix}: no such file.")
    if not file.is_file():
        raise ModelLoadError(f"{prefix}: it is not a regular file (a folder or a device).")
    size = file.stat().st_size
    if size == 0:
        raise ModelLoadError(f"{prefix}: the file is empty (0 bytes).")
    if size > MAX_MODEL_BYTES:
        raise ModelLoadError(
            f"{prefix}: the file is {size} bytes, over protobuf's 2 GB limit for one message. "
            "Save the model with its weights as external data "
            "(onnx.save_model(model, path, save_as_external_data=True))."
        )
    try:
        data = file.read_bytes()
    except OSError as error:
        raise ModelLoadError(f"{prefix}: {error.strerror or error}.") from error
    model = _parse(data, prefix)
    problem = _text_problem(model) or _function_problem(model) or _graph_problem(model)
    if not problem:
        try:
            check_part_counts(model)
        except SplitError as error:
            raise ModelLoadError(f"{prefix}: {error}") from error
        problem = _tensor_problem(model)
    if problem:
        raise ModelLoadError(f"{prefix}: {problem}")
    _load_external_data(model, file, prefix, trust=trust_external_data, read=load_external_data)
    return model


def save_model(model: ModelProto, path: str | os.PathLike[str]) -> None:
    """Write ``model`` to ``path``, whole or not at all (a temporary file beside it, renamed
    over ``path``), creating the folders above it where missing; weights go to
    ``<name>.data`` beside it past protobuf's 2 GB. An ``OSError`` names ``path``.

    A model under 2 GB is written as the model without its initializers, then each
    initializer as a message of its own: protobuf reads concatenated messages as one, merged
    (repeated fields appended in order), so any reader loads the same model, and no more
    than one weight is serialized at a time. Serialized whole, a model of 1 GiB of weights
    took 3 GiB more memory to write.
    """
    file = Path(path)
    shell = copy_without(model, "graph")
    shell.graph.CopyFrom(copy_without(model.graph, "initializer"))
    # Summed piece by piece: the model's own ByteSize() serializes it whole to count.
    size = shell.ByteSize() + sum(tensor.ByteSize() for tensor in model.graph.initializer)
    if size > MAX_MODEL_BYTES:
        with temporary_sibling(file) as temporary:
            onnx.save_model(
                model, temporary, save_as_external_data=True, location=f"{file.name}.data"
            )
        return
    with replacing(file) as stream:
        stream.write(shell.SerializeToString())
        for tensor in model.graph.initializer:
            piece = ModelProto()
            piece.graph.initializer.append(tensor)
            stream.write(piece.SerializeToString())


def check_part_counts(model: ModelProto) -> None:
    """SplitError (rule ``limit``) for a Split or SplitToSequence node listing or asking for
    more parts than the ``max_parts`` limit.

    Only counts the model stores are read (outputs, ``num_outputs``, the ``split``
    attribute, the dims of a constant ``split`` input), so nothing big is allocated whatever
    the node asks for.
    """
    limit = current_limits().max_parts
    for site in ModelView.read(model).split_nodes():
        node, body = site.proto, site.scope
        asked = [len(node.output)]
        for attribute in node.attribute:
            if attribute.name == "num_outputs" and attribute.type == AttributeProto.INT:
                asked.append(attribute.i)
            if attribute.name == "split" and attribute.type == AttributeProto.INTS:
                asked.append(len(attribute.ints))
        split = site.input_value(1)
        asked.append(0 if split is None else split.constant_length() or 0)
        if max(asked) > limit:
            raise SplitError(
                f"node {node_label(node)!r} ({node.op_type}) in {body.label} asks for "
                f"{max(asked)} parts; splitops makes at most {limit} (the max_parts limit), so "
                "that a hostile file cannot exhaust memory.",
                rule=Rule.LIMIT,
                hint="Raise the limit with --max-parts N (splitops.limits(max_parts=N)) if the "
                "model really needs it.",
            )


def _parse(data: bytes, prefix: str) -> ModelProto:
    for magic, what in _OTHER_FORMATS.items():
        if data.startswith(magic):
            raise ModelLoadError(f"{prefix}: it is {what}, not an ONNX model.")
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
    return model


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
            for body in with_subgraphs(function_body(f))
            for node in body.proto.node
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


def _tensor_problem(model: ModelProto) -> str | None:
    """A stored tensor that cannot be read as its dims and type claim."""
    limit = current_limits().max_tensor_elements
    for tensor in iter_tensors(model):
        problem = tensor_problem(tensor, limit)
        if problem:
            return f"tensor {tensor.name!r}: {problem}."
    return None


def _load_external_data(
    model: ModelProto, model_file: Path, prefix: str, *, trust: bool, read: bool
) -> None:
    folder = model_file.resolve().parent
    model_identity = _identity(os.stat(model_file))
    claims = []
    for tensor in iter_tensors(model):
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
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
        needed = _external_bytes(tensor)
        if length is not None and needed is not None and length != needed:
            raise ModelLoadError(
                f"{where}, with length {length}, but its dims {list(tensor.dims)} need {needed} "
                "bytes."
            )
        claims.append((tensor, where, _external_file(folder, location, where, trust=trust),
                       offset, length if length is not None else needed))  # fmt: skip
    total = sum(length or 0 for *_, length in claims)
    limit = current_limits().max_external_bytes
    if read and total > limit:
        raise ModelLoadError(
            f"{prefix}: its tensors claim {total} bytes of external data in all, over the "
            f"max_external_bytes limit of {limit}. Raise it with --max-external-bytes N "
            "(splitops.limits(max_external_bytes=N)) if you trust the model."
        )
    for tensor, where, file, offset, length in claims:
        data = _read_external(
            file, folder, model_identity, where, offset, length, trust=trust, read=read
        )
        if read:
            tensor.raw_data = data
            tensor.data_location = TensorProto.DEFAULT
            del tensor.external_data[:]


def _external_bytes(tensor: TensorProto) -> int | None:
    """The bytes a tensor's dims need, or ``None`` for types not measured in whole bytes."""
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, TypeError, ValueError):
        return None
    if tensor.data_type in (TensorProto.STRING, TensorProto.INT4, TensorProto.UINT4):
        return None
    count = 1
    for dim in tensor.dims:
        count *= dim
    return count * itemsize


def _external_file(folder: Path, location: str, where: str, *, trust: bool) -> Path:
    if not location:
        raise ModelLoadError(f"{where}: the location is empty.")
    if "\0" in location:
        raise ModelLoadError(f"{where}, a path holding a NUL character, which no file name can.")
    if not trust:
        if PurePosixPath(location).is_absolute() or PureWindowsPath(location).is_absolute():
            raise ModelLoadError(
                f"{where}, an absolute path: external data must lie in the model's folder. "
                f"{_TRUST_HINT}"
            )
        if ".." in re.split(r"[\\/]", location):
            raise ModelLoadError(
                f"{where}, which climbs out with '..': external data must lie in the model's "
                f"folder. {_TRUST_HINT}"
            )
    return folder / location


def _read_external(
    file: Path,
    folder: Path,
    model_identity: tuple[int, int],
    where: str,
    offset: int,
    length: int | None,
    *,
    trust: bool,
    read: bool,
) -> bytes:
    """The bytes of one tensor, read from one opened file whose real place is checked (with
    ``read=False``, only checked: nothing is read)."""
    try:
        descriptor = os.open(file, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise ModelLoadError(f"{where}, which does not exist beside the model.") from None
    except OSError as error:
        raise ModelLoadError(f"{where}, which cannot be read: {error.strerror}.") from error
    with os.fdopen(descriptor, "rb") as stream:
        opened = os.fstat(descriptor)
        if not trust:
            real = _opened_path(descriptor, file)
            if not real.is_relative_to(folder):
                raise ModelLoadError(
                    f"{where}, which resolves to {real}, outside the model's folder. {_TRUST_HINT}"
                )
        if not stat.S_ISREG(opened.st_mode):
            raise ModelLoadError(f"{where}, which is not a regular file.")
        if _identity(opened) == model_identity:
            raise ModelLoadError(f"{where}, which is the model file itself.")
        available = opened.st_size - offset
        if available < 0 or (length is not None and length > available):
            raise ModelLoadError(
                f"{where}, which is too short: offset {offset} and length {length} lie past "
                f"its end ({opened.st_size} bytes; a truncated data file?)."
            )
        if not read:
            return b""
        stream.seek(offset)
        data = stream.read(-1 if length is None else length)
        if length is not None and len(data) != length:
            raise ModelLoadError(f"{where}, which changed while it was read.")
        return data


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
