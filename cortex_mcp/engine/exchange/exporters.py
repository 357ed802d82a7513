"""Ways out.

JSON: every memory (all layers, forgotten and superseded ones too, so correction chains
survive), relations and the lifecycle log, one item per line so a bad line can be named; it
is written page by page (memory bounded by a page) and round-trips through `import`.
Markdown: the mirrors rendered once into a folder, exactly (every memory dated, content as
given), so that importing the folder gives them back. SQLite: a consistent, self-contained
copy through the online backup API while servers keep writing.

Every format follows one rule for where it writes: the parent folder must exist, and an
existing target is replaced only with `force`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from cortex_mcp.engine.exchange.jsonexport import SECTIONS, header, item_line
from cortex_mcp.engine.exchange.markdown import Relation, render_mirrors, sync_folder
from cortex_mcp.errors import InvalidInput
from cortex_mcp.store.interfaces import ExportStorage

Progress = Callable[[str, int, int | None], Any]
PAGE = 2000


def input_path(text: str) -> Path:
    path = Path(text).expanduser()
    if not path.exists():
        raise InvalidInput(f"path: no such file or folder {text}", field="path")
    return path


def output_path(text: str, *, folder: bool, force: bool) -> Path:
    """Where an export may write: a file (json, sqlite) or a folder (markdown) whose parent
    exists; an existing target only with `force`, and never a folder for a file or the
    reverse."""
    path = Path(text).expanduser()
    what = "a folder" if folder else "a file"
    if not path.parent.is_dir():
        raise InvalidInput(
            f"out: the folder {path.parent} does not exist; create it first", field="out"
        )
    if path.is_dir() and not folder:
        raise InvalidInput(f"out: {text} is a folder; this format writes {what}", field="out")
    if path.exists() and not path.is_dir() and folder:
        raise InvalidInput(f"out: {text} is a file; this format writes {what}", field="out")
    occupied = path.exists() and (not path.is_dir() or any(path.iterdir()))
    if occupied and not force:
        raise InvalidInput(
            f"out: {text} exists; choose a new {'folder' if folder else 'file'} or pass --force"
            " to replace it",
            field="out",
        )
    return path


async def document_parts(
    store: ExportStorage, agent_id: str | None, progress: Progress | None = None
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(section, item) for every item of an export, page by page."""
    total = await store.count_memories(agent_id)
    done = 0
    async for page in store.memory_pages(agent_id, PAGE):
        for memory in page:
            yield "memories", memory
        done += len(page)
        if progress is not None:
            progress("exporting", done, total)
    async for rows in store.relation_pages(agent_id, PAGE):
        for row in rows:
            yield "relations", row
    async for rows in store.log_pages(agent_id, PAGE):
        for row in rows:
            yield "lifecycle_log", row
    async for rows in store.entity_pages(agent_id, PAGE):
        for row in rows:
            yield "entities", row


async def export_document(
    store: ExportStorage, agent_id: str | None, exported_at: str
) -> dict[str, Any]:
    """The export as one JSON object (a REST response)."""
    document: dict[str, Any] = {
        "format": "cortex-mcp-export",
        "version": 1,
        "exported_at": exported_at,
        "agent_id": agent_id,
        **{section: [] for section in SECTIONS},
    }
    async for section, item in document_parts(store, agent_id):
        document[section].append(item)
    return document


async def export_json(
    store: ExportStorage,
    out: Path,
    agent_id: str | None,
    exported_at: str,
    progress: Progress | None = None,
) -> int:
    """Write the export to `out` (atomically, 0600); returns its line count."""
    fd, temp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            writer = _JsonWriter(handle)
            writer.write(header(exported_at, agent_id) + "\n")
            async for section, item in document_parts(store, agent_id, progress):
                writer.item(section, item)
            writer.finish()
        os.replace(temp, out)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    return writer.lines


class _JsonWriter:
    """The export's layout: the header line, then each section with one item per line."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.lines = 0
        self._pending = list(SECTIONS)  # sections not opened yet, in order
        self._open: str | None = None

    def write(self, text: str) -> None:
        self.handle.write(text)
        self.lines += text.count("\n")

    def item(self, section: str, item: dict[str, Any]) -> None:
        if section != self._open:
            self._close()
            while self._pending[0] != section:
                self.write(f', "{self._pending.pop(0)}": []\n')
            self.write(f', "{self._pending.pop(0)}": [\n')
            self._open = section
            self.write(item_line(item))
            return
        self.write(",\n" + item_line(item))

    def _close(self) -> None:
        if self._open is not None:
            self.write("\n]\n")
            self._open = None

    def finish(self) -> None:
        self._close()
        while self._pending:
            self.write(f', "{self._pending.pop(0)}": []\n')
        self.write("}\n")


async def export_markdown(
    store: ExportStorage,
    out: Path,
    agent_id: str,
    exported_at: str,
    word_budget: int,
    beliefs: list[dict[str, Any]],
) -> int:
    os.makedirs(out, exist_ok=True)
    files = await mirror_files(
        store, agent_id, exported_at, word_budget, exact=True, beliefs=beliefs
    )
    written, _ = sync_folder(out, files)
    return written


async def mirror_files(
    store: ExportStorage,
    agent_id: str,
    exported_at: str,
    word_budget: int,
    *,
    exact: bool = False,
    beliefs: list[dict[str, Any]] | None = None,
) -> dict[str, str]:
    """`beliefs`: the agent's beliefs with their evidence: the mirror's bank/ folder (opinions,
    world, experience, entity pages) is written when they are given."""
    memories = await store.memories(agent_id, live_only=True)
    relations = [
        Relation(r["subject"], r["predicate"], r["object"]) for r in await store.relations(agent_id)
    ]
    entities = [entity async for page in store.entity_pages(agent_id, PAGE) for entity in page]
    return render_mirrors(
        memories,
        relations,
        exported_at,
        word_budget,
        exact=exact,
        entities=entities,
        beliefs=beliefs,
        bank=beliefs is not None,
    )
