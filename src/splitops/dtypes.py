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

from .errors import SplitError, SplitTypeError
from .opset_rules import ALL_ELEMENT_TYPES, OPSET_RULES, OpsetRule

__all__ = ["check_element_type", "check_split_dtype", "check_split_input_type", "element_type"]

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


_INTEGERS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_FLOATS = frozenset({"float16", "bfloat16", "float", "double"})


def element_type(dtype: object) -> str | None:
    """The ONNX name of ``dtype``'s element type, or ``None`` when ONNX has none for it.

    Strings are numpy ``str`` (``U``), ``bytes`` (``S``), ``StringDType`` or ``object`` arrays,
    as ONNX tools hold them; the elements of an object array are not inspected.
    """
    # The cache is keyed on the dtype's module first: array-api-strict dtypes hash like numpy's
    # and warn when a cache lookup compares the two.
    return _element_type(type(dtype).__module__, dtype)


@lru_cache(maxsize=256)
def _element_type(module: str, dtype: object) -> str | None:
    kind = getattr(dtype, "kind", None)
    if kind in ("U", "S", "O", "T"):  # T: numpy's StringDType
        return "string"
    name = getattr(dtype, "name", None) if kind is not None else None
    if not isinstance(name, str):
        name = str(dtype).rsplit(".", 1)[-1]
    return _BY_NAME.get(name)


def check_element_type(dtype: object, rule: OpsetRule, *, opset: int | None = None) -> str:
    """The ONNX element type of ``dtype``, or SplitTypeError if ``rule``'s version rejects it.

    ``opset`` is the opset the caller asked for, named in the message when it differs from
    the version it resolved to.

    >>> import numpy as np
    >>> from splitops.opset_rules import opset_rule
    >>> check_element_type(np.dtype("int32"), opset_rule("Split", 1))
    Traceback (most recent call last):
    ...
    splitops.errors.SplitTypeError: Split-1 does not accept int32 inputs; ... Use opset 2 ...
    """
    onnx_type = element_type(dtype)
    if onnx_type is not None and onnx_type in rule.dtypes:
        return onnx_type
    where = rule.name if opset in (None, rule.since_version) else f"{rule.name} (opset {opset})"
    accepted = ", ".join(sorted(rule.dtypes))
    if onnx_type is None:
        raise SplitTypeError(
            f"{where} does not accept dtype {dtype}: it is none of the "
            f"{len(ALL_ELEMENT_TYPES)} element types Split and SplitToSequence know. "
            f"It takes {accepted}. Cast the input.",
            rule="dtype",
        )
    later = [
        version
        for (op, version), other in OPSET_RULES.items()
        if op == rule.op and version > rule.since_version and onnx_type in other.dtypes
    ]
    hint = f"Use opset {min(later)} or later, or cast the input" if later else "Cast the input"
    raise SplitTypeError(
        f"{where} does not accept {onnx_type} inputs; it takes {accepted}. {hint}.",
        rule="dtype",
    )


def check_split_dtype(dtype: object, rule: OpsetRule) -> None:
    """SplitTypeError unless an array of ``dtype`` may hold ``split`` sizes for ``rule``.

    Integers always may; floats only where the version types ``split`` like its input
    (Split-1). The dtype decides even when the array is empty.

    >>> import numpy as np
    >>> from splitops.opset_rules import opset_rule
    >>> check_split_dtype(np.dtype("float32"), opset_rule("SplitToSequence", 24))
    Traceback (most recent call last):
    ...
    splitops.errors.SplitTypeError: SplitToSequence-24 split must be an integer array; ...
    """
    onnx_type = element_type(dtype)
    if onnx_type in _INTEGERS or (rule.split_may_be_float and onnx_type in _FLOATS):
        return
    allowed = "an integer or float array" if rule.split_may_be_float else "an integer array"
    raise SplitTypeError(
        f"{rule.name} split must be {allowed}; an array of dtype {dtype} was given. "
        "Cast the sizes to int64.",
        rule="split-dtype",
    )


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
    allowed = frozenset({input_type}) if rule.split_input_types is None else rule.split_input_types
    if not allowed:
        raise SplitError(
            f"{rule.name} has no split input; give the sizes as the split attribute.",
            rule="split-source",
        )
    given = element_type(split_dtype)
    if given not in allowed:
        wanted = " or ".join(sorted(allowed))
        why = " (the input's type T)" if rule.split_input_types is None else ""
        raise SplitTypeError(
            f"{rule.name} takes its split input as {wanted}{why}; {given or split_dtype} was "
            f"given. Cast the split tensor to {sorted(allowed)[-1]}.",
            rule="split-dtype",
        )
