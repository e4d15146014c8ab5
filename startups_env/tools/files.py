"""Writing files so that no reader ever sees a torn one: logs, replays, results, checkpoints."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import IO, Any


def atomic_write(path, write: Callable[[IO[Any]], object], *, binary: bool = True, durable: bool = False,
                 make_folders: bool = False) -> None:
    """Call ``write(f)`` on a temporary file in ``path``'s folder, then rename it over
    ``path``: a reader (or a resume after a crash) finds the old file or the new one,
    never half of one. If writing or renaming fails, the temporary file is removed, so a
    failed write leaves the folder as it was.

    The temporary file has a unique name (two processes may write the same path) and the
    permissions of a plain ``open(path, "w")`` (the umask decides; ``tempfile.mkstemp``
    would make every result private, 0600).

    binary: the file object is opened in binary mode (else text, UTF-8).
    durable: flush to disk before the rename (checkpoints: a power cut right after must
        not leave an empty file under the new name).
    make_folders: create missing folders of ``path`` first.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if make_folders:
        os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as f:
            write(f)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
