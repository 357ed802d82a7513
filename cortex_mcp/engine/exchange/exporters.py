"""Ways out, and the write half of the way in.

JSON: every memory (all layers, forgotten and superseded ones too, so correction chains
survive), relations and the lifecycle log, one item per line so a bad line can be named; it
round-trips through `import`. Markdown: the mirrors, rendered once into a folder. SQLite: a
consistent copy through the online backup API while servers keep writing.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cortex_mcp.engine.exchange.importers import EXPORT_FORMAT, Parsed
from cortex_mcp.engine.exchange.markdown import Relation, render_mirrors, sync_folder, write_atomic
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import Memory
from cortex_mcp.store.exports import ExportStore, ImportCounts

Clean = Callable[[str], Awaitable[str]]
Progress = Callable[[int, int], Any]


@dataclass
class ImportReport:
    files: list[str] = field(default_factory=list)
    memories: int = 0
    relations: int = 0
    logs: int = 0
    existing: int = 0
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def input_path(text: str) -> Path:
    path = Path(text).expanduser()
    if not path.exists():
        raise InvalidInput(f"path: no such file or folder {text}", field="path")
    return path


def output_path(text: str, *, fresh: bool = False) -> Path:
    path = Path(text).expanduser()
    if fresh and path.exists():
        raise InvalidInput(f"out: {text} exists; choose a new file", field="out")
    return path


async def export_document(store: ExportStore, agent_id: str | None, exported_at: str) -> str:
    memories = await store.memories(agent_id)
    relations = await store.relations(agent_id)
    logs = await store.lifecycle_log()
    if agent_id is not None:
        mine = {m.id for m in memories}
        logs = [e for e in logs if any(i in mine for i in e["memory_ids"])]
    head = {"format": EXPORT_FORMAT, "version": 1, "exported_at": exported_at, "agent_id": agent_id}
    parts = [json.dumps(head, ensure_ascii=False)[:-1]]
    for key, items in (
        ("memories", [m.model_dump(mode="json") for m in memories]),
        ("relations", relations),
        ("lifecycle_log", logs),
    ):
        rows = ",\n".join(
            "  " + json.dumps(item, ensure_ascii=False, sort_keys=True) for item in items
        )
        parts.append(f', "{key}": [\n{rows}\n]' if rows else f', "{key}": []')
    return "\n".join(parts) + "\n}\n"


async def export_json(store: ExportStore, out: Path, agent_id: str | None, exported_at: str) -> int:
    text = await export_document(store, agent_id, exported_at)
    write_atomic(out, text)
    return text.count("\n")


async def export_markdown(
    store: ExportStore, out: Path, agent_id: str, exported_at: str, word_budget: int
) -> int:
    files = await mirror_files(store, agent_id, exported_at, word_budget)
    written, _ = sync_folder(out, files)
    return written


async def mirror_files(
    store: ExportStore, agent_id: str, exported_at: str, word_budget: int
) -> dict[str, str]:
    memories = await store.memories(agent_id, live_only=True)
    relations = [
        Relation(r["subject"], r["predicate"], r["object"]) for r in await store.relations(agent_id)
    ]
    return render_mirrors(memories, relations, exported_at, word_budget)


async def import_parsed(
    parsed: Parsed, store: ExportStore, clean: Clean, progress: Progress | None = None
) -> ImportReport:
    """Each file in one transaction, secrets redacted first; known content is skipped."""
    report = ImportReport(problems=[str(p) for p in parsed.problems])
    total = sum(len(f.memories) for f in parsed.files)
    done = 0
    for parsed_file in parsed.files:
        memories = [await _cleaned(m, clean) for m in parsed_file.memories]
        relations = [
            {**r, **{k: await clean(r[k]) for k in ("subject", "predicate", "object")}}
            for r in parsed_file.relations
        ]
        counts: ImportCounts = await store.import_all(memories, relations, parsed_file.logs)
        report.files.append(parsed_file.path)
        report.memories += counts.memories
        report.relations += counts.relations
        report.logs += counts.logs
        report.existing += counts.existing
        done += len(memories)
        if progress is not None:
            progress(done, total)
    return report


async def _cleaned(memory: Memory, clean: Clean) -> Memory:
    content = await clean(memory.content)
    return memory if content == memory.content else memory.model_copy(update={"content": content})
