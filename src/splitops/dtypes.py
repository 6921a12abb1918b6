"""The ONNX element type of an array's dtype, for any array library.

numpy-family dtypes (numpy, cupy, jax, dask, and ml_dtypes' bfloat16) are read by their
name and kind; other libraries (torch, array-api-strict) by the name their dtype prints as,
so no library needs to be imported here.

>>> import numpy as np
>>> element_type(np.dtype("float32")), element_type(np.dtype("<U3")), element_type(np.dtype("M8"))
('float', 'string', None)
"""

from __future__ import annotations

from functools import lru_cache

from .errors import SplitTypeError
from .opset_rules import OpsetRule

__all__ = ["check_element_type", "check_split_input_type", "element_type"]

_BY_NAME: dict[str, str] = {
    "bool": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float32": "float",
    "float64": "double",
    "complex64": "complex64",
    "complex128": "complex128",
}


@lru_cache(maxsize=256)
def element_type(dtype: object) -> str | None:
    """The ONNX name of ``dtype``'s element type, or ``None`` when ONNX has none for it.

    Strings are numpy ``str`` (``U``), ``bytes`` (``S``), ``StringDType`` or ``object`` arrays,
    as ONNX tools hold them; the elements of an object array are not inspected.
    """
    kind = getattr(dtype, "kind", None)
    if kind in ("U", "S", "O", "T"):  # T: numpy's StringDType
        return "string"
    name = getattr(dtype, "name", None) if kind is not None else None
    if not isinstance(name, str):
        name = str(dtype).rsplit(".", 1)[-1]
    return _BY_NAME.get(name)


def check_element_type(dtype: object, rule: OpsetRule) -> str:
    """The ONNX element type of ``dtype``, or SplitTypeError if ``rule``'s version rejects it.

    >>> import numpy as np
    >>> from splitops.opset_rules import opset_rule
    >>> check_element_type(np.dtype("int32"), opset_rule("Split", 1))
    Traceback (most recent call last):
    ...
    splitops.errors.SplitTypeError: Split-1 does not accept int32 inputs; ...
    """
    onnx_type = element_type(dtype)
    if onnx_type is None:
        raise SplitTypeError(
            f"{rule.name} has no ONNX element type for dtype {dtype}; it takes "
            f"{', '.join(sorted(rule.dtypes))}."
        )
    if onnx_type not in rule.dtypes:
        hint = (
            "bfloat16 arrives at Split-13 and SplitToSequence-24"
            if onnx_type == "bfloat16"
            else "Use a later opset or cast the input"
        )
        raise SplitTypeError(
            f"{rule.name} does not accept {onnx_type} inputs; it takes "
            f"{', '.join(sorted(rule.dtypes))}. {hint}."
        )
    return onnx_type


def check_split_input_type(split_dtype: object, input_type: str, rule: OpsetRule) -> None:
    """Check the dtype of a node's ``split`` input against the version's schema.

    Split-13 and 18 take int64 only; SplitToSequence takes int32 or int64; Split-1 types
    ``split`` as T, so it must have the input's own element type.

    >>> import numpy as np
    >>> from splitops.opset_rules import opset_rule
    >>> check_split_input_type(np.dtype("int32"), "float", opset_rule("Split", 13))
    Traceback (most recent call last):
    ...
    splitops.errors.SplitTypeError: Split-13 takes its split input as int64; int32 was given. ...
    """
    allowed = rule.split_input_types or frozenset({input_type})
    given = element_type(split_dtype)
    if given not in allowed:
        wanted = " or ".join(sorted(allowed))
        why = " (the input's type T)" if rule.split_input_types is None else ""
        raise SplitTypeError(
            f"{rule.name} takes its split input as {wanted}{why}; {given or split_dtype} was "
            f"given. Cast the split tensor to {sorted(allowed)[-1]}."
        )
