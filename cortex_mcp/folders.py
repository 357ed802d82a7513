"""Folders cortex creates: 0700, so other users of the machine cannot list or read them."""

from __future__ import annotations

import contextlib
from pathlib import Path

FOLDER_MODE = 0o700


def create_private_folders(folder: Path) -> None:
    """Create `folder` and its missing parents with mode 0700; a folder the user already had is
    left as it is."""
    missing: list[Path] = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        with contextlib.suppress(FileExistsError):
            each.mkdir(mode=FOLDER_MODE)
