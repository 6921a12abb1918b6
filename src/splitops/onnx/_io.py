"""Load and save ONNX models safely, whoever wrote them.

:func:`load_model` reads a model file without trusting it: external-data paths may not leave
the model's folder (absolute paths, ``..`` and symlinks pointing out are refused, as onnx
itself failed to do before CVE-2024-27318 and CVE-2024-27319), a file over protobuf's 2 GB
limit, an empty, truncated or non-ONNX file, and a Split asking for absurdly many parts are
refused with a :class:`~splitops.ModelLoadError` that says what is wrong.

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
import os
import re
import uuid
from pathlib import Path, PurePosixPath, PureWindowsPath

import onnx
from google.protobuf.message import DecodeError
from onnx import AttributeProto, ModelProto, TensorProto

from ..core import ModelLoadError, Rule, SplitError
from ._graphs import iter_tensors, split_nodes
from ._node import node_label

__all__ = ["MAX_MODEL_BYTES", "MAX_MODEL_PARTS", "check_part_counts", "load_model", "save_model"]

#: Protobuf cannot hold a message of 2 GiB or more: bigger models keep weights outside.
MAX_MODEL_BYTES = 2**31 - 1

#: The most parts a Split node of a loaded model may ask for. The spec allows 2**31 - 1, but a
#: node asking for a billion parts is an attack on memory, not a model; real models ask for
#: a few hundred at most, and planning a million parts takes 8 MB.
MAX_MODEL_PARTS = 2**20

#: First bytes of files people pass by mistake, and what they are.
_OTHER_FORMATS = {
    b"\x93NUMPY": "a NumPy .npy array",
    b"PK\x03\x04": "a zip archive (.npz, PyTorch .pt, ...)",
    b"\x80": "a Python pickle",
    b"\x89HDF": "an HDF5 file (Keras .h5, ...)",
}


def load_model(path: str | os.PathLike[str], *, trust_external_data: bool = False) -> ModelProto:
    """Read an ONNX model file, with its external data, refusing anything unsafe.

    External data must lie in the model's folder (or below it) unless
    ``trust_external_data=True``, which lifts that one check for models you trust.
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
    try:
        check_part_counts(model)
    except SplitError as error:
        raise ModelLoadError(f"{prefix}: {error}") from error
    _load_external_data(model, file.resolve().parent, prefix, trust=trust_external_data)
    return model


def save_model(model: ModelProto, path: str | os.PathLike[str]) -> None:
    """Write ``model`` to ``path``; weights go to ``<name>.data`` beside it past 2 GB.

    The model is written under a temporary name in the same folder, then renamed: ``path``
    never holds a partial file, even when writing fails half way.
    """
    file = Path(path)
    external = model.ByteSize() > MAX_MODEL_BYTES
    temporary = file.with_name(f".{file.name}.{uuid.uuid4().hex}.tmp")
    try:
        onnx.save_model(
            model, temporary, save_as_external_data=external, location=f"{file.name}.data"
        )
        os.replace(temporary, file)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def check_part_counts(model: ModelProto) -> None:
    """SplitError for a Split node listing or asking for more than :data:`MAX_MODEL_PARTS`
    parts.

    Only counts stored in the model are read (outputs, ``num_outputs``, the ``split``
    attribute), so nothing big is allocated whatever the node asks for.
    """
    for body, node in split_nodes(model):
        asked = [len(node.output)]
        for attribute in node.attribute:
            if attribute.name == "num_outputs" and attribute.type == AttributeProto.INT:
                asked.append(attribute.i)
            if attribute.name == "split" and attribute.type == AttributeProto.INTS:
                asked.append(len(attribute.ints))
        if max(asked) > MAX_MODEL_PARTS:
            raise SplitError(
                f"node {node_label(node)!r} ({node.op_type}) in {body.label} asks for "
                f"{max(asked)} parts; splitops refuses more than {MAX_MODEL_PARTS} parts in a "
                "model, to keep a hostile file from exhausting memory.",
                rule=Rule.LIMIT,
                hint="Split in stages if the model really needs it.",
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


def _load_external_data(model: ModelProto, folder: Path, prefix: str, *, trust: bool) -> None:
    for tensor in iter_tensors(model):
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
        entries = {entry.key: entry.value for entry in tensor.external_data}
        location = entries.get("location", "")
        where = f"{prefix}: tensor {tensor.name!r} keeps its data in {location!r}"
        file = _external_file(folder, location, where, trust=trust)
        offset, length = _bound(entries, "offset", where), _bound(entries, "length", where)
        try:
            with file.open("rb") as stream:
                available = os.fstat(stream.fileno()).st_size - (offset or 0)
                if available < 0 or (length is not None and length > available):
                    raise ModelLoadError(
                        f"{where}, which is too short: offset {offset or 0} and length "
                        f"{length} lie past its end (a truncated data file?)."
                    )
                stream.seek(offset or 0)
                tensor.raw_data = stream.read(-1 if length is None else length)
        except ModelLoadError:
            raise
        except OSError as error:
            raise ModelLoadError(f"{where}, which cannot be read: {error.strerror}.") from error
        tensor.data_location = TensorProto.DEFAULT
        del tensor.external_data[:]


def _external_file(folder: Path, location: str, where: str, *, trust: bool) -> Path:
    hint = "Move the data beside the model, or pass --trust-external-data if you trust it."
    if not location:
        raise ModelLoadError(f"{where}: the location is empty.")
    if not trust:
        if PurePosixPath(location).is_absolute() or PureWindowsPath(location).is_absolute():
            raise ModelLoadError(
                f"{where}, an absolute path: external data must lie in the model's folder. {hint}"
            )
        if ".." in re.split(r"[\\/]", location):
            raise ModelLoadError(
                f"{where}, which climbs out with '..': external data must lie in the model's "
                f"folder. {hint}"
            )
    file = folder / location
    if not trust and not file.resolve().is_relative_to(folder):
        raise ModelLoadError(
            f"{where}, a link that resolves to {file.resolve()}, outside the model's folder. {hint}"
        )
    if not file.is_file():
        raise ModelLoadError(f"{where}, which does not exist beside the model.")
    return file


def _bound(entries: dict[str, str], key: str, where: str) -> int | None:
    if key not in entries:
        return None
    text = entries[key]
    if not text.isdigit():
        raise ModelLoadError(f"{where}, with {key} {text!r}: it must be a whole number >= 0.")
    return int(text)
