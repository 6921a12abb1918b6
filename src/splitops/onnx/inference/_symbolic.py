"""Symbolic axis lengths: ONNX ``dim_param`` strings as sympy expressions, and back.

Shape inference writes a part size that depends on a symbolic dim as a ``dim_param`` that
sympy parses back: integers, dim names, ``+ - * /`` (``/`` is exact division), and the
functions ``ceiling``, ``floor``, ``Min``, ``Max`` and ``Mod``. Every symbol stands for a
non-negative integer.

>>> n = parse_dim("N")
>>> format_dim(SYMBOLIC.minus(n, SYMBOLIC.ceil_div(n, 4), 3))
'N - 3*ceiling(N/4)'
>>> format_dim(parse_dim("ceiling(N/4)").subs(n, 9))
3
>>> parse_dim("batch size") is None
True
"""

from __future__ import annotations

import importlib
import keyword
import re
from functools import cache, lru_cache
from tokenize import TokenError
from typing import Any

import numpy as np

__all__ = ["SYMBOLIC", "format_dim", "parse_dim", "sympy"]


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

#: What a ``dim_param`` written by splitops may contain; anything else is an opaque name.
_DIM_SYNTAX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[-+*/(), ]")
_FUNCTION_NAMES = ("ceiling", "floor", "Min", "Max", "Mod")
_MAX_LENGTH = 512
#: The names the parser knows; every other name is a dim.
_PARSER_WORDS = frozenset({"Integer", "Symbol", *_FUNCTION_NAMES})


@cache
def _parser() -> tuple[Any, dict[str, Any], tuple[Any, ...]]:
    """sympy's parser, the names it knows, and its transformations."""
    parsing = importlib.import_module("sympy.parsing.sympy_parser")
    names = {name: getattr(sympy, name) for name in _PARSER_WORDS}
    return parsing.parse_expr, names, (parsing.auto_symbol, parsing.auto_number)


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


@lru_cache(maxsize=1024)
def parse_dim(text: str) -> Any:
    """``text`` (a ``dim_param``) as a sympy expression, or ``None`` if it is no expression
    of the syntax above (then it is only a name, and nothing is derived from it).

    Parsing runs sympy on the text only after every character has passed the syntax
    check, which admits no attribute access, strings or powers.
    """
    if not text or len(text) > _MAX_LENGTH or "**" in text:
        return None
    if text.isidentifier() and not keyword.iskeyword(text) and text not in _PARSER_WORDS:
        return sympy.Symbol(text, integer=True, nonnegative=True)  # a name: no parser needed
    if "".join(_DIM_SYNTAX.findall(text)) != text:
        return None
    parse_expr, names, transformations = _parser()
    try:
        expr = parse_expr(text, local_dict={}, global_dict=names, transformations=transformations)
    except (
        SyntaxError,
        TokenError,
        TypeError,
        ValueError,
        NameError,
        AttributeError,
        ZeroDivisionError,
        RecursionError,
    ):
        return None  # Mod(N, 0) or an unclosed "Mod(N, 0", say: not an expression of a length
    if not isinstance(expr, sympy.Expr) or expr.has(sympy.zoo, sympy.nan, sympy.oo):
        return None
    if expr.is_number and not (expr.is_integer and expr >= 0):
        return None
    dims = {s: sympy.Symbol(s.name, integer=True, nonnegative=True) for s in expr.free_symbols}
    return expr.xreplace(dims)


def format_dim(expr: Any) -> int | str:
    """A sympy size as an ONNX dim: an int when it is a number, else its ``dim_param`` text."""
    if isinstance(expr, int):
        return expr
    if isinstance(expr, sympy.Integer):
        return int(expr)
    return _text(expr)


@lru_cache(maxsize=4096)
def _text(expr: Any) -> str:
    return str(expr)
