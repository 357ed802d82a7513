"""Our JSON export, read back as a stream of items.

The export writes its header on the first line and one item per line after it, so a file in
that layout is read line by line (memory bounded by a line, errors named by line). Any other
layout of the same document (pretty-printed by hand, or a request body) is parsed whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from cortex_mcp.engine.exchange.common import BadLine, Item, ItemKind
from cortex_mcp.engine.exchange.sources import Source

EXPORT_FORMAT = "cortex-mcp-export"
SECTIONS: dict[str, ItemKind] = {
    "memories": "memory",
    "relations": "relation",
    "lifecycle_log": "log",
    "entities": "entity",
}


def read_export(source: Source) -> Iterator[Item]:
    if source.document is not None:
        yield from _from_document(source.document, source.name)
        return
    lines = source.lines()
    first = next(lines, "")
    head = _head(first)
    if head is None:  # not our line layout: the document as a whole
        text = "\n".join([first, *lines])
        yield from _from_document(_loads(text, 1), source.name)
        return
    yield from _from_lines(lines, source.name)


def _loads(text: str, line: int) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadLine(line + exc.lineno - 1, f"not JSON ({exc.msg})") from None
    except RecursionError:
        raise BadLine(line, "not JSON (nested too deep)") from None


def _head(line: str) -> dict[str, Any] | None:
    """The first line of an export in our layout: the header object without its `}`."""
    if not line.startswith("{") or line.rstrip().endswith("}"):
        return None
    try:
        head = json.loads(line + "}")
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(head, dict) or head.get("format") != EXPORT_FORMAT:
        return None
    return head


def _check_format(document: Any) -> dict[str, Any]:
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise BadLine(1, f'not a cortex-mcp export (expected "format": "{EXPORT_FORMAT}")')
    return document


def _from_document(document: Any, name: str) -> Iterator[Item]:
    data = _check_format(document)
    for section, kind in SECTIONS.items():
        items = data.get(section, [])
        if not isinstance(items, list):
            raise BadLine(None, f"{section}: must be a list")
        for index, item in enumerate(items):
            label = f"{section}[{index}]"
            if not isinstance(item, dict):
                raise BadLine(None, f"{label}: must be a JSON object")
            yield Item(kind, f"{name} {label}", item, label)


def _from_lines(lines: Iterator[str], name: str) -> Iterator[Item]:
    section: str | None = None
    index = 0
    for number, raw in enumerate(lines, start=2):
        line = raw.strip()
        if section is None:
            if line == "}":
                return
            section = _section_start(line, number)
            index = 0
            if line.endswith("[]"):
                section = None
            continue
        if line == "]":
            section = None
            continue
        item = _loads(line.removesuffix(","), number)
        label = f"{section}[{index}]"
        if not isinstance(item, dict):
            raise BadLine(number, f"{label}: must be a JSON object")
        yield Item(SECTIONS[section], f"{name}:{number}", item, label)
        index += 1
    if section is not None:
        raise BadLine(None, f"the file ends inside {section!r} (cut short?)")


def _section_start(line: str, number: int) -> str:
    for section in SECTIONS:
        if line in (f', "{section}": [', f', "{section}": []'):
            return section
    raise BadLine(number, 'expected `, "memories": [` (or relations, lifecycle_log) here')


def header(exported_at: str, agent_id: str | None) -> str:
    """The first line: the header object, left open for the sections that follow."""
    head = {"format": EXPORT_FORMAT, "version": 1, "exported_at": exported_at, "agent_id": agent_id}
    return json.dumps(head, ensure_ascii=False)[:-1]


def item_line(item: dict[str, Any]) -> str:
    return "  " + json.dumps(item, ensure_ascii=False, sort_keys=True)
