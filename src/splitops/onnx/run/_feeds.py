"""What a model is fed, and what a run writes: arrays read from ``.npy`` files or generated
from the model's declared inputs, and arrays written back as ``.npy`` files.

Every read is bounded before numpy allocates: a ``.npy`` header that claims more elements
than the ``max_input_elements`` limit, or more bytes than its file holds, is refused, and so
are generated inputs that would hold more elements in all. A problem is a
:class:`~splitops.ModelInputError` whose message names the command's options
(``--input NAME=FILE.npy``, ``--dim``), as ``splitops run`` and ``splitops split`` print it.

>>> from onnx import TensorProto, helper
>>> x = helper.make_tensor_value_info("x", TensorProto.INT64, ["batch", 3])
>>> model = helper.make_model(helper.make_graph([], "g", [x], [x]))
>>> feeds, origins = model_feeds(ModelView.read(model), {}, {"batch": 2}, seed=0)
>>> feeds["x"].shape, origins
((2, 3), {'x': 'generated'})
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ..._files import make_folder, replacing
from ...core import ModelInputError, current_limits
from ..model import ModelView, TensorType, ValueType
from ..model.describe import describe_type
from ..model.protobuf import dtype_of_code, element_name, input_types, widened
from .backend import check_feeds

__all__ = ["load_npy", "model_feeds", "write_arrays"]


def model_feeds(
    view: ModelView, given: Mapping[str, str], dims: Mapping[str, int], *, seed: int
) -> tuple[dict[str, np.ndarray[Any, Any]], dict[str, str]]:
    """The arrays to feed the model of ``view``, and where each came from (``from FILE`` or
    ``generated``).

    ``given`` maps an input's name to the ``.npy`` file that holds it; every other input is
    generated from its declared type (:func:`_generated_input`), with each symbolic dim of the
    length ``dims`` gives it, else 1, from a generator seeded with ``seed``. The arrays must
    fit the model's inputs (:func:`~splitops.backend.check_feeds`).
    """
    declared = input_types(view.model, fed=True)
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ModelInputError(
            f"--input {unknown[0]}: the model has no input of that name; its inputs are "
            f"{sorted(declared)}."
        )
    symbols = {
        dim
        for found in declared.values()
        if isinstance(found, TensorType)
        for dim in found.dims or ()
        if isinstance(dim, str)
    }
    unused = sorted(set(dims) - symbols)
    if unused:
        raise ModelInputError(
            f"--dim {unused[0]}: no input has a symbolic dim of that name; the symbols are "
            f"{sorted(symbols) or 'none'}."
        )
    shapes = {
        name: _generated_shape(name, found, dims)
        for name, found in declared.items()
        if name not in given
    }
    total = sum(int(np.prod(shape, dtype=object)) for shape in shapes.values())
    limit = current_limits().max_input_elements
    if total > limit:
        raise ModelInputError(
            f"the generated inputs would have {total} elements in all ({shapes}), over the "
            f"max_input_elements limit of {limit}: give smaller --dim values, raise the limit "
            "with --max-input-elements N, or pass inputs with --input NAME=FILE.npy."
        )
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray[Any, Any]] = {}
    origins = {}
    for name, found in declared.items():
        if name in given:
            array = load_npy(Path(given[name]))
            feeds[name] = array.astype(object) if array.dtype.kind == "U" else array
            origins[name] = f"from {given[name]}"
        else:
            assert isinstance(found, TensorType)  # as _generated_shape found it
            feeds[name] = _generated_input(name, found.element, shapes[name], rng)
            origins[name] = "generated"
    try:
        check_feeds(view.model, feeds)
    except ModelInputError as error:
        name = str(error).split("'")[1] if str(error).startswith("input '") else ""
        where = f"--input {name} ({given[name]}): " if name in given else ""
        raise ModelInputError(f"{where}{error}") from error
    return feeds, origins


def _generated_shape(
    name: str, declared: ValueType | None, dims: Mapping[str, int]
) -> tuple[int, ...]:
    """The shape of a generated input of the type ``declared`` (a negative length as
    written): its declared dims, each symbolic one of the length ``dims`` gives it, else 1."""
    if not isinstance(declared, TensorType) or declared.dims is None:
        raise ModelInputError(
            f"input {name} is {describe_type(declared)}: splitops generates tensors of "
            "known rank only. Pass it with --input NAME=FILE.npy."
        )
    negative = [d for d in declared.dims if isinstance(d, int) and d < 0]
    if negative:
        raise ModelInputError(
            f"input {name} declares the dim {negative[0]}, and no tensor has a negative "
            "length: the model is broken. Fix its declared shape, or pass the input with "
            "--input NAME=FILE.npy."
        )
    return tuple(
        d if isinstance(d, int) else dims.get(d, 1) if isinstance(d, str) else 1
        for d in declared.dims
    )


#: The words generated string inputs are made of.
_WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def _generated_input(
    name: str, code: int, shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray[Any, Any]:
    """Seeded random values of the element type ``code``: whole numbers from -9 to 9 (0 to 9
    unsigned; within the range of a narrower type, such as int4's -8 to 7), bools, words."""
    dtype = dtype_of_code(code)
    if dtype is None:
        raise ModelInputError(
            f"input {name} is of element type {element_name(code)}, which no numpy dtype "
            "holds: splitops cannot make or read one."
        )
    if dtype.kind == "O":
        return rng.choice(np.array(_WORDS, dtype=object), shape)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    low, high = _whole_range(dtype)
    return rng.integers(low, high + 1, shape).astype(np.float32).astype(dtype)


def _whole_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The range of whole numbers, within -9 to 9, that ``dtype`` holds: 0 to 9 unsigned; for
    ml_dtypes' narrow types, the ends it holds exactly (int4: -8 to 7, float4e2m1: -6 to 6)."""
    if dtype.isbuiltin != 2:
        return (0, 9) if dtype.kind == "u" else (-9, 9)
    numbers = np.arange(0 if dtype.name.startswith("uint") else -9, 10)
    exact = numbers[numbers.astype(np.float32).astype(dtype).astype(np.float64) == numbers]
    return int(exact.min()), int(exact.max())


#: The first bytes of every .npy file.
_NPY_MAGIC = b"\x93NUMPY"


def load_npy(file: Path) -> np.ndarray[Any, Any]:
    """The array a ``.npy`` file holds, read without pickles, once its header is found
    within the limits (:func:`_check_npy_header`). Only a regular file is read: it is opened
    without blocking (a FIFO would wait for a writer, for ever) and its type checked on the
    opened file, before a byte is read."""
    try:
        descriptor = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ModelInputError(f"cannot read {file}: no such file.") from None
    except OSError as error:
        raise ModelInputError(f"cannot read {file}: {error.strerror or error}.") from error
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        raise ModelInputError(
            f"cannot read {file}: it is not a regular file (a folder, a device or a pipe)."
        )
    with os.fdopen(descriptor, "rb") as stream:
        magic = stream.read(len(_NPY_MAGIC))
        if magic != _NPY_MAGIC:
            hint = (
                " (it looks like an ONNX model: `splitops run` runs models)"
                if file.suffix == (".onnx")
                else ""
            )
            raise ModelInputError(
                f"cannot read {file}: splitops split takes a NumPy .npy file, and this is none"
                f"{hint}. Save the array with numpy.save."
            )
        stream.seek(0)
        _check_npy_header(file, stream, status.st_size)
        stream.seek(0)
        try:
            array = np.load(stream, allow_pickle=False)
        except (OSError, ValueError, EOFError) as error:
            raise ModelInputError(f"cannot read {file} as a .npy array: {error}") from error
    loaded: np.ndarray[Any, Any] = array
    return loaded


def _check_npy_header(file: Path, stream: BinaryIO, size: int) -> None:
    """Refuse a .npy file whose header claims more elements than the max_input_elements limit,
    or more bytes than the file holds, before numpy allocates them."""
    try:
        version = np.lib.format.read_magic(stream)
        read = {(1, 0): np.lib.format.read_array_header_1_0}.get(
            version, np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = read(stream, max_header_size=10_000)
        header_end = stream.tell()
    except (OSError, ValueError, EOFError, SyntaxError) as error:
        raise ModelInputError(f"cannot read {file} as a .npy array: {error}") from error
    count = 1
    for length in shape:
        count *= length
    limit = current_limits().max_input_elements
    if count > limit:
        raise ModelInputError(
            f"{file} claims an array of {count} elements {shape}, over the max_input_elements "
            f"limit of {limit}. Raise it with --max-input-elements N if the array is real."
        )
    if not dtype.hasobject and size - header_end < count * dtype.itemsize:
        raise ModelInputError(
            f"{file} claims an array of {count} {dtype} elements {shape}, and holds fewer bytes: "
            "it is truncated or forged."
        )


def write_arrays(folder: Path, arrays: list[tuple[str, np.ndarray[Any, Any]]]) -> None:
    """Write each array as ``NAME.npy`` into ``folder`` (created where missing), each whole
    or not at all."""
    make_folder(folder)
    used: set[str] = set()
    for name, array in arrays:
        # Output names are the model author's: keep them to safe file names inside folder.
        safe = base = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "output"
        while safe.lower() in used:
            safe = f"{base}_{len(used)}"
        used.add(safe.lower())
        with replacing(folder / f"{safe}.npy") as stream:
            np.save(stream, _savable(array), allow_pickle=False)


def _savable(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``.npy`` holds no object arrays and none of ml_dtypes' types (bfloat16, float8,
    int4, ...): strings become ``str``, the others :func:`~..model._types.widened` ones."""
    if array.dtype.kind == "O":
        return array.astype(str)
    return widened(array)
