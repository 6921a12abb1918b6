"""Files written whole or not at all: the model tools and the command write through here.

A file is written under a temporary name in its own folder and renamed over the target only
once it is complete, so a reader never sees half a file, a failure leaves the target as it
was, and no partial file is left behind. The file gets the permissions a plain ``open``
would give it (those of the file it replaces, or the umask's), not the owner-only ones of a
temporary file. Missing folders above the target are created, as for every file splitops
writes (``-o`` and ``--out`` alike), and an error names the target, never the temporary file:

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> with replacing(folder) as stream:
...     pass
Traceback (most recent call last):
...
IsADirectoryError: [Errno 21] it is a folder; name a file in it: '...'

>>> target = folder / "new" / "parts.bin"
>>> with replacing(target) as stream:
...     _ = stream.write(b"whole")
>>> target.read_bytes(), sorted(p.name for p in target.parent.iterdir())
(b'whole', ['parts.bin'])
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["folder_mode", "make_folder", "replacing", "temporary_sibling"]


@contextmanager
def temporary_sibling(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path``, renamed over ``path`` when the block succeeds and
    removed when it fails. The folders above ``path`` are created where missing. An
    ``OSError`` names ``path`` (and the folder, where one cannot be made), never the
    temporary file."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "it is a folder; name a file in it", str(path))
    make_folder(path.parent, path)
    try:
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            os.chmod(name, _mode_for(path))
        finally:
            os.close(handle)
    except OSError as error:
        raise _naming(error, path) from error
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise _naming(error, path) from error
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def make_folder(folder: Path, target: Path | None = None) -> None:
    """Create ``folder`` and the folders above it where missing, or raise an ``OSError``
    that names ``target`` (default: ``folder``) and the file in the way or the folder that
    cannot be made."""
    target = folder if target is None else target
    if folder.exists() and not folder.is_dir():
        why = f"{folder} is a file, not a folder"
        if target == folder:
            why = "it is a file; name a folder"
        raise NotADirectoryError(errno.ENOTDIR, why, str(target))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        blocking = next((f for f in folder.parents if f.exists()), None)
        why = (
            f"{blocking} is a file, not a folder"
            if blocking is not None and not blocking.is_dir()
            else f"cannot create the folder {folder}: {error.strerror or error}"
        )
        raise type(error)(error.errno, why, str(target)) from error


def folder_mode() -> int:
    """The permissions ``mkdir`` gives a new folder (what the umask allows of ``0o777``): for
    a folder made by ``tempfile.mkdtemp`` (owner only) that is renamed into place."""
    return 0o777 & ~_umask()


def _naming(error: OSError, path: Path) -> OSError:
    """``error``, naming ``path`` where it names a temporary file beside it, or no file."""
    named = error.filename
    if named is not None and not Path(named).name.startswith(f".{path.name}."):
        return error
    return type(error)(error.errno, error.strerror or str(error), str(path))


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
