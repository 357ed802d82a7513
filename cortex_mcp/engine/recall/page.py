"""Entity pages: what memory holds about one person, pet or place, at the head of a recall.

"Tell me about Anna", "what do you know about Anna?", "告诉我关于张伟的事", "田中さんについて教えて"
(the linking rules' `page_subject`), or recall's `about`, name the entity; its name or alias is
looked up by its normalised key. One entity found: the page (name, kind, aliases, summary, the
first and last time a memory is about it) heads the context, and the recall lifts the memories
linked to it. Several found (an alias two entities share): their names, and no page: a wrong
page is worse than none. A given name no entity has, nor alias, is asked as its other forms
("Bea": the one person called Beatrice). None found: an ordinary recall."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from cortex_mcp.engine.entities.given_names import other_forms
from cortex_mcp.engine.recall.gate import one_line
from cortex_mcp.engine.recall.when import dated
from cortex_mcp.models import Entity, EntityCandidate, EntityKind, EntityPage
from cortex_mcp.store.interfaces import EntityStorage
from cortex_mcp.tokenize import normalize_name


@dataclass
class PageLookup:
    """What a name or alias gave: one entity, or the candidates of an ambiguous one."""

    asked: str
    entity: Entity | None = None
    candidates: list[EntityCandidate] = field(default_factory=list)


async def find_page(entities: EntityStorage, agent_id: str, asked: str) -> PageLookup:
    """The entity `asked` names: by its canonical name first, else the one entity it is an
    alias of, else the one person known by another form of it; several entities by alias (or
    by name, or by other forms) are candidates."""
    key = normalize_name(asked)
    found = await entities.find_entities(agent_id, [key, *other_forms(asked)])
    matches = [m for m in found if m.key == key]
    if not matches:
        matches = [m for m in found if m.kind == EntityKind.person]
    named = [m for m in matches if m.by == "name"]
    chosen = {m.entity_id: m for m in (named or matches)}
    lookup = PageLookup(asked)
    if len(chosen) == 1:
        lookup.entity = await entities.get_entity(agent_id, next(iter(chosen)))
    elif chosen:
        lookup.candidates = [
            EntityCandidate(id=m.entity_id, name=m.name, kind=m.kind)
            for m in sorted(chosen.values(), key=lambda m: m.name)
        ]
    return lookup


def page_of(entity: Entity, memory_ids: list[str]) -> EntityPage:
    return EntityPage(
        id=entity.id,
        name=entity.name,
        kind=entity.kind,
        aliases=list(entity.aliases),
        summary=entity.summary,
        memory_ids=memory_ids,
        first_seen=entity.first_seen,
        last_seen=entity.last_seen,
    )


def page_text(page: EntityPage, now: datetime | None) -> str:
    """The head of the context: who or what it is, what else it is called, when memories are
    about it, and how many of those follow."""
    head = f"About {one_line(page.name)} ({page.kind.value}"
    if page.aliases:
        head += "; also called " + ", ".join(one_line(a) for a in page.aliases)
    head += ")"
    lines = [head + (f": {one_line(page.summary)}" if page.summary else "")]
    if page.first_seen and page.last_seen:
        lines.append(
            f"Memories about {one_line(page.name)} from {dated(page.first_seen, now)}"
            f" to {dated(page.last_seen, now)}; {len(page.memory_ids)} of them below."
        )
    return "\n".join(lines)


def candidates_text(asked: str | None, candidates: list[EntityCandidate]) -> str:
    """What an ambiguous name answers with at the head of the context."""
    names = ", ".join(f"{one_line(c.name)} ({c.kind.value})" for c in candidates)
    who = f'"{one_line(asked)}"' if asked else "The name asked about"
    return f"{who} could mean: {names}. Ask about one of them by name."
