"""The pack on disk, in ONNX's node-test layout, and a runtime judged against it.

A pack is a folder that ``onnx_test_runner``, tract's ONNX suite and onnx's own
``onnx.backend.test.loader`` read as it is: one folder per case, ``CASE/model.onnx`` and
``CASE/test_data_set_0/input_<i>.pb`` (a ``TensorProto`` per graph input) and
``output_<i>.pb`` (a ``TensorProto``, or a ``SequenceProto`` for a sequence). Beside them,
``cases.json`` lists every case with its name, op, opset, why, and what a runtime must do
(``expect``): give the outputs, refuse the node (the spec rejects it; no outputs are
written), or follow one of its ``readings`` where the spec's text is read two ways (each
reading that computes has its outputs in ``CASE/reading_<key>/``).

:func:`run_pack` reads a pack and runs every case on a runtime, each in a worker process
(:class:`splitops.onnx.RuntimeWorkers`); :func:`judge` turns what the runtime returned into
a :class:`CaseResult` with its :class:`Verdict`. Nothing here trusts the pack: a folder that
is not one is a :class:`~splitops.PackError`, and nothing outside the pack's folder is read
(no link is followed, no FIFO or device is opened, every read is bounded, a value keeping its
data elsewhere is refused), and data that do not fit their model are the pack's fault, not
the runtime's.
"""

from __future__ import annotations

import enum
import errno
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto, SequenceProto, TensorProto, numpy_helper

from .._files import FolderReader, folder_mode, make_folder
from ..core import ModelInputError, ModelLoadError, PackError, current_limits, report_progress
from ..onnx import (
    RuntimeCrashError,
    RuntimeRunError,
    RuntimeWorkers,
    describe_array,
    describe_type,
    load_model,
    runtime_named,
)
from ..onnx.model import (
    DEFAULT_DOMAINS,
    MAX_MODEL_BYTES,
    ModelView,
    SequenceType,
    TensorType,
    ValueType,
    load_value,
)
from ..onnx.model.protobuf import input_types, output_types
from ..onnx.run.backend import check_feeds
from ._cases import CASES, ConformanceCase

__all__ = [
    "CaseResult",
    "PackCase",
    "PackReading",
    "Verdict",
    "judge",
    "read_pack",
    "run_pack",
    "summary",
    "write_pack",
]

#: The file that lists a pack's cases, and marks a folder as a pack.
CASES_FILE = "cases.json"
_FORMAT = "splitops-conformance-pack"
_DATA_SET = "test_data_set_0"
_READING = "reading_"
_EXPECTS = ("outputs", "refusal", "readings")

#: The most bytes ``cases.json`` may hold (the pack's own is some 40 KB).
MAX_LISTING_BYTES = 16 * 2**20
#: The most digits a number in ``cases.json`` may have (an opset is a few).
_MAX_DIGITS = 18


def _value_bytes() -> int:
    """The most bytes one ``.pb`` value file may hold: 16 per element the
    ``max_input_elements`` limit allows (a complex128 is 16 bytes), and 1 MiB more."""
    return 16 * current_limits().max_input_elements + 2**20


# --- writing --------------------------------------------------------------------------------


def write_pack(folder: Path, cases: Sequence[ConformanceCase] = CASES) -> int:
    """Write ``cases`` to ``folder`` in ONNX's node-test layout, with ``cases.json``; return
    how many were written.

    A new folder is built whole beside its place and renamed into it; an empty folder, or
    one that holds a pack and nothing else (``cases.json``, the case folders it lists and
    their files), gets the new pack built inside it first and swapped in, cases.json last.
    A failure (an interrupt too) leaves the folder as it was. Any other folder or file is an
    ``OSError`` naming ``folder``, and is left alone.
    """
    given = Path(folder)
    place = Path(os.path.abspath(given))
    try:
        if place.is_dir():
            problem = _not_a_pack(place)
            if problem is not None:
                raise FileExistsError(
                    errno.EEXIST, f"{problem}; name a new or empty folder, or a pack's", str(given)
                )
            _write_inside(place, cases)
        elif os.path.lexists(place):
            raise NotADirectoryError(
                errno.ENOTDIR, "it is a file, or a link to none; name a folder", str(given)
            )
        else:
            make_folder(place.parent, given)
            _write_beside(place, cases)
    except OSError as error:
        named = _naming(error, given)
        if named is error:
            raise
        raise named from error
    return len(cases)


