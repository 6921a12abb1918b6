"""Files written whole or not at all: the model tools and the command write through here.

A file is written under a temporary name in its own folder and renamed over the target only
once it is complete, so a reader never sees half a file, a failure leaves the target as it
was, and no partial file is left behind. The file gets the permissions a plain ``open``
would give it (those of the file it replaces, or the umask's), not the owner-only ones of a
temporary file.

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "parts.bin"
>>> with replacing(target) as stream:
...     _ = stream.write(b"whole")
>>> target.read_bytes(), sorted(p.name for p in target.parent.iterdir())
(b'whole', ['parts.bin'])
"""

from __future__ import annotations

import os
import re
import stat
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
    try:
        os.chmod(name, _mode_for(path))
    finally:
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


def _mode_for(path: Path) -> int:
    """The permissions ``path`` has, or would get from ``open``: read and write for whom
    the umask allows."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read where the system tells it without changing it (Linux)."""
    try:
        found = re.search(r"^Umask:\s*([0-7]+)", Path("/proc/self/status").read_text(), re.M)
    except OSError:
        found = None
    if found:
        return int(found[1], 8)
    mask = os.umask(0o022)  # elsewhere, set and put back at once
    os.umask(mask)
    return mask
