"""Symbolic axis lengths: ONNX ``dim_param`` names as sympy symbols, and the expressions of
them that inference writes.

A ``dim_param`` is a name, never arithmetic: two dims with the same ``dim_param`` are equal,
and nothing else is known of them. ``"N - N"`` is a name, not 0; ``"4"`` is a name, not the
number 4. Each name stands for a non-negative integer.

Shape inference writes a part size that depends on a name as an expression
(``N - 3*ceiling(N/4)``), and reads the dims it wrote back as those expressions, during the
same inference (:class:`DimParams`): to splitops, a model it inferred earlier holds names.

>>> params = DimParams()
>>> n = params.read("N")
>>> params.write(SYMBOLIC.minus(n, SYMBOLIC.ceil_div(n, 4), 3))
'N - 3*ceiling(N/4)'
>>> params.read("N - 3*ceiling(N/4)") == n - 3 * sympy.ceiling(n / 4)
True
>>> params.read("N - N"), DimParams().read("N - 3*ceiling(N/4)").is_Symbol
(N - N, True)
>>> params.write(sympy.ceiling(params.read("4") / 2)) is None
True
"""

from __future__ import annotations

import importlib
import keyword
import re
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from typing import Any

import numpy as np

__all__ = ["SYMBOLIC", "DimParams", "dim_symbol", "sympy"]


class _Sympy:
    """sympy, imported when a symbolic dim first needs it (it takes a third of a second): a
    model whose split axes are all static is checked without it. Each name read is kept on
    this object, so later reads cost what a module attribute costs."""

    def __getattr__(self, name: str) -> Any:
        value = getattr(_sympy(), name)
        setattr(self, name, value)
        return value


@cache
def _sympy() -> Any:
    try:
        module = importlib.import_module("sympy")
    except ModuleNotFoundError as missing:
        raise ImportError(
            "splitops shape inference (infer_shapes, check_model, `splitops infer` and "
            "`splitops check`) needs sympy for symbolic dims: pip install 'splitops[inference]'"
        ) from missing
    # Importing sympy leaves the FPU's invalid-operation flag raised. When the first use is
    # inside a numpy loop (np.frompyfunc, as the values module maps value items), numpy
    # reads the flag when the loop ends and warns "invalid value encountered" for a value
    # that is fine. One numpy operation clears the flag.
    np.add(0.0, 0.0)
    return module


#: sympy, loaded at first use.
sympy: Any = _Sympy()

#: A name that an expression may hold: an identifier that no function of the expressions
#: is called. An expression over any other name (``batch size``, ``4``, ``N - N``) would
#: read as other arithmetic (``ceiling(4/2)``), so it is not written.
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNCTION_NAMES = frozenset({"ceiling", "floor", "Min", "Max", "Mod"})


class SymbolicArithmetic:
    """:class:`~splitops.core.DimArithmetic` over sympy expressions of dim names."""

    def known(self, dim: Any) -> int | None:
        return int(dim) if isinstance(dim, (int, sympy.Integer)) else None

    def is_size(self, value: object) -> bool:
        return isinstance(value, sympy.Expr) and value.is_integer is not False

    def exact_div(self, dim: Any, count: int) -> Any:
        return dim / count

    def ceil_div(self, dim: Any, count: int) -> Any:
        return sympy.ceiling(dim / count)

    def minus(self, dim: Any, part: Any, times: int) -> Any:
        return dim - part * times


#: The arithmetic shape inference hands to the planner for symbolic dims.
SYMBOLIC = SymbolicArithmetic()


@lru_cache(maxsize=4096)
def dim_symbol(name: str) -> Any:
    """The symbol of a ``dim_param``: the name stands for a non-negative integer."""
    return sympy.Symbol(name, integer=True, nonnegative=True)


def _plain(symbol: Any) -> bool:
    name = symbol.name
    return (
        not isinstance(symbol, sympy.Dummy)
        and _PLAIN_NAME.fullmatch(name) is not None
        and not keyword.iskeyword(name)
        and name not in _FUNCTION_NAMES
    )


class DimParams:
    """The ``dim_param`` texts of one inference: what each text read stands for, and the
    text of each expression written.

    A text stands for its own name (:func:`dim_symbol`), unless this inference wrote it for
    an expression: then it stands for that expression, so that the dims of one Split's
    outputs add up again in the next node. An expression's text is written only where it
    cannot be taken for a name of the model (``taken``): writing it would claim that the
    two dims are equal. A model that splitops inferred and that is inferred again holds
    the expressions as names, and they pass through as names.
    """

    def __init__(self, taken: Iterable[str] | Callable[[], Iterable[str]] = ()) -> None:
        #: The model's names, or the function that finds them: called at the first
        #: expression written (a model whose sizes are all numbers writes none).
        self._taken: frozenset[str] | Callable[[], Iterable[str]] = (
            taken if callable(taken) else frozenset(taken)
        )
        self._written: dict[str, Any] = {}

    def read(self, text: str) -> Any:
        """What a ``dim_param`` stands for: an expression this inference wrote, else a name."""
        found = self._written.get(text)
        return dim_symbol(text) if found is None else found

    def write(self, size: Any) -> int | str | None:
        """A size as an ONNX dim: an int when it is a number, the text of a name or an
        expression, or ``None`` (unknown) for an expression that cannot be written: one over
        a name of another syntax, or whose text is a name of the model."""
        if isinstance(size, int):
            return size
        if isinstance(size, sympy.Integer):
            return int(size)
        if isinstance(size, sympy.Symbol):
            return None if isinstance(size, sympy.Dummy) else str(size.name)
        if not all(_plain(symbol) for symbol in size.free_symbols):
            return None
        text = _text(size)
        known = self._written.get(text)
        if known is None:
            if callable(self._taken):
                self._taken = frozenset(self._taken())
            if text in self._taken:
                return None
            self._written[text] = size
        elif known != size:
            return None
        return text


@lru_cache(maxsize=4096)
def _text(expr: Any) -> str:
    return str(expr)