def _naming(error: OSError, given: Path) -> OSError:
    """``error``, naming the folder given where it names a temporary one, or none."""
    named = error.filename
    temporary = named is not None and any(
        part.startswith(".splitops-") for part in Path(str(named)).parts
    )
    if named is not None and not temporary:
        return error
    return type(error)(error.errno, error.strerror or str(error), str(given))


def _write_beside(place: Path, cases: Sequence[ConformanceCase]) -> None:
    """The pack built in a temporary folder beside ``place``, then renamed to it."""
    building = Path(tempfile.mkdtemp(dir=place.parent, prefix=".splitops-pack-"))
    try:
        _write_cases(building, cases)
        os.chmod(building, folder_mode())
        os.rename(building, place)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


def _write_inside(place: Path, cases: Sequence[ConformanceCase]) -> None:
    """The pack built in a temporary folder inside ``place`` (an empty folder or a pack's),
    the old pack's entries moved aside, the new ones moved in (``cases.json`` last), the old
    ones removed; on any failure, the old ones put back. The folder itself is never renamed:
    it may be the current folder, and a parent that cannot be written does not matter."""
    made: list[Path] = []  # the two temporary folders, each recorded as soon as it exists
    moved_out: list[str] = []
    moved_in: list[str] = []
    try:
        made.append(Path(tempfile.mkdtemp(dir=place, prefix=".splitops-pack-")))
        made.append(Path(tempfile.mkdtemp(dir=place, prefix=".splitops-old-")))
        building, old = made
        _write_cases(building, cases)
        present = [entry for entry in os.listdir(place) if entry not in (building.name, old.name)]
        for entry in sorted(present, key=lambda name: name != CASES_FILE):  # cases.json first
            os.rename(place / entry, old / entry)
            moved_out.append(entry)
        for entry in sorted(os.listdir(building), key=lambda name: name == CASES_FILE):
            os.rename(building / entry, place / entry)
            moved_in.append(entry)
    except BaseException:
        for entry in reversed(moved_in):
            shutil.rmtree(place / entry, ignore_errors=True)
            with suppress(OSError):
                os.unlink(place / entry)
        for entry in moved_out:
            with suppress(OSError):
                os.rename(made[1] / entry, place / entry)
        raise
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def _write_cases(folder: Path, cases: Sequence[ConformanceCase]) -> None:
    for case in cases:
        _write_case(folder / case.name, case)
    listing = {"format": _FORMAT, "cases": [_listed(case) for case in cases]}
    (folder / CASES_FILE).write_text(json.dumps(listing, indent=2) + "\n")


def _listed(case: ConformanceCase) -> dict[str, Any]:
    return {
        "name": case.name,
        "op": case.op,
        "opset": case.opset,
        "why": case.why,
        "expect": case.expect,
        "readings": [
            {
                "key": reading.key,
                "why": reading.why,
                "rejects": reading.rejects,
                "splitops": reading.splitops,
            }
            for reading in case.readings
        ],
        "control": case.control,
    }


def _write_case(folder: Path, case: ConformanceCase) -> None:
    model = case.model()
    data = folder / _DATA_SET
    data.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    for index, (value, name) in enumerate(zip(case.inputs, input_types(model), strict=True)):
        tensor = numpy_helper.from_array(value, name)
        (data / f"input_{index}.pb").write_bytes(tensor.SerializeToString())
    _write_outputs(data, case.outputs, model)
    for reading in case.readings:
        if reading.outputs is not None:
            (folder / f"{_READING}{reading.key}").mkdir()
            _write_outputs(folder / f"{_READING}{reading.key}", reading.outputs, model)


