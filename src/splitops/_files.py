"""Files written whole or not at all: the model tools and the command write through here.

A file is written under a temporary name in its own folder and renamed over the target only
once it is complete, so a reader never sees half a file, a failure leaves the target as it
was, and no partial file is left behind.

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "parts.bin"
>>> with replacing(target) as stream:
...     _ = stream.write(b"whole")
>>> target.read_bytes(), sorted(p.name for p in target.parent.iterdir())
(b'whole', ['parts.bin'])
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["replacing", "temporary_sibling"]


@contextmanager
def temporary_sibling(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path``, renamed over ``path`` when the block succeeds and
    removed when it fails."""
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


@contextmanager
def replacing(path: Path) -> Iterator[IO[bytes]]:
    """A binary stream whose bytes replace ``path`` only once the block succeeds."""
    with temporary_sibling(path) as temporary, temporary.open("wb") as stream:
        yield stream
