"""The pack on disk, in ONNX's node-test layout, and a runtime judged against it.

A pack is a folder that ``onnx_test_runner``, tract's ONNX suite and onnx's own
``onnx.backend.test.loader`` read as it is: one folder per case, ``CASE/model.onnx`` and
``CASE/test_data_set_0/input_<i>.pb`` (a ``TensorProto`` per graph input) and
``output_<i>.pb`` (a ``TensorProto``, or a ``SequenceProto`` for a sequence). Beside them,
``cases.json`` lists every case with its name, op, opset, why and whether it is valid; a
case the spec rejects has inputs only, and a runtime passes it by refusing it.

:func:`run_pack` reads a pack and runs every case on a runtime, each in a worker process
(:class:`splitops.onnx.RuntimeWorkers`); :func:`judge` turns what the runtime returned into
a :class:`CaseResult`. Nothing here trusts the pack: a folder that is not one is a
:class:`~splitops.PackError`, its models are read through :func:`splitops.load_model`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError
from onnx import ModelProto, SequenceProto, TensorProto, TypeProto, numpy_helper

from .._files import folder_mode, make_folder
from ..core import PackError
from ..onnx import (
    RuntimeRunError,
    RuntimeWorkers,
    describe_array,
    load_model,
    runtime_named,
)
from ._cases import CASES, ConformanceCase

__all__ = ["CaseResult", "PackCase", "judge", "read_pack", "run_pack", "summary", "write_pack"]

#: The file that lists a pack's cases, and marks a folder as a pack.
CASES_FILE = "cases.json"
_FORMAT = "splitops-conformance-pack"
_DATA_SET = "test_data_set_0"


# --- writing --------------------------------------------------------------------------------


def write_pack(folder: Path, cases: Sequence[ConformanceCase] = CASES) -> int:
    """Write ``cases`` to ``folder`` in ONNX's node-test layout, with ``cases.json``; return
    how many were written.

    The pack is written whole into a temporary folder beside ``folder``, then renamed to it:
    a failure leaves ``folder`` as it was. An existing pack (a folder holding
    ``cases.json``) or an empty folder is replaced; any other existing folder or file is an
    ``OSError`` and is left alone.
    """
    folder = Path(folder)
    _check_replaceable(folder)
    make_folder(folder.parent, folder)
    building = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        for case in cases:
            _write_case(building / case.name, case)
        listing = {"format": _FORMAT, "cases": [_listed(case) for case in cases]}
        (building / CASES_FILE).write_text(json.dumps(listing, indent=2) + "\n")
        os.chmod(building, folder_mode())
        _replace(folder, building)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return len(cases)


def _check_replaceable(folder: Path) -> None:
    if folder.is_dir() and any(folder.iterdir()) and not (folder / CASES_FILE).is_file():
        raise FileExistsError(
            17,
            "it is a folder that holds files and no pack; name a new or empty folder",
            str(folder),
        )
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(20, "it is a file; name a folder", str(folder))


def _replace(folder: Path, built: Path) -> None:
    """``built`` renamed to ``folder``; an old pack there is removed once the new one is in."""
    if not folder.exists():
        os.rename(built, folder)
        return
    old = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.old."))
    os.rename(folder, old / "pack")
    try:
        os.rename(built, folder)
    except OSError:
        os.rename(old / "pack", folder)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _listed(case: ConformanceCase) -> dict[str, Any]:
    return {
        "name": case.name,
        "op": case.op,
        "opset": case.opset,
        "why": case.why,
        "valid": case.valid,
    }


def _write_case(folder: Path, case: ConformanceCase) -> None:
    model = case.model()
    data = folder / _DATA_SET
    data.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    for index, (value, info) in enumerate(zip(case.inputs, model.graph.input, strict=True)):
        tensor = numpy_helper.from_array(value, info.name)
        (data / f"input_{index}.pb").write_bytes(tensor.SerializeToString())
    outputs = model.graph.output if case.outputs is not None else []
    for index, (expected, info) in enumerate(zip(case.outputs or (), outputs, strict=True)):
        if isinstance(expected, tuple):
            proto: TensorProto | SequenceProto = numpy_helper.from_list(list(expected), info.name)
        else:
            proto = numpy_helper.from_array(expected, info.name)
        (data / f"output_{index}.pb").write_bytes(proto.SerializeToString())


# --- reading --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackCase:
    """One case read from a pack: what ``cases.json`` says of it, its model, its inputs by
    name, and its expected outputs (``None`` where the spec rejects it). A sequence output is
    a list of arrays."""

    name: str
    op: str
    opset: int
    why: str
    model: ModelProto
    feeds: dict[str, np.ndarray[Any, Any]]
    outputs: list[Any] | None

    @property
    def valid(self) -> bool:
        return self.outputs is not None


def read_pack(folder: Path) -> list[PackCase]:
    """The cases of the pack in ``folder``, in the order ``cases.json`` lists them; a
    :class:`~splitops.PackError` naming what is missing where ``folder`` is no pack."""
    folder = Path(folder)
    if not folder.exists():
        raise PackError(
            f"{folder}: no such folder. Write a pack with `splitops conformance write {folder}`."
        )
    if not folder.is_dir():
        raise PackError(f"{folder} is a file, not a conformance pack folder.")
    listing = folder / CASES_FILE
    if not listing.is_file():
        raise PackError(
            f"{folder} is not a conformance pack: it has no {CASES_FILE}. Write one with "
            f"`splitops conformance write {folder}`."
        )
    return [_read_case(folder, entry) for entry in _entries(listing)]


def _entries(listing: Path) -> list[dict[str, Any]]:
    try:
        document = json.loads(listing.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PackError(f"{listing} is not a readable case list: {error}.") from error
    cases = document.get("cases") if isinstance(document, dict) else None
    keys = {"name": str, "op": str, "opset": int, "why": str, "valid": bool}
    if not isinstance(cases, list) or not all(
        isinstance(entry, dict)
        and all(isinstance(entry.get(key), kind) for key, kind in keys.items())
        for entry in cases
    ):
        raise PackError(
            f'{listing} is not a case list: it must hold an object whose "cases" list has '
            f"an object per case with {', '.join(keys)}."
        )
    for entry in cases:
        name = entry["name"]
        if name in ("", ".", "..") or Path(name).name != name:
            raise PackError(f"{listing} names a case {name!r} that is no folder name.")
    return cases


def _read_case(folder: Path, entry: dict[str, Any]) -> PackCase:
    where = folder / entry["name"]
    if not (where / "model.onnx").is_file():
        raise PackError(f"{folder} is not a whole pack: case {entry['name']} has no model.onnx.")
    model = load_model(where / "model.onnx")
    data = where / _DATA_SET
    feeds = {
        info.name: _read_value(data / f"input_{index}.pb", info.type)
        for index, info in enumerate(model.graph.input)
    }
    outputs = None
    if entry["valid"]:
        outputs = [
            _read_value(data / f"output_{index}.pb", info.type)
            for index, info in enumerate(model.graph.output)
        ]
    return PackCase(entry["name"], entry["op"], entry["opset"], entry["why"], model, feeds, outputs)


def _read_value(path: Path, kind: TypeProto) -> Any:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise PackError(f"cannot read {path}: {error.strerror or error}.") from error
    try:
        if kind.HasField("sequence_type"):
            sequence = SequenceProto()
            sequence.ParseFromString(data)
            return [np.asarray(part) for part in numpy_helper.to_list(sequence)]
        tensor = TensorProto()
        tensor.ParseFromString(data)
        return np.asarray(numpy_helper.to_array(tensor))
    except (DecodeError, ValueError, TypeError) as error:
        raise PackError(f"{path} is not a readable ONNX value: {error}.") from error


# --- judging --------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseResult:
    """Whether a runtime passed one case, and, where it failed, what it returned or said."""

    name: str
    passed: bool
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.name}: {self.detail}" if self.detail else f"{self.name}: passed"


def judge(case: PackCase, outcome: Sequence[Any] | BaseException) -> CaseResult:
    """``case``'s result for a runtime that returned the outputs ``outcome`` (sequence
    outputs as lists of arrays) or raised it. A valid case passes on outputs equal to the
    expected ones (element type, shape and values); a rejected case passes on an error."""
    if isinstance(outcome, BaseException):
        if not case.valid:
            return CaseResult(case.name, True)
        return CaseResult(case.name, False, f"refused: {_one_line(outcome)}")
    got = list(outcome)
    if case.outputs is None:
        return CaseResult(
            case.name, False, f"must be refused, but returned {'; '.join(map(_describe, got))}"
        )
    if len(got) != len(case.outputs):
        return CaseResult(
            case.name,
            False,
            f"returned {len(got)} output(s), expected {len(case.outputs)}: "
            f"{'; '.join(map(_describe, got))}",
        )
    names = [info.name for info in case.model.graph.output]
    for name, expected, value in zip(names, case.outputs, got, strict=True):
        if not _same(expected, value):
            return CaseResult(
                case.name, False, f"{name}: expected {_describe(expected)}; got {_describe(value)}"
            )
    return CaseResult(case.name, True)


def _same(expected: Any, got: Any) -> bool:
    if isinstance(expected, list):
        return (
            isinstance(got, (list, tuple))
            and len(got) == len(expected)
            and all(_same(e, g) for e, g in zip(expected, got, strict=True))
        )
    if isinstance(got, (list, tuple)):
        return False
    got = np.asarray(got)
    if got.shape != expected.shape:
        return False
    if expected.dtype.kind in "OUS":
        return got.dtype.kind in "OUS" and list(map(_text, got.flat)) == list(
            map(_text, expected.flat)
        )
    if got.dtype != expected.dtype:
        return False
    if expected.dtype.itemsize == 2 and expected.dtype.kind == "V":  # bfloat16: by its bits
        return bool(np.array_equal(got.view(np.uint16), expected.view(np.uint16)))
    return bool(np.array_equal(got, expected))


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _describe(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        shown = ", ".join(_describe(part) for part in value[:3])
        more = ", ..." if len(value) > 3 else ""
        return f"sequence of {len(value)} [{shown}{more}]"
    return describe_array(np.asarray(value))


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 240 else text[:237] + "..."


# --- running --------------------------------------------------------------------------------


def run_pack(
    folder: Path,
    runtime: str,
    *,
    progress: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Every case of the pack in ``folder`` run on the runtime called ``runtime`` (one of
    :data:`splitops.onnx.RUNTIMES`), in a worker process; a ``KeyError`` for an unknown name,
    an ``ImportError`` saying how to install one that is missing. ``progress`` is called with
    each result as it comes."""
    chosen = runtime_named(runtime)
    if not chosen.is_installed():
        raise ImportError(f"{runtime} is not installed: {chosen.install}")
    results: list[CaseResult] = []
    with RuntimeWorkers() as workers:
        for case in read_pack(folder):
            outcome: Sequence[Any] | BaseException
            try:
                outcome = workers.run(chosen, case.model.SerializeToString(), case.feeds)
            except RuntimeRunError as error:
                outcome = error
            results.append(judge(case, outcome))
            if progress is not None:
                progress(results[-1])
    return results


def summary(results: Iterable[CaseResult]) -> str:
    """``"60 passed, 5 failed"``."""
    passed = failed = 0
    for result in results:
        passed += result.passed
        failed += not result.passed
    return f"{passed} passed, {failed} failed"