def _write_outputs(folder: Path, outputs: Sequence[Any] | None, model: ModelProto) -> None:
    declared = output_types(model) if outputs is not None else []
    for index, (expected, (name, _)) in enumerate(zip(outputs or (), declared, strict=True)):
        if isinstance(expected, tuple):
            proto: TensorProto | SequenceProto = numpy_helper.from_list(list(expected), name)
        else:
            proto = numpy_helper.from_array(expected, name)
        (folder / f"output_{index}.pb").write_bytes(proto.SerializeToString())


def _not_a_pack(folder: Path) -> str | None:
    """Why ``folder`` (an existing folder) is neither empty nor a pack and nothing else, or
    ``None``. Every entry is looked at without following links, and the walk stops at the
    first that is not the pack's."""
    with os.scandir(folder) as entries:
        first = next(entries, None)
    if first is None:
        return None
    try:
        with FolderReader.open(folder) as reader:
            document = _document(reader, folder / CASES_FILE)
    except (PackError, OSError):
        document = None
    # The case folders it lists, whatever else it says of them (an earlier splitops wrote
    # other fields), each a plain folder name.
    cases = document.get("cases") if isinstance(document, dict) else None
    listed = [entry.get("name") for entry in cases or () if isinstance(entry, dict)]
    names = [name for name in listed if isinstance(name, str) and _is_folder_name(name)]
    if not isinstance(cases, list) or len(names) != len(cases):
        if not os.path.lexists(folder / CASES_FILE):
            return "it is a folder that holds files and no pack"
        return f"it holds a {CASES_FILE} that is no pack's"
    expected: dict[str, Any] = {CASES_FILE: None, **dict.fromkeys(names, _CASE_LAYOUT)}
    return _foreign(folder, expected)


def _is_folder_name(name: str) -> bool:
    return name not in ("", ".", "..") and Path(name).name == name and "\0" not in name


#: What a case folder may hold: its model, its data set, and readings' outputs.
_CASE_LAYOUT = {"model.onnx": None, _DATA_SET: "values", _READING: "values"}


def _foreign(folder: Path, expected: dict[str, Any]) -> str | None:
    """The first entry below ``folder`` that the layout ``expected`` (a name to ``None`` for
    a file, to the layout of a folder, or ``"values"`` for a folder of ``.pb`` files) does
    not name, as a reason, or ``None``."""
    with os.scandir(folder) as entries:
        for entry in entries:
            key = _READING if entry.name.startswith(_READING) else entry.name
            if key not in expected:
                return f"it holds {entry.path}, which is no pack's"
            layout = expected[key]
            if layout is None:
                if not entry.is_file(follow_symlinks=False):
                    return f"{entry.path} is no plain file"
                continue
            if not entry.is_dir(follow_symlinks=False):
                return f"{entry.path} is no plain folder"
            below = Path(entry.path)
            problem = _foreign_values(below) if layout == "values" else _foreign(below, layout)
            if problem is not None:
                return problem
    return None


def _foreign_values(folder: Path) -> str | None:
    with os.scandir(folder) as entries:
        for entry in entries:
            stem, _, index = entry.name.removesuffix(".pb").rpartition("_")
            if (
                not entry.name.endswith(".pb")
                or stem not in ("input", "output")
                or not index.isdigit()
                or not entry.is_file(follow_symlinks=False)
            ):
                return f"it holds {entry.path}, which is no pack's"
    return None


# --- reading --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackReading:
    """One reading of a case the spec's text says two ways, as the pack lists it: its key,
    why it reads so, whether splitops reads it so, and the outputs it gives (``None`` where
    it rejects the node)."""

    key: str
    why: str
    splitops: bool
    outputs: list[Any] | None


