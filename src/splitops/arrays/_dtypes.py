"""The ONNX element type of an array's dtype, for any array library, and back to numpy.

Both directions read :class:`~splitops.core.ElementType`'s table. numpy-family dtypes (numpy,
cupy, jax, dask, and ml_dtypes' bfloat16) are read by their name and kind; other libraries'
(torch, array-api-strict) by the name their dtype prints as, so no library is imported here.

>>> import numpy as np
>>> element_of(np.dtype("float32")), element_of(np.dtype("<U3")), element_of(np.dtype("M8[s]"))
(<ElementType.FLOAT: 'float'>, <ElementType.STRING: 'string'>, 'datetime64[s]')
>>> numpy_dtype(ElementType.BFLOAT16)
dtype(bfloat16)
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ..core import ElementType

__all__ = ["NUMPY_ELEMENTS", "element_of", "numpy_dtype"]


def numpy_dtype(element: ElementType) -> np.dtype[Any]:
    """The numpy dtype that holds ``element`` (object arrays for strings)."""
    return _NUMPY_DTYPES[element]


def element_of(dtype: object) -> ElementType | str:
    """The element type of ``dtype``, or the text of a dtype that has none.

    Strings are numpy ``str`` (``U``), ``bytes`` (``S``), ``StringDType`` or ``object``
    arrays, as ONNX tools hold them; the elements of an object array are not inspected.
    """
    if isinstance(dtype, np.dtype):
        found = NUMPY_ELEMENTS.get(dtype)
        if found is not None:
            return found
        if dtype.kind in ("U", "S", "O", "T"):  # T: numpy's StringDType
            return ElementType.STRING
        return ElementType.from_name(dtype.name) or str(dtype)
    # torch.float32, array_api_strict.float32, or a numpy scalar type (jax's dtypes).
    name = getattr(dtype, "__name__", None) or str(dtype).rsplit(".", 1)[-1]
    return ElementType.from_name(name) or str(dtype)


_NUMPY_DTYPES: dict[ElementType, np.dtype[Any]] = {
    element: np.dtype(ml_dtypes.bfloat16 if element is ElementType.BFLOAT16 else element.numpy_name)
    for element in ElementType
}
#: The element type of each numpy dtype in the table (native byte order): the common case, in
#: one lookup. :func:`element_of` handles every other dtype.
NUMPY_ELEMENTS = {dtype: element for element, dtype in _NUMPY_DTYPES.items()}
