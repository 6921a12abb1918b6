"""What a long piece of work is doing now, told to whoever listens.

A tool reports each step it begins (:func:`report_progress`); nothing listens unless a caller
installs a listener for a block (:func:`progress_listener`), as the ``splitops`` command does
on a terminal, where it shows the step and the seconds spent. The listener is a context (a
:mod:`contextvars` variable: per thread and per task), so that reporting costs a lookup and
changes nothing for a library user.

>>> said = []
>>> with progress_listener(said.append):
...     report_progress("planning the rewrite")
>>> report_progress("unheard")
>>> said
['planning the rewrite']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["progress_listener", "report_progress"]

_LISTENER: ContextVar[Callable[[str], None] | None] = ContextVar("splitops_progress", default=None)


def report_progress(step: str) -> None:
    """Tell the listener, if any, that ``step`` begins (``"planning the rewrite"``)."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(step)


@contextmanager
def progress_listener(listener: Callable[[str], None]) -> Iterator[None]:
    """``listener`` hears every step reported inside the block."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