@dataclass(frozen=True)
class PackCase:
    """One case read from a pack: what ``cases.json`` says of it, its model, its inputs by
    name, and its expected outputs (``None`` where the spec rejects it, or reads it two
    ways: then ``readings`` holds each reading). A sequence output is a list of arrays."""

    name: str
    op: str
    opset: int
    why: str
    model: ModelProto
    feeds: dict[str, np.ndarray[Any, Any]]
    outputs: list[Any] | None
    readings: tuple[PackReading, ...] = ()
    #: The valid case of the same node without the words read two ways, if any.
    control: str | None = None

    @property
    def valid(self) -> bool:
        """Whether the spec gives these outputs, read one way only."""
        return self.outputs is not None

    @property
    def rejected(self) -> bool:
        """Whether the spec rejects it."""
        return self.outputs is None and not self.readings


def read_pack(folder: Path) -> list[PackCase]:
    """The cases of the pack in ``folder``, in the order ``cases.json`` lists them; a
    :class:`~splitops.PackError` naming what is missing or wrong where ``folder`` is no pack
    splitops can read safely (see the module's documentation)."""
    folder = Path(folder)
    try:
        reader = FolderReader.open(folder)
    except FileNotFoundError:
        raise PackError(
            f"{folder}: no such folder. Write a pack with `splitops conformance write {folder}`."
        ) from None
    except NotADirectoryError:
        raise PackError(f"{folder} is a file, not a conformance pack folder.") from None
    except OSError as error:
        raise PackError(f"cannot read {folder}: {error.strerror or error}.") from error
    with reader:
        if not os.path.lexists(folder / CASES_FILE):
            raise PackError(
                f"{folder} is not a conformance pack: it has no {CASES_FILE}. Write one with "
                f"`splitops conformance write {folder}`."
            )
        return [_read_case(reader, entry) for entry in _entries(reader, folder / CASES_FILE)]


def _refused(error: OSError) -> PackError:
    """A refusal of the file reader as the pack's problem."""
    where = error.filename if error.filename is not None else "a file of the pack"
    return PackError(
        f"cannot read {where}: {error.strerror or error}. A pack's files lie in its folder; "
        "write it again with `splitops conformance write`."
    )


def _document(reader: FolderReader, listing: Path) -> Any:
    """``cases.json`` parsed, its reads and its numbers bounded."""
    try:
        text = reader.read(CASES_FILE, limit=MAX_LISTING_BYTES).decode()
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except OSError as error:
        raise _refused(error) from error
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        why = "it nests too deep" if isinstance(error, RecursionError) else str(error)
        raise PackError(f"{listing} is not a readable case list: {why}.") from error


def _entries(reader: FolderReader, listing: Path) -> list[dict[str, Any]]:
    document = _document(reader, listing)
    cases = document.get("cases") if isinstance(document, dict) else None
    keys = {"name": str, "op": str, "opset": int, "why": str, "expect": str, "readings": list}
    if not isinstance(cases, list) or not all(
        isinstance(entry, dict)
        and all(type(entry.get(key)) is kind for key, kind in keys.items())
        and entry["expect"] in _EXPECTS
        and all(_is_reading(reading) for reading in entry["readings"])
        and (entry["expect"] == "readings") == bool(entry["readings"])
        and (entry.get("control") is None or type(entry["control"]) is str)
        for entry in cases
    ):
        raise PackError(
            f'{listing} is not a case list: it must hold an object whose "cases" list has '
            f"an object per case with {', '.join(keys)} (expect one of {', '.join(_EXPECTS)}; "
            "readings, for expect readings, objects with key, why, rejects and splitops). "
            "A pack written by another splitops may differ: write it again with `splitops "
            "conformance write`."
        )
    names = {entry["name"] for entry in cases}
    for entry in cases:
        name = entry["name"]
        if not _is_folder_name(name):
            raise PackError(f"{listing} names a case {name!r} that is no folder name.")
        if entry.get("control") is not None and entry["control"] not in names:
            raise PackError(
                f"{listing} gives {name} a control {entry['control']!r} that it does not list."
            )
        for reading in entry["readings"]:
            key = reading["key"]
            if not key or Path(f"{_READING}{key}").name != f"{_READING}{key}" or "\0" in key:
                raise PackError(f"{listing} names a reading {key!r} of {name} that is no name.")
    return cases


