"""Files written whole or not at all, and read without leaving a folder: the model tools and
the command write through here, and the conformance pack is read through :class:`FolderReader`.

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
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

__all__ = ["FolderReader", "folder_mode", "make_folder", "replacing", "temporary_sibling"]


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


class FolderReader:
    """A folder whose files are read without ever leaving it: a file or a folder in it is
    opened only by its name in the folder's own descriptor, never through a symbolic link
    (``O_NOFOLLOW``), never blocking (a FIFO opens at once and is refused), and only a
    regular file of one hard link (another name may lie anywhere) is read, at most ``limit``
    bytes of it. The folder itself is the one named: a link there is followed, as the name
    was given.

    Every refusal is an ``OSError`` naming the path and saying why (``errno`` ``ELOOP`` for a
    link, ``EINVAL`` for a file of another kind, ``EMLINK`` for one of several links,
    ``EFBIG`` for one over ``limit``).

    >>> import tempfile, pathlib, os
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("hello")
    >>> os.symlink("/etc/passwd", folder / "link")
    >>> reader = FolderReader.open(folder)
    >>> reader.read("a.txt", limit=100)
    b'hello'
    >>> reader.read("link", limit=100)
    Traceback (most recent call last):
    ...
    OSError: [Errno 40] it is a symbolic link, which is not followed: '.../link'
    >>> reader.close()
    """

    def __init__(self, path: Path, descriptor: int | None) -> None:
        self.path = path
        self._descriptor = descriptor

    @classmethod
    def open(cls, path: Path) -> FolderReader:
        """The folder at ``path`` (``NotADirectoryError``, ``FileNotFoundError`` otherwise)."""
        path = Path(path)
        if not _DIR_FD:
            if not path.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "it is not a folder", str(path))
            return cls(path, None)
        flags = os.O_RDONLY | os.O_DIRECTORY | _NONBLOCK
        try:
            return cls(path, os.open(path, flags))
        except NotADirectoryError:
            raise NotADirectoryError(errno.ENOTDIR, "it is not a folder", str(path)) from None

    def __enter__(self) -> FolderReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None

    def folder(self, name: str) -> FolderReader:
        """The folder ``name`` in this one, refused where it is a link or no folder."""
        path = self._inside(name)
        if self._descriptor is None:
            self._check_status(os.lstat(path), path, folder=True)
            return FolderReader(path, None)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _NONBLOCK
        try:
            descriptor = os.open(name, flags, dir_fd=self._descriptor)
        except OSError as error:
            raise self._refusal(error, name, path) from None
        return FolderReader(path, descriptor)

    def read(self, name: str, *, limit: int) -> bytes:
        """The bytes of the regular file ``name`` in this folder, of at most ``limit``."""
        path = self._inside(name)
        if self._descriptor is None:
            self._check_status(os.lstat(path), path, folder=False, limit=limit)
            descriptor = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_BINARY", 0))
        else:
            flags = os.O_RDONLY | os.O_NOFOLLOW | _NONBLOCK
            try:
                descriptor = os.open(name, flags, dir_fd=self._descriptor)
            except OSError as error:
                raise self._refusal(error, name, path) from None
        with os.fdopen(descriptor, "rb") as stream:
            self._check_status(os.fstat(descriptor), path, folder=False, limit=limit)
            data = stream.read(limit + 1)
        if len(data) > limit:
            raise OSError(errno.EFBIG, f"it grew past {limit} bytes while it was read", str(path))
        return data

    def _inside(self, name: str) -> Path:
        if name in ("", ".", "..") or Path(name).name != name or "\0" in name:
            raise OSError(errno.EINVAL, "it is no name of a file in the folder", name)
        return self.path / name

    def _refusal(self, error: OSError, name: str, path: Path) -> OSError:
        """What opening ``name`` without following links failed on, in words (a link to a
        folder fails ``O_DIRECTORY | O_NOFOLLOW`` as no folder)."""
        link = error.errno in (errno.ELOOP, errno.EMLINK)
        if not link and self._descriptor is not None:
            with suppress(OSError):
                link = stat.S_ISLNK(
                    os.stat(name, dir_fd=self._descriptor, follow_symlinks=False).st_mode
                )
        if link:
            return OSError(errno.ELOOP, "it is a symbolic link, which is not followed", str(path))
        if error.errno == errno.ENOTDIR:
            return NotADirectoryError(errno.ENOTDIR, "it is not a folder", str(path))
        return type(error)(error.errno, error.strerror or str(error), str(path))

    @staticmethod
    def _check_status(status: os.stat_result, path: Path, *, folder: bool, limit: int = 0) -> None:
        if stat.S_ISLNK(status.st_mode):
            raise OSError(errno.ELOOP, "it is a symbolic link, which is not followed", str(path))
        if folder:
            if not stat.S_ISDIR(status.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "it is not a folder", str(path))
            return
        if not stat.S_ISREG(status.st_mode):
            raise OSError(
                errno.EINVAL, "it is not a regular file (a folder, a device or a pipe)", str(path)
            )
        if status.st_nlink > 1:
            raise OSError(
                errno.EMLINK,
                f"it has {status.st_nlink} hard links, and the others may lie anywhere; copy "
                "the file instead of linking it",
                str(path),
            )
        if status.st_size > limit:
            raise OSError(
                errno.EFBIG, f"it holds {status.st_size} bytes, over the {limit} allowed", str(path)
            )


#: Whether files can be opened relative to a folder's descriptor (POSIX), so that no link
#: swapped in between a check and an open is followed.
_DIR_FD = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
