"""A package face whose names are imported at their first use (PEP 562): importing the face
costs nothing, and a name brings in only the module that defines it (a runtime's worker
imports its runtime, not every module of the package)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, modules: Mapping[str, Sequence[str]], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the face of ``package`` (whose globals are
    ``namespace``): each name of ``modules`` (module -> names) is read from its module, below
    ``package``, at its first use, and kept in ``namespace``; another name is an
    ``AttributeError``."""
    where = {name: f"{package}.{module}" for module, names in modules.items() for name in names}

    def attribute(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(where[name]), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return attribute, names