def _is_reading(reading: object) -> bool:
    kinds = {"key": str, "why": str, "rejects": bool, "splitops": bool}
    return isinstance(reading, dict) and all(
        type(reading.get(key)) is kind for key, kind in kinds.items()
    )


def _bounded_int(text: str) -> int:
    """A JSON integer of a few digits; a longer one is no pack's (``int`` of 5,000 digits is
    Python's own error)."""
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise ValueError(f"a number of {len(text)} digits")
    return int(text)


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is no JSON number")


def _read_case(pack: FolderReader, entry: dict[str, Any]) -> PackCase:
    name = entry["name"]
    try:
        with pack.folder(name) as folder:
            model = _read_model(folder)
            _check_listed(entry, model, folder.path)
            with folder.folder(_DATA_SET) as data:
                feeds = {
                    name: _read_value(data, f"input_{index}.pb", declared)
                    for index, (name, declared) in enumerate(input_types(model).items())
                }
                outputs = _read_outputs(data, model) if entry["expect"] == "outputs" else None
            readings = tuple(
                PackReading(
                    reading["key"],
                    reading["why"],
                    reading["splitops"],
                    None
                    if reading["rejects"]
                    else _read_outputs_in(folder, f"{_READING}{reading['key']}", model),
                )
                for reading in entry["readings"]
            )
    except PackError:
        raise
    except FileNotFoundError as error:
        missing = Path(error.filename).relative_to(pack.path)
        raise PackError(
            f"{pack.path} is not a whole pack: {missing} is missing (case {name})."
        ) from error
    except OSError as error:
        raise _refused(error) from error
    try:
        check_feeds(model, feeds)
    except ModelInputError as error:
        raise PackError(
            f"{pack.path / name} is a broken case: its inputs do not fit its model: {error}"
        ) from error
    return PackCase(
        name,
        entry["op"],
        entry["opset"],
        entry["why"],
        model,
        feeds,
        outputs,
        readings,
        entry.get("control"),
    )


def _read_model(folder: FolderReader) -> ModelProto:
    path = folder.path / "model.onnx"
    data = folder.read("model.onnx", limit=MAX_MODEL_BYTES)
    try:
        model: ModelProto = load_model(data, name=str(path))
    except ModelLoadError as error:
        raise PackError(f"{error}") from error
    return model


def _check_listed(entry: dict[str, Any], model: ModelProto, where: Path) -> None:
    """The pack's model must be the node ``cases.json`` says: its op, at its opset."""
    main = ModelView.read(model).main
    ops = [node.op_type for node in main.nodes if node.domain in DEFAULT_DOMAINS]
    opset = main.opset
    if entry["op"] not in ops or opset != entry["opset"]:
        raise PackError(
            f"{where} is a broken case: {CASES_FILE} lists it as {entry['op']}-"
            f"{entry['opset']}, and its model holds {', '.join(ops) or 'no node'} at opset "
            f"{opset}."
        )


def _read_outputs_in(folder: FolderReader, name: str, model: ModelProto) -> list[Any]:
    with folder.folder(name) as outputs:
        return _read_outputs(outputs, model)


def _read_outputs(folder: FolderReader, model: ModelProto) -> list[Any]:
    outputs = []
    for index, (name, declared) in enumerate(output_types(model)):
        value = _read_value(folder, f"output_{index}.pb", declared)
        problem = _misfit(declared, value)
        if problem:
            raise PackError(
                f"{folder.path / f'output_{index}.pb'} does not fit the output {name!r} "
                f"its model declares, {describe_type(declared)}: {problem}."
            )
        outputs.append(value)
    return outputs


