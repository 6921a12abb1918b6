"""Rewrite a model file and leave its weights where they lie.

A Split rewrite reads a model's graph and the small tensors that feed sizes, never its
weights. :func:`rewrite_file` reads a model file without them
(:func:`~splitops.onnx.model._io.load_without_weights`), hands the rest to a rewrite
(:func:`~splitops.lower_model`, :func:`~splitops.convert_model`, any function of a
``ModelProto``), and writes the result with its weights as the input held them:

- **External data stays external**, at the same location relative to the output as it was
  relative to the input. Where the output lies in the input's folder, the output names the
  input's very data files, which are not written. Elsewhere each data file is cloned where
  the file system shares blocks between files (``FICLONE``: btrfs, XFS, bcachefs, ...), and
  otherwise copied by the kernel (``copy_file_range``, which NFS and SMB copy on the server),
  holes kept as holes, or else copied as a stream a MiB at a time. Either way the process
  never holds the weights. A hard link or a symbolic link would be cheaper, but a data file
  of two names or one outside the model's folder is what :func:`load_model` refuses as
  unsafe, and writing through either would write the input's data.
- **Data outside the input's folder** (followed only with ``trust_external_data``) is copied
  into the output's folder under its file's name: onnx and onnxruntime refuse a location
  outside a model's folder, and nothing is written outside the output's folder.
- **The small tensors are read**, wherever they lie (the sizes a Split is cut by, a bias):
  the output holds them inline, as onnx-ir's pass does. onnx's inference and onnxruntime
  read no external data where a node's sizes come from: with them inline, the output runs
  even where the input, holding its Split sizes in a file, did not.
- **Inline weights stay inline**: the main graph's large initializers are set aside before
  the rewrite (it sees stand-ins without data), and each is written into the output from the
  model read, one at a time: the rewrite copies none.
- **Written whole or not at all**: every file is written under a temporary name beside its
  target, and renamed over it once all are complete (the data files first, the model last).

The input's files are never written: a target that is the input's own file is left as it
is, and a file already at a target is replaced by a rename, never written through.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from onnx import ModelProto, TensorProto

from ..._files import temporary_sibling
from ...core import ModelLoadError, report_progress, require_argument
from ._io import (
    MAX_MODEL_BYTES,
    DataFolder,
    ExternalClaim,
    external_claim,
    leaves_folder,
    load_without_weights,
    model_shell,
    pieces_size,
    write_pieces,
)
from ._walk import copy_without, is_large_weight, iter_tensors

__all__ = ["rewrite_file"]

#: Where a stand-in of an inline weight claims its data lies: a location no file has (the
#: loader refuses a NUL in a location), and the weight's index among those set aside.
_SET_ASIDE = "\0splitops-weight-set-aside/{}"

#: The bytes a stream copy moves at a time.
_CHUNK = 2**20

#: ``ioctl(target, FICLONE, source)``: Linux's request to share a file's blocks with another.
_FICLONE = 0x40049409


def rewrite_file(
    model: str | os.PathLike[str],
    output: str | os.PathLike[str],
    rewrite: Callable[[ModelProto], ModelProto],
    *,
    trust_external_data: bool = False,
) -> None:
    """Read the model file ``model`` without its weights, rewrite it with ``rewrite``, and
    write the result to ``output`` with its weights kept as the input kept them: external
    data beside ``output`` at the same relative locations, inline weights inline (see the
    module's documentation).

    ``rewrite`` takes the model and returns the rewritten one; it must not read the main
    graph's large initializers (more than ``SMALL_TENSOR`` elements), which it gets as
    references without data. :func:`~splitops.lower_model` and
    :func:`~splitops.convert_model` read none. The model is checked as
    :func:`~splitops.load_model` checks it (``trust_external_data`` as there), and the
    ``max_external_bytes`` limit counts only what is read.

    >>> import functools, tempfile, pathlib
    >>> import numpy as np, onnx
    >>> from onnx import TensorProto, helper, numpy_helper
    >>> import splitops
    >>> weight = numpy_helper.from_array(np.ones((2048, 4), np.float32), "w")
    >>> graph = helper.make_graph(
    ...     [helper.make_node("MatMul", ["x", "w"], ["y"]),
    ...      helper.make_node("Split", ["y"], ["a", "b"], axis=1, num_outputs=2)], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2048])],
    ...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ab"], [weight])
    >>> source = pathlib.Path(tempfile.mkdtemp()) / "model.onnx"
    >>> onnx.save_model(helper.make_model(graph), source, save_as_external_data=True,
    ...                 location="model.data")
    >>> output = pathlib.Path(tempfile.mkdtemp()) / "lowered.onnx"
    >>> rewrite_file(source, output, functools.partial(splitops.lower_model, target="tract"))
    >>> sorted(path.name for path in output.parent.iterdir())
    ['lowered.onnx', 'model.data']
    """
    require_argument(model, (str, os.PathLike), "rewrite_file", "a path (str or os.PathLike)")
    require_argument(output, (str, os.PathLike), "rewrite_file", "a path (str or os.PathLike)")
    if not callable(rewrite):
        raise TypeError(
            "rewrite_file takes a function of an onnx.ModelProto as its rewrite (lower_model, "
            f"convert_model, ...), not {type(rewrite).__name__}."
        )
    report_progress("reading the model")
    read = load_without_weights(model, trust=trust_external_data)
    assert read.data is not None  # a model read from a file has a folder
    light, aside = _set_inline_weights_aside(read.model)
    result = rewrite(light)
    if not isinstance(result, ModelProto):
        raise TypeError(
            f"rewrite_file's rewrite must return an onnx.ModelProto; it returned "
            f"{type(result).__name__}, and nothing was written."
        )
    report_progress(f"writing {output}")
    _write_with_weights(result, Path(output), read.data, aside)


def _set_inline_weights_aside(model: ModelProto) -> tuple[ModelProto, dict[str, TensorProto]]:
    """A copy of ``model`` whose large inline initializers of the main graph are stand-ins
    without data, and each weight by its stand-in's location; ``model`` itself where it holds
    none."""
    if not any(_inline_weight(tensor) for tensor in model.graph.initializer):
        return model, {}
    light = copy_without(model, "graph")
    light.graph.CopyFrom(copy_without(model.graph, "initializer"))
    aside: dict[str, TensorProto] = {}
    for tensor in model.graph.initializer:
        if not _inline_weight(tensor):
            light.graph.initializer.append(tensor)
            continue
        location = _SET_ASIDE.format(len(aside))
        aside[location] = tensor
        stand_in = light.graph.initializer.add(
            name=tensor.name, data_type=tensor.data_type, data_location=TensorProto.EXTERNAL
        )
        stand_in.dims.extend(tensor.dims)
        stand_in.external_data.add(key="location", value=location)
    return light, aside


def _inline_weight(tensor: TensorProto) -> bool:
    return is_large_weight(tensor) and tensor.data_location != TensorProto.EXTERNAL


def _write_with_weights(
    model: ModelProto, output: Path, data: DataFolder, aside: dict[str, TensorProto]
) -> None:
    """Write ``model``, whose external data lies in ``data``, to ``output``: each data file
    placed beside ``output``, the weights set aside (``aside``) inline."""
    files = _data_files(model, data, aside, output)
    shell = model_shell(model)
    weights = [aside.get(_location(tensor), tensor) for tensor in model.graph.initializer]
    if pieces_size(shell, weights) > MAX_MODEL_BYTES:
        raise OSError(
            errno.EFBIG,
            "the model would be over protobuf's 2 GB limit for one file with the tensors it "
            "holds inline. Save the input with its weights as external data "
            "(onnx.save_model(model, path, save_as_external_data=True)), then rewrite that",
            str(output),
        )
    with contextlib.ExitStack() as written:
        # Entered first, renamed last: the model is written once its data is in place.
        model_file = written.enter_context(temporary_sibling(output))
        for target, claim in files.items():
            if _is_there(data.file(claim), target):
                continue
            with data.opened(claim) as source:
                _copy_file(source, written.enter_context(temporary_sibling(target)), claim.where)
        with model_file.open("wb") as stream:
            write_pieces(stream, shell, weights)


def _data_files(
    model: ModelProto, data: DataFolder, aside: dict[str, TensorProto], output: Path
) -> dict[Path, ExternalClaim]:
    """The data files ``model`` names, by where each lies beside ``output``, and the claim
    that reaches furthest into it (the bytes it must hold).

    A location outside the input's folder (followed only with ``trust_external_data``) is
    renamed to its file's name in the output's folder (numbered where the model or the
    output takes that name), and the file copied there: onnx and onnxruntime refuse a
    location outside a model's folder, and nothing is written outside the output's folder.
    """
    external = [
        tensor
        for tensor in iter_tensors(model)
        if tensor.data_location == TensorProto.EXTERNAL and _location(tensor) not in aside
    ]
    output_place = _place_of(output)
    taken = {_place_of(output.parent / _location(t)) for t in external}
    renamed: dict[str, str] = {}
    files: dict[Path, ExternalClaim] = {}
    for tensor in external:
        claim = external_claim(tensor, data.prefix)
        location = claim.location
        if leaves_folder(location):
            if location not in renamed:
                renamed[location] = _free_name(location, output, taken | {output_place})
                taken.add(_place_of(output.parent / renamed[location]))
            _set_location(tensor, renamed[location])
            location = renamed[location]
        target = _place_of(output.parent / location)
        if target == output_place:
            raise FileExistsError(
                errno.EEXIST,
                f"the model keeps external data in {location!r}, which would be the model file "
                "itself; name the output otherwise",
                str(output),
            )
        known = files.get(target)
        if known is None or claim.offset + claim.length > known.offset + known.length:
            files[target] = claim
    return files


def _free_name(location: str, output: Path, taken: set[Path]) -> str:
    """The name of the file at ``location`` (its last part), numbered (``w-1.bin``, ...)
    until the file beside ``output`` of that name is none of ``taken``."""
    name = re.split(r"[\\/]", location)[-1]
    if name in ("", ".", ".."):
        name = "data"
    stem, dot, suffix = name.partition(".")
    candidate, number = name, 0
    while _place_of(output.parent / candidate) in taken:
        number += 1
        candidate = f"{stem}-{number}{dot}{suffix}"
    return candidate


def _location(tensor: TensorProto) -> str:
    for entry in tensor.external_data:
        if entry.key == "location":
            return str(entry.value)
    return ""


def _set_location(tensor: TensorProto, location: str) -> None:
    for entry in tensor.external_data:
        if entry.key == "location":
            entry.value = location


def _place_of(path: Path) -> Path:
    """Where ``path`` lies once its folder's links are resolved (not its own: a link at a
    target is replaced, never written through)."""
    return Path(os.path.realpath(path.parent)) / path.name


def _is_there(source: Path, target: Path) -> bool:
    """Whether ``target`` is already the data file ``source``: the same place, or the same
    regular file under another name (a link at ``target`` is not: it is replaced)."""
    if _place_of(source) == _place_of(target):
        return True
    try:
        there, data = os.lstat(target), os.stat(source)
    except OSError:
        return False
    return stat.S_ISREG(there.st_mode) and (there.st_dev, there.st_ino) == (
        data.st_dev,
        data.st_ino,
    )


def _copy_file(source: BinaryIO, target: Path, where: str) -> str:
    """Copy the whole of the open file ``source`` into the empty file ``target``; say how:
    ``"cloned"`` (its blocks shared), ``"copied"`` (by the kernel, holes kept as holes) or
    ``"streamed"`` (read and written a MiB at a time, where the kernel cannot copy).
    ``where`` begins a message."""
    size = os.fstat(source.fileno()).st_size
    with target.open("r+b") as copy:
        if _clone(source, copy):
            return "cloned"
        how = "copied"
        for start, end in _data_ranges(source, size):
            reached = _kernel_copy(source, copy, start, end, where)
            if reached < end:
                _stream_copy(source, copy, reached, end, where)
                how = "streamed"
        copy.truncate(size)
    return how


def _clone(source: BinaryIO, copy: BinaryIO) -> bool:
    """Whether ``copy`` now shares the blocks of the whole of ``source`` (Linux's
    ``FICLONE``; the file system refuses where it cannot)."""
    if not sys.platform.startswith("linux"):
        return False
    import fcntl

    try:
        fcntl.ioctl(copy.fileno(), _FICLONE, source.fileno())
    except OSError:
        return False
    return True


def _data_ranges(source: BinaryIO, size: int) -> Iterator[tuple[int, int]]:
    """The ranges of the first ``size`` bytes of ``source`` that hold data, holes left out
    where the system tells them (``SEEK_DATA``, ``SEEK_HOLE``); all of it elsewhere."""
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    descriptor, position = source.fileno(), 0
    while position < size:
        if seek_data is None or seek_hole is None:
            yield position, size
            return
        try:
            start = os.lseek(descriptor, position, seek_data)
            end = min(os.lseek(descriptor, start, seek_hole), size)
        except OSError as error:
            if error.errno == errno.ENXIO:  # nothing but a hole from here
                return
            seek_data = None  # the file system does not tell: all of it is data
            continue
        if start >= size:
            return
        yield start, end
        position = end


#: What ``copy_file_range`` raises where it cannot copy between these two files (another
#: file system, an old kernel, a file system without it): the bytes are streamed instead.
_CANNOT_COPY_HERE = frozenset(
    {errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL, errno.EBADF}
)


def _kernel_copy(source: BinaryIO, copy: BinaryIO, start: int, end: int, where: str) -> int:
    """Copy bytes ``start`` to ``end`` of ``source`` into ``copy`` at the same place, in the
    kernel (``copy_file_range``): the process never holds them. Returns where it stopped:
    ``end``, or an earlier byte where the kernel cannot copy these files."""
    copy_range = getattr(os, "copy_file_range", None)
    position = start
    while copy_range is not None and position < end:
        try:
            done = copy_range(
                source.fileno(), copy.fileno(), min(end - position, 2**30), position, position
            )
        except OSError as error:
            if error.errno in _CANNOT_COPY_HERE:
                return position
            raise
        if done == 0:
            raise ModelLoadError(f"{where}, which changed while it was copied.")
        position += done
    return position


def _stream_copy(source: BinaryIO, copy: BinaryIO, start: int, end: int, where: str) -> None:
    """Copy bytes ``start`` to ``end`` of ``source`` into ``copy`` at the same place, a MiB
    at a time."""
    source.seek(start)
    copy.seek(start)
    position = start
    while position < end:
        chunk = source.read(min(_CHUNK, end - position))
        if not chunk:
            raise ModelLoadError(f"{where}, which changed while it was copied.")
        copy.write(chunk)
        position += len(chunk)
