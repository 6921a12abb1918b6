"""Rule 9: every ONNX element type at every version, accepted where the version lists it and
rejected with SplitTypeError naming the type and the version where it does not.

The allowed sets are written out here from the spec's type constraints, not read from
splitops' own table.
"""

from __future__ import annotations

import re
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import splitops
from splitops import SplitTypeError
from splitops.arrays import element_of

# ONNX name -> a 2x4 numpy array of that type (strings twice: str and object arrays).
SAMPLES: dict[str, Any] = {
    "bool": np.array([[True, False, True, True], [False, False, True, False]]),
    "int8": np.arange(-4, 4, dtype=np.int8).reshape(2, 4),
    "int16": np.arange(-4, 4, dtype=np.int16).reshape(2, 4),
    "int32": np.arange(-4, 4, dtype=np.int32).reshape(2, 4),
    "int64": np.arange(-4, 4, dtype=np.int64).reshape(2, 4),
    "uint8": np.arange(8, dtype=np.uint8).reshape(2, 4),
    "uint16": np.arange(8, dtype=np.uint16).reshape(2, 4),
    "uint32": np.arange(8, dtype=np.uint32).reshape(2, 4),
    "uint64": np.arange(8, dtype=np.uint64).reshape(2, 4),
    "float16": np.linspace(-1, 1, 8, dtype=np.float16).reshape(2, 4),
    "bfloat16": np.linspace(-1, 1, 8).astype(ml_dtypes.bfloat16).reshape(2, 4),
    "float": np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4),
    "double": np.linspace(-1, 1, 8, dtype=np.float64).reshape(2, 4),
    "complex64": (np.arange(8) + 1j * np.arange(8)[::-1]).astype(np.complex64).reshape(2, 4),
    "complex128": (np.arange(8) - 2j).astype(np.complex128).reshape(2, 4),
    "string": np.array([["a", "bc", "", "d"], ["e", "f", "gh", "ij"]]),
    "string (object)": np.array([["a", "bc", "", "d"], ["e", "f", "gh", "ij"]], dtype=object),
}
ALL = frozenset(name.split(" ")[0] for name in SAMPLES)
WITHOUT_BFLOAT16 = ALL - {"bfloat16"}
ALLOWED = {
    ("Split", 1): frozenset({"float16", "float", "double"}),
    ("Split", 2): WITHOUT_BFLOAT16,
    ("Split", 11): WITHOUT_BFLOAT16,
    ("Split", 13): ALL,
    ("Split", 18): ALL,
    ("SplitToSequence", 11): WITHOUT_BFLOAT16,
    ("SplitToSequence", 24): ALL,
}
ACCEPTED = [
    pytest.param(op, version, sample, id=f"{op}-{version}-{sample}")
    for (op, version), allowed in ALLOWED.items()
    for sample in SAMPLES
    if sample.split(" ")[0] in allowed
]
REJECTED = [
    pytest.param(op, version, sample, id=f"{op}-{version}-{sample}")
    for (op, version), allowed in ALLOWED.items()
    for sample in SAMPLES
    if sample.split(" ")[0] not in allowed
]


def run(op: str, opset: int, x: Any) -> list[Any]:
    if op == "Split":
        return list(splitops.split(x, [1, 3], axis=1, opset=opset))
    return splitops.split_to_sequence(x, axis=1, opset=opset)


def test_sixteen_element_types() -> None:
    assert len(ALL) == 16
    assert all(element_of(x.dtype) == name.split(" ")[0] for name, x in SAMPLES.items())


def test_matrix_covers_every_type_at_every_version() -> None:
    assert len(ACCEPTED) + len(REJECTED) == len(SAMPLES) * 7
    # Split-1 rejects 13 types (14 samples: strings twice); bfloat16 is out at 2, 11 and STS-11.
    assert len(REJECTED) == 14 + 3


@pytest.mark.parametrize(("op", "opset", "sample"), ACCEPTED)
def test_dtype_listed_by_the_version_is_accepted(op: str, opset: int, sample: str) -> None:
    x = SAMPLES[sample]
    parts = run(op, opset, x)
    expected = [x[:, :1], x[:, 1:]] if op == "Split" else [x[:, i : i + 1] for i in range(4)]
    assert len(parts) == len(expected)
    for part, want in zip(parts, expected, strict=True):
        assert part.dtype == x.dtype
        np.testing.assert_array_equal(part, want, strict=True)


@pytest.mark.parametrize(("op", "opset", "sample"), REJECTED)
def test_dtype_not_listed_by_the_version_is_rejected(op: str, opset: int, sample: str) -> None:
    onnx_type = sample.split(" ")[0]
    message = rf"{op}-{opset} does not accept {onnx_type} inputs; it takes .*"
    with pytest.raises(SplitTypeError, match=message):
        run(op, opset, SAMPLES[sample])


@pytest.mark.parametrize(
    ("op", "opset", "version", "first"),
    [("Split", 12, 11, 13), ("Split", 10, 2, 13), ("SplitToSequence", 23, 11, 24)],
)
def test_dtype_message_names_the_opset_given_and_where_the_type_arrives(
    op: str, opset: int, version: int, first: int
) -> None:
    message = (
        rf"{op}-{version} \(opset {opset}\) does not accept bfloat16 inputs; it takes bool, .*"
        rf"uint8\. Use opset {first} or later, or cast the input\."
    )
    with pytest.raises(SplitTypeError, match=message):
        run(op, opset, SAMPLES["bfloat16"])


def test_split1_rejects_integers_and_points_to_opset2() -> None:
    message = r"Split-1 does not accept int32 inputs; it takes double, float, float16\. Use opset 2"
    with pytest.raises(SplitTypeError, match=message):
        run("Split", 1, SAMPLES["int32"])


@pytest.mark.parametrize(
    "dtype",
    ["datetime64[s]", "timedelta64[ms]", "V4", np.longdouble, ml_dtypes.float8_e4m3fn],
    ids=str,
)
@pytest.mark.parametrize(("op", "opset"), [("Split", 18), ("SplitToSequence", 24)])
def test_dtype_outside_the_sixteen_is_rejected(op: str, opset: int, dtype: Any) -> None:
    x = np.zeros((2, 4), dtype=dtype)
    shown = re.escape(str(x.dtype))
    message = rf"{op}-{opset} does not accept dtype {shown}: it is none of the 16 element types"
    with pytest.raises(SplitTypeError, match=message):
        run(op, opset, x)


@pytest.mark.parametrize("values", [[1, 2, 3, 4], [1.5, None, "a", b"b"]], ids=["ints", "mixed"])
def test_object_arrays_are_strings_without_inspecting_elements(values: list[Any]) -> None:
    x = np.array([values, values], dtype=object)
    assert element_of(x.dtype) == "string"
    with pytest.raises(SplitTypeError, match=r"Split-1 does not accept string inputs"):
        run("Split", 1, x)
    parts = run("Split", 13, x)
    assert [p.tolist() for p in parts] == [[values[:1]] * 2, [values[1:]] * 2]


@pytest.mark.parametrize("dtype", ["S2", np.dtypes.StringDType()], ids=["bytes", "StringDType"])
def test_bytes_and_stringdtype_arrays_are_strings(dtype: Any) -> None:
    x = np.array([["a", "bc", "", "d"]] * 2).astype(dtype)
    assert element_of(x.dtype) == "string"
    parts = run("SplitToSequence", 24, x)
    assert [p.tolist() for p in parts] == [x[:, i : i + 1].tolist() for i in range(4)]