def _misfit(declared: ValueType | None, value: Any) -> str | None:
    """What about an expected output does not fit its declared type, or ``None``."""
    if isinstance(declared, SequenceType):
        element = declared.element
        return next((p for p in (_misfit(element, part) for part in value) if p), None)
    if not isinstance(declared, TensorType):
        return None
    array = np.asarray(value)
    if declared.element and not _same_element(declared.element, array):
        return f"it holds {_describe(array)}"
    dims = declared.dims
    if dims is not None and (
        len(dims) != array.ndim
        or any(
            isinstance(dim, int) and dim != length
            for dim, length in zip(dims, array.shape, strict=True)
        )
    ):
        return f"it holds {_describe(array)}"
    return None


def _same_element(code: int, array: np.ndarray[Any, Any]) -> bool:
    from onnx import helper

    if array.dtype.kind == "O":
        return code == TensorProto.STRING
    try:
        return int(helper.np_dtype_to_tensor_dtype(array.dtype)) == code
    except (KeyError, TypeError, ValueError):
        return False


def _read_value(folder: FolderReader, name: str, declared: ValueType | None) -> Any:
    data = folder.read(name, limit=_value_bytes())
    try:
        sequence = isinstance(declared, SequenceType)
        return load_value(data, sequence=sequence, name=str(folder.path / name))
    except ModelLoadError as error:
        raise PackError(f"{error}") from error


# --- judging --------------------------------------------------------------------------------


class Verdict(enum.Enum):
    """What a runtime did with a case."""

    #: The spec's outputs (element type, shape, values), or a refusal of a case it rejects.
    PASS = "pass"
    #: Other outputs than the spec's, or than any reading's.
    WRONG = "wrong"
    #: An error on a case the spec computes: a missing kernel, type or feature.
    REFUSED = "refused"
    #: Outputs for a case the spec rejects.
    ACCEPTS = "accepts"
    #: The runtime's process died (a signal, an exit) or gave no answer: never a pass.
    CRASH = "crash"
    #: It follows one reading of a text the spec says two ways: neither pass nor failure.
    READING = "reading"


@dataclass(frozen=True)
class CaseResult:
    """What a runtime did with one case: the verdict, and what it returned or said, or the
    reading it follows."""

    name: str
    verdict: Verdict
    detail: str = ""
    #: The key of the reading it follows (for :attr:`Verdict.READING`).
    reading: str | None = None

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASS

    @property
    def failed(self) -> bool:
        """Whether it breaks a rule, refuses a valid case or crashes (a reading is neither
        passed nor failed)."""
        return self.verdict not in (Verdict.PASS, Verdict.READING)

    def __str__(self) -> str:
        if self.verdict is Verdict.PASS:
            return f"{self.name}: passed"
        return f"{self.name}: {self.detail}"


def judge(case: PackCase, outcome: Sequence[Any] | BaseException) -> CaseResult:
    """``case``'s result for a runtime that returned the outputs ``outcome`` (sequence
    outputs as lists of arrays) or raised it.

    A valid case passes on outputs equal to the expected ones (element type, shape and
    values); a rejected case passes on an error; a :class:`~splitops.onnx.RuntimeCrashError`
    (the runtime's process died) never passes. A case read two ways is followed by outputs
    equal to a reading's, or by an error where a reading rejects the node.
    """
    if isinstance(outcome, RuntimeCrashError):
        return CaseResult(case.name, Verdict.CRASH, f"crashed: {_one_line(outcome)}")
    if case.readings:
        return _judge_readings(case, outcome)
    if isinstance(outcome, BaseException):
        if case.rejected:
            return CaseResult(case.name, Verdict.PASS)
        return CaseResult(case.name, Verdict.REFUSED, f"refused: {_one_line(outcome)}")
    got = list(outcome)
    if case.outputs is None:
        return CaseResult(
            case.name,
            Verdict.ACCEPTS,
            f"must be refused, but returned {'; '.join(map(_describe, got))}",
        )
    problem = _differs(case, case.outputs, got)
    if problem:
        return CaseResult(case.name, Verdict.WRONG, problem)
    return CaseResult(case.name, Verdict.PASS)


def _judge_readings(case: PackCase, outcome: Sequence[Any] | BaseException) -> CaseResult:
    if isinstance(outcome, BaseException):
        rejecting = [reading for reading in case.readings if reading.outputs is None]
        said = _one_line(outcome)
        if not rejecting:
            return CaseResult(case.name, Verdict.REFUSED, f"refused: {said}")
        return CaseResult(
            case.name, Verdict.READING, f"reads it as {rejecting[0].key}: refused: {said}",
            rejecting[0].key,
        )  # fmt: skip
    got = list(outcome)
    for reading in case.readings:
        if reading.outputs is not None and not _differs(case, reading.outputs, got):
            return CaseResult(case.name, Verdict.READING, f"reads it as {reading.key}", reading.key)
    keys = " or ".join(reading.key for reading in case.readings)
    returned = "; ".join(map(_describe, got))
    if all(reading.outputs is None for reading in case.readings):
        return CaseResult(case.name, Verdict.ACCEPTS, f"must be refused, but returned {returned}")
    return CaseResult(case.name, Verdict.WRONG, f"reads it as neither {keys}: returned {returned}")


def _differs(case: PackCase, expected: Sequence[Any], got: list[Any]) -> str | None:
    """How ``got`` differs from ``expected``, in words, or ``None``."""
    if len(got) != len(expected):
        return (
            f"returned {len(got)} output(s), expected {len(expected)}: "
            f"{'; '.join(map(_describe, got))}"
        )
    names = [name for name, _ in output_types(case.model)]
    for name, want, value in zip(names, expected, got, strict=True):
        if not _same(want, value):
            return f"{name}: expected {_describe(want)}; got {_describe(value)}"
    return None


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
    an ``ImportError`` saying how to install one that is missing. The whole pack is read and
    checked before the first case runs. ``progress`` is called with each result as it
    comes."""
    chosen = runtime_named(runtime)
    if not chosen.is_installed():
        raise ImportError(f"{runtime} is not installed: {chosen.install}")
    report_progress("reading the pack")
    cases = read_pack(folder)
    results: list[CaseResult] = []
    with RuntimeWorkers() as workers:
        for index, case in enumerate(cases):
            report_progress(f"case {index + 1} of {len(cases)} on {runtime}: {case.name}")
            outcome: Sequence[Any] | BaseException
            try:
                outcome = workers.run(chosen, case.model.SerializeToString(), case.feeds)
            except RuntimeRunError as error:
                outcome = error
            results.append(judge(case, outcome))
            if progress is not None and not _refused_as_read(case, results[-1]):
                progress(results[-1])
    # A refusal taken for a reading that rejects the node is told once every case has run:
    # it follows the reading only where the runtime runs the case's control, the same node
    # without the words read two ways (else it refuses the node for another reason).
    passed = {result.name for result in results if result.passed}
    for index, (case, result) in enumerate(zip(cases, results, strict=True)):
        if _refused_as_read(case, result):
            if case.control not in passed:
                said = result.detail.removeprefix(f"reads it as {result.reading}: ")
                results[index] = CaseResult(
                    case.name,
                    Verdict.REFUSED,
                    f"{said} (it fails {case.control or 'the node without them'} too, so this "
                    "follows no reading)",
                )
            if progress is not None:
                progress(results[index])
    return results


def _refused_as_read(case: PackCase, result: CaseResult) -> bool:
    """Whether ``result`` is a refusal taken for a reading that rejects the node."""
    return result.verdict is Verdict.READING and any(
        reading.key == result.reading and reading.outputs is None for reading in case.readings
    )


def summary(results: Iterable[CaseResult]) -> str:
    """``"60 passed, 5 failed"``, and ``", 2 read two ways"`` where a runtime followed a
    reading of a case the spec says two ways."""
    passed = failed = readings = 0
    for result in results:
        passed += result.passed
        failed += result.failed
        readings += result.verdict is Verdict.READING
    said = f"{passed} passed, {failed} failed"
    return said + (f", {readings} read two ways" if readings else "")
