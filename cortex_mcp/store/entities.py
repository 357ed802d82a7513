"""Entities per agent: their names and aliases, the links from memories to them, the references
an ambiguous alias left unresolved, and the verbs that mend them (alias, merge, rename, undo),
each logged in `entity_log` with what it changed. The same SQL on SQLite and PostgreSQL.

Names and aliases are compared by their key (`tokenize.normalize_name`). A name is unique per
agent; an alias key may belong to several entities (the resolution then links none). A link
holds one role per memory and entity, the strongest said (speaker > subject > mentioned);
`mention_count`, `first_seen` and `last_seen` follow the links (the memories' `occurred_at`)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from typing import Any

from cortex_mcp.errors import InvalidInput, NotFound
from cortex_mcp.models import (
    ROLE_STRENGTH,
    AliasOrigin,
    Entity,
    EntityAlias,
    EntityKind,
    EntityLinks,
    EntityMatch,
    EntityRef,
    LinkPlan,
    LinkReport,
    LinkRole,
    UnresolvedRef,
    new_id,
)
from cortex_mcp.store.database import OF_AGENT
from cortex_mcp.store.interfaces import Connection, DatabaseHandle, Read, Row
from cortex_mcp.tokenize import normalize_name

_ENTITY_COLUMNS = (
    "id, agent_id, name, kind, summary, first_seen, last_seen, mention_count, created_at,"
    " updated_at"
)
_LIVE = "m.forgotten_at IS NULL AND m.superseded_by IS NULL"
_ROLES = {role.value: role for role in LinkRole}
_KINDS = {kind.value: kind for kind in EntityKind}
# a role's strength in SQL, so the stronger of two links to one entity is kept
_STRENGTH_SQL = "CASE {col} WHEN 'speaker' THEN 3 WHEN 'subject' THEN 2 ELSE 1 END"


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


# ---- rows within a transaction -------------------------------------------------------------


def _own_memories(
    conn: Connection, agent_id: str, ids: Sequence[str], *, live: bool = False
) -> set[str]:
    """Those of `ids` that are memories of `agent_id` (and not forgotten, when `live`): each
    found by its id and the agent checked on its row (`OF_AGENT`; given the agent plainly,
    SQLite walks the agent's index, every memory of the agent for each read, which an import
    does once per batch)."""
    condition = " AND forgotten_at IS NULL" if live else ""
    owned: set[str] = set()
    for start in range(0, len(ids), _LOOKUP_CHUNK):
        chunk = ids[start : start + _LOOKUP_CHUNK]
        rows = conn.execute(
            f"SELECT id FROM memories WHERE id IN ({_marks(chunk)}) AND {OF_AGENT}{condition}",
            [*chunk, agent_id],
        ).fetchall()
        owned |= {str(row[0]) for row in rows}
    return owned


def _entity_id_in(
    conn: Connection, agent_id: str, name: str, kind: EntityKind, now: str
) -> tuple[str, bool]:
    """The id of `agent_id`'s entity named `name` (by key), created when there is none (then
    True)."""
    key = normalize_name(name)
    cursor = conn.execute(
        "INSERT INTO entities (id, agent_id, name, name_key, kind, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, name_key) DO NOTHING",
        (entity_id := new_id(), agent_id, name.strip(), key, kind.value, now, now),
    )
    if cursor.rowcount > 0:
        return entity_id, True
    row = conn.execute(
        "SELECT id FROM entities WHERE agent_id = ? AND name_key = ?", (agent_id, key)
    ).fetchone()
    return str(row[0]), False


def _owned_entity(conn: Connection, agent_id: str, entity_id: str, field_: str = "id") -> Row:
    row = conn.execute(
        f"SELECT {_ENTITY_COLUMNS}, name_key FROM entities WHERE id = ? AND agent_id = ?",
        (entity_id, agent_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"{field_}: no entity {entity_id} for agent {agent_id!r}", field=field_)
    return row


def _link_in(
    conn: Connection, agent_id: str, memory_id: str, entity_id: str, role: LinkRole
) -> bool:
    """Link a memory to an entity (the stronger role kept); True when the link is new. The
    insert yields to a link another transaction made meanwhile (the background linker and a
    verb on PostgreSQL), rather than failing on the key."""
    inserted = conn.execute(
        "INSERT INTO memory_entities (memory_id, entity_id, agent_id, role) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (memory_id, entity_id) DO NOTHING",
        (memory_id, entity_id, agent_id, role.value),
    ).rowcount
    if inserted:
        return True
    before = conn.execute(
        "SELECT role FROM memory_entities WHERE memory_id = ? AND entity_id = ?",
        (memory_id, entity_id),
    ).fetchone()
    if before is not None and ROLE_STRENGTH[role] > ROLE_STRENGTH[_ROLES[before[0]]]:
        conn.execute(
            "UPDATE memory_entities SET role = ? WHERE memory_id = ? AND entity_id = ?",
            (role.value, memory_id, entity_id),
        )
    return False


def _seen_in(conn: Connection, entity_id: str, memory_id: str, now: str) -> None:
    """One more memory names the entity: its count and first/last seen follow."""
    occurred = conn.execute("SELECT occurred_at FROM memories WHERE id = ?", (memory_id,))
    row = occurred.fetchone()
    at = row[0] if row is not None else None
    conn.execute(
        "UPDATE entities SET mention_count = mention_count + 1, updated_at = ?,"
        " first_seen = CASE WHEN first_seen IS NULL OR ? < first_seen THEN ? ELSE first_seen END,"
        " last_seen = CASE WHEN last_seen IS NULL OR ? > last_seen THEN ? ELSE last_seen END"
        " WHERE id = ?",
        (now, at, at, at, at, entity_id),
    )


def recount_in(conn: Connection, entity_ids: Sequence[str]) -> None:
    """Count each entity's linked memories and their first and last moment again (after links
    went: a forget, a merge, an undo). An entity no memory names any more keeps its last
    first/last seen."""
    for entity_id in dict.fromkeys(entity_ids):
        row = conn.execute(
            "SELECT COUNT(*), MIN(m.occurred_at), MAX(m.occurred_at) FROM memory_entities l"
            " JOIN memories m ON m.id = l.memory_id WHERE l.entity_id = ?",
            (entity_id,),
        ).fetchone()
        count = int(row[0] or 0)
        if count:
            conn.execute(
                "UPDATE entities SET mention_count = ?, first_seen = ?, last_seen = ? WHERE id = ?",
                (count, row[1], row[2], entity_id),
            )
        else:
            conn.execute("UPDATE entities SET mention_count = 0 WHERE id = ?", (entity_id,))


def drop_links_in(conn: Connection, memory_ids: Sequence[str], *, erase: bool = False) -> None:
    """A memory forgotten or erased names nobody any more: its links and unresolved references
    go, and the entities it named are counted again. `erase` (a purge): an entity it named that
    no live memory names any more goes too, with its aliases, since its name is the memory's
    words (a later memory that names it again makes it anew)."""
    if not memory_ids:
        return
    marks = _marks(memory_ids)
    rows = conn.execute(
        f"SELECT DISTINCT entity_id FROM memory_entities WHERE memory_id IN ({marks})",
        list(memory_ids),
    ).fetchall()
    conn.execute(f"DELETE FROM memory_entities WHERE memory_id IN ({marks})", list(memory_ids))
    conn.execute(f"DELETE FROM entity_unresolved WHERE memory_id IN ({marks})", list(memory_ids))
    named = [str(row[0]) for row in rows]
    recount_in(conn, named)
    if erase:
        for entity_id in named:
            conn.execute(
                "DELETE FROM entities WHERE id = ? AND NOT EXISTS"
                " (SELECT 1 FROM memory_entities WHERE entity_id = ?)",
                (entity_id, entity_id),
            )


def _add_alias_in(
    conn: Connection,
    agent_id: str,
    entity_id: str,
    alias: str,
    origin: AliasOrigin,
    speaker_id: str | None,
    now: str,
) -> bool:
    """An alias of an entity (not its own name); True when it is new."""
    key = normalize_name(alias)
    if not key:
        return False
    own = conn.execute("SELECT name_key FROM entities WHERE id = ?", (entity_id,)).fetchone()
    if own is not None and own[0] == key:
        return False
    cursor = conn.execute(
        "INSERT INTO entity_aliases (entity_id, agent_id, alias_key, alias, origin, speaker_id,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (entity_id, alias_key) DO NOTHING",
        (entity_id, agent_id, key, alias.strip(), origin.value, speaker_id, now),
    )
    return cursor.rowcount > 0


def _log_in(
    conn: Connection,
    agent_id: str,
    action: str,
    entity_ids: Sequence[str],
    details: dict[str, Any],
    now: str,
) -> int:
    row = conn.execute(
        "INSERT INTO entity_log (agent_id, action, entity_ids, details, executed_at)"
        " VALUES (?, ?, ?, ?, ?) RETURNING id",
        (agent_id, action, json.dumps(list(entity_ids)), json.dumps(details), now),
    ).fetchone()
    return int(row[0])


def apply_plans_in(
    conn: Connection, agent_id: str, plans: Sequence[LinkPlan], now: str
) -> list[LinkReport]:
    """Link memories as their plans say, inside the caller's transaction: entities named for
    the first time are created, aliases a rule found are kept, unresolved references kept.
    The entities the plans name are looked up in one read and each created at most once; the
    links and unresolved references are written together at the end (a few statements per
    batch, not one per row: an import links thousands), and an entity's count and first/last
    seen move once for all of its new links."""
    batch = _Batch(conn, agent_id, now)
    batch.prefetch(plans)
    reports = [_apply_plan(batch, plan) for plan in plans]
    batch.write_links()
    batch.write_unresolved()
    batch.count_mentions()
    return reports


class _Batch:
    """What the plans of one transaction share: the ids of the entities named so far (by name
    key; nothing else creates or renames an entity meanwhile), the links and unresolved
    references to write, and the memories newly linked to each entity."""

    def __init__(self, conn: Connection, agent_id: str, now: str) -> None:
        self.conn, self.agent_id, self.now = conn, agent_id, now
        self._ids: dict[str, str] = {}
        self._seen: dict[str, list[str]] = {}
        self._links: dict[tuple[str, str], LinkRole] = {}  # (memory, entity) -> strongest role
        self._unresolved: dict[tuple[str, str], tuple[Any, ...]] = {}  # (memory, key) -> row

    def prefetch(self, plans: Sequence[LinkPlan]) -> None:
        """The ids of the entities the plans name that exist already, in one read per chunk."""
        refs = [
            ref
            for plan in plans
            for ref in (
                *(link.entity for link in plan.links),
                *(alias.entity for alias in plan.aliases),
                *(alias.speaker for alias in plan.aliases if alias.speaker is not None),
            )
        ]
        keys = sorted({normalize_name(ref.name) for ref in refs} - {""})
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            chunk = keys[start : start + _LOOKUP_CHUNK]
            rows = self.conn.execute(
                "SELECT name_key, id FROM entities WHERE agent_id = ?"
                f" AND name_key IN ({_marks(chunk)})",
                [self.agent_id, *chunk],
            ).fetchall()
            self._ids |= {str(row[0]): str(row[1]) for row in rows}

    def entity_id(self, name: str, kind: EntityKind) -> tuple[str, bool]:
        """As `_entity_id_in`: the entity named `name`, and whether this call created it."""
        key = normalize_name(name)
        if key in self._ids:
            return self._ids[key], False
        found, created = _entity_id_in(self.conn, self.agent_id, name, kind, self.now)
        self._ids[key] = found
        return found, created

    def link(self, memory_id: str, entity_id: str, role: LinkRole) -> None:
        """A link to write (the stronger role kept when the batch names it twice)."""
        before = self._links.get((memory_id, entity_id))
        if before is None or ROLE_STRENGTH[role] > ROLE_STRENGTH[before]:
            self._links[(memory_id, entity_id)] = role

    def unresolved(self, memory_id: str, ref: UnresolvedRef) -> None:
        row = (memory_id, self.agent_id, ref.key, ref.phrase, ref.role.value, self.now)
        self._unresolved.setdefault((memory_id, ref.key), row)

    def write_links(self) -> None:
        """The batch's links, by multi-row inserts that yield to a link already there (made
        before, or by another transaction meanwhile: the background linker and a verb on
        PostgreSQL); such a link takes the stronger role, one by one (rare)."""
        links = list(self._links.items())
        for start in range(0, len(links), _LINK_ROWS):
            chunk = links[start : start + _LINK_ROWS]
            rows = self.conn.execute(
                "INSERT INTO memory_entities (memory_id, entity_id, agent_id, role) VALUES "
                + ", ".join("(?, ?, ?, ?)" for _ in chunk)
                + " ON CONFLICT (memory_id, entity_id) DO NOTHING RETURNING memory_id, entity_id",
                [v for (m, e), role in chunk for v in (m, e, self.agent_id, role.value)],
            ).fetchall()
            inserted = {(str(row[0]), str(row[1])) for row in rows}
            for (memory_id, entity_id), role in chunk:
                if (memory_id, entity_id) in inserted:
                    self._seen.setdefault(entity_id, []).append(memory_id)
                else:
                    _link_in(self.conn, self.agent_id, memory_id, entity_id, role)

    def write_unresolved(self) -> None:
        if self._unresolved:
            self.conn.executemany(
                "INSERT INTO entity_unresolved (memory_id, agent_id, alias_key, phrase, role,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id, alias_key)"
                " DO NOTHING",
                list(self._unresolved.values()),
            )

    def count_mentions(self) -> None:
        """`_seen_in` for every new link, one update per entity: its count grows by its new
        links, first/last seen take the earliest/latest moment among them (NULL ones aside)."""
        if not self._seen:
            return
        memory_ids = sorted({m for ids in self._seen.values() for m in ids})
        moments: dict[str, str | None] = {}
        for start in range(0, len(memory_ids), _LOOKUP_CHUNK):
            chunk = memory_ids[start : start + _LOOKUP_CHUNK]
            rows = self.conn.execute(
                f"SELECT id, occurred_at FROM memories WHERE id IN ({_marks(chunk)})", chunk
            ).fetchall()
            moments |= {str(row[0]): row[1] for row in rows}
        for entity_id, linked in self._seen.items():
            known = [at for at in (moments.get(m) for m in linked) if at is not None]
            first, last = (min(known), max(known)) if known else (None, None)
            self.conn.execute(
                "UPDATE entities SET mention_count = mention_count + ?, updated_at = ?,"
                " first_seen = CASE WHEN first_seen IS NULL OR ? < first_seen THEN ?"
                " ELSE first_seen END,"
                " last_seen = CASE WHEN last_seen IS NULL OR ? > last_seen THEN ?"
                " ELSE last_seen END"
                " WHERE id = ?",
                (len(linked), self.now, first, first, last, last, entity_id),
            )


_LOOKUP_CHUNK = 500  # ids per IN (...)
# links per multi-row insert (4 values each): like an import's memories (store/imports.py
# _VALUES_PER_INSERT), fewer, longer statements copy fewer pages to SQLite's statement journal
_LINK_ROWS = 3500


def _apply_plan(batch: _Batch, plan: LinkPlan) -> LinkReport:
    conn, agent_id, now = batch.conn, batch.agent_id, batch.now
    report = LinkReport(plan.memory_id)
    ids: dict[str, str] = {}  # name key -> entity id, within this memory

    def entity_id(ref: EntityRef) -> str:
        key = normalize_name(ref.name)
        if ref.entity_id is not None:
            ids[key] = ref.entity_id
        if key not in ids:
            ids[key], created = batch.entity_id(ref.name, ref.kind)
            if created:
                report.created.append(ref.name.strip())
        return ids[key]

    for link in plan.links:
        target = entity_id(link.entity)
        batch.link(plan.memory_id, target, link.role)
        if link.entity.name.strip() not in report.entities:
            report.entities.append(link.entity.name.strip())
    for alias in plan.aliases:
        target = entity_id(alias.entity)
        speaker = entity_id(alias.speaker) if alias.speaker is not None else None
        _add_alias_in(conn, agent_id, target, alias.alias, alias.origin, speaker, now)
    for ref in plan.unresolved:
        batch.unresolved(plan.memory_id, ref)
        report.unresolved[ref.phrase] = list(ref.candidates)
    return report


# ---- the store ------------------------------------------------------------------------------


def _entity(row: Row, aliases: list[Row]) -> Entity:
    details = [
        EntityAlias(alias=a["alias"], origin=AliasOrigin(a["origin"]), speaker_id=a["speaker_id"])
        for a in aliases
    ]
    return Entity(
        id=row["id"],
        agent_id=row["agent_id"],
        name=row["name"],
        kind=_KINDS.get(row["kind"], EntityKind.thing),
        aliases=[a.alias for a in details],
        alias_details=details,
        summary=row["summary"] or "",
        first_seen=row["first_seen"],
        last_seen=row["last_seen"],
        mention_count=int(row["mention_count"] or 0),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _match(row: Any) -> EntityMatch:
    return EntityMatch(
        key=row[0],
        entity_id=row[1],
        name=row[2],
        kind=_KINDS.get(row[3], EntityKind.thing),
        by=row[4],
        speaker_id=row[5],
    )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class EntityStore:
    """Entities, aliases and links per agent (`interfaces.EntityStorage`)."""

    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    # ---- reads ------------------------------------------------------------------------------

    async def find_entities(self, agent_id: str, keys: Sequence[str]) -> list[EntityMatch]:
        """The entities each key names, by name or by alias (keys: `normalize_name`'d)."""
        keys = [k for k in dict.fromkeys(keys) if k]
        if not keys:
            return []
        marks = _marks(keys)
        rows = await self.db.fetchall(
            f"SELECT name_key AS key, id, name, kind, 'name' AS by_, NULL AS speaker_id"
            f" FROM entities WHERE agent_id = ? AND name_key IN ({marks})"
            " UNION ALL"
            " SELECT a.alias_key, e.id, e.name, e.kind, 'alias', a.speaker_id"
            " FROM entity_aliases a JOIN entities e ON e.id = a.entity_id"
            f" WHERE a.agent_id = ? AND a.alias_key IN ({marks})",
            [agent_id, *keys, agent_id, *keys],
        )
        return [_match(row) for row in rows]

    async def entity_keys(self, agent_id: str, limit: int) -> list[EntityMatch] | None:
        """Every key the agent's entities are found by: each name, then each alias (what
        `find_entities` would give for them), or None when there are more than `limit`."""
        rows = await self.db.fetchall(
            "SELECT name_key AS key, id, name, kind, 'name' AS by_, NULL AS speaker_id"
            " FROM entities WHERE agent_id = ?"
            " UNION ALL"
            " SELECT a.alias_key, e.id, e.name, e.kind, 'alias', a.speaker_id"
            " FROM entity_aliases a JOIN entities e ON e.id = a.entity_id"
            f" WHERE a.agent_id = ? LIMIT {int(limit) + 1}",
            [agent_id, agent_id],
        )
        return [_match(row) for row in rows] if len(rows) <= limit else None

    async def linked_memories(
        self, agent_id: str, entity_ids: Sequence[str], limit: int
    ) -> list[tuple[str, str, LinkRole]]:
        """(memory id, entity id, role) of the agent's live memories linked to the entities,
        speakers and subjects first, then the most recent."""
        found = await self.linked_moments(agent_id, entity_ids, limit)
        return [(memory_id, entity_id, role) for memory_id, entity_id, role, _ in found]

    async def linked_moments(
        self, agent_id: str, entity_ids: Sequence[str], limit: int
    ) -> list[tuple[str, str, LinkRole, str]]:
        """`linked_memories` with each memory's `occurred_at`."""
        if not entity_ids:
            return []
        strength = _STRENGTH_SQL.format(col="l.role")
        rows = await self.db.fetchall(
            "SELECT l.memory_id, l.entity_id, l.role, m.occurred_at FROM memory_entities l"
            " JOIN memories m ON m.id = l.memory_id"
            f" WHERE l.agent_id = ? AND l.entity_id IN ({_marks(entity_ids)}) AND {_LIVE}"
            f" ORDER BY {strength} DESC, m.occurred_at DESC, l.memory_id LIMIT ?",
            [agent_id, *entity_ids, limit],
        )
        return [(row[0], row[1], _ROLES[row[2]], str(row[3])) for row in rows]

    async def links_and_kinds(
        self, agent_id: str, entity_ids: Sequence[str], limit: int
    ) -> dict[str, EntityLinks]:
        """Per entity: `linked_moments` of it alone and `kinds_beside` it (each with its own
        `limit`), for all of them in one statement (one trip to the store, not two each)."""
        if not entity_ids:
            return {}
        marks = _marks(entity_ids)
        strength = _STRENGTH_SQL.format(col="l.role")
        rows = await self.db.fetchall(
            "SELECT * FROM (SELECT 'link' AS part, l.entity_id, l.memory_id, l.role AS value,"
            " m.occurred_at, ROW_NUMBER() OVER (PARTITION BY l.entity_id"
            f" ORDER BY {strength} DESC, m.occurred_at DESC, l.memory_id) AS n"
            " FROM memory_entities l JOIN memories m ON m.id = l.memory_id"
            f" WHERE l.agent_id = ? AND l.entity_id IN ({marks}) AND {_LIVE}"
            " UNION ALL SELECT 'kind', l.entity_id, o.memory_id, e.kind, NULL,"
            " ROW_NUMBER() OVER (PARTITION BY l.entity_id) FROM memory_entities l"
            " JOIN memory_entities o ON o.memory_id = l.memory_id AND o.entity_id != l.entity_id"
            " JOIN entities e ON e.id = o.entity_id JOIN memories m ON m.id = l.memory_id"
            f" WHERE l.agent_id = ? AND l.entity_id IN ({marks}) AND {_LIVE}) AS u"
            " WHERE n <= ?",
            [agent_id, *entity_ids, agent_id, *entity_ids, limit],
        )
        found = {entity_id: EntityLinks([], {}) for entity_id in entity_ids}
        ranked: dict[str, list[tuple[int, tuple[str, str, LinkRole, str]]]] = defaultdict(list)
        for part, entity_id, memory_id, value, at, n in rows:
            if part == "link":
                ranked[entity_id].append((int(n), (memory_id, entity_id, _ROLES[value], str(at))))
            else:
                kind = _KINDS.get(value, EntityKind.thing)
                found[entity_id].beside.setdefault(str(memory_id), set()).add(kind)
        for entity_id, links in ranked.items():
            found[entity_id].moments[:] = [row for _, row in sorted(links)]
        return found

    async def turns_around(
        self, agent_id: str, anchors: Sequence[tuple[str, str]], span: int
    ) -> dict[str, set[str]]:
        """Memory id -> the `span` live memories of the agent right before it and right after
        it in time (`occurred_at`, then id), for each (memory id, its `occurred_at`) of
        `anchors`: the turns around it in a conversation, however close or far apart in seconds
        they were said or imported."""
        around = await self.timeline_around(agent_id, anchors, span)
        return {memory_id: {*before, *after} for memory_id, (before, after) in around.items()}

    async def timeline_around(
        self, agent_id: str, anchors: Sequence[tuple[str, str]], span: int
    ) -> dict[str, tuple[list[str], list[str]]]:
        """`turns_around` in order: memory id -> (the memories before it, the nearest first;
        those after it, the nearest first). Each side is a short range of the (agent,
        occurred_at) index."""
        if not anchors or span <= 0:
            return {}
        read = self.timeline_read(agent_id, anchors, span)
        return read.decode(await self.db.fetchall(read.sql, read.params))

    def timeline_read(
        self, agent_id: str, anchors: Sequence[tuple[str, str]], span: int
    ) -> Read[dict[str, tuple[list[str], list[str]]]]:
        """`timeline_around` as a read to run beside another (anchors not empty, span > 0)."""
        # the span is written into the statement: SQLite sorts a bound LIMIT ? in the general
        # sorter, not the top-N one (each side cost 2.7x as much)
        before = (
            "SELECT * FROM (SELECT ? AS anchor, 0 AS side, id, occurred_at FROM memories"
            " WHERE agent_id = ? AND occurred_at <= ? AND (occurred_at < ? OR id < ?)"
            " AND forgotten_at IS NULL AND superseded_by IS NULL"
            " ORDER BY occurred_at DESC, id DESC LIMIT {span}) AS b{n}"
        )
        after = (
            "SELECT * FROM (SELECT ? AS anchor, 1 AS side, id, occurred_at FROM memories"
            " WHERE agent_id = ? AND occurred_at >= ? AND (occurred_at > ? OR id > ?)"
            " AND forgotten_at IS NULL AND superseded_by IS NULL"
            " ORDER BY occurred_at, id LIMIT {span}) AS a{n}"
        )
        parts: list[str] = []
        params: list[object] = []
        for n, (memory_id, at) in enumerate(anchors):
            for side in (before, after):
                parts.append(side.format(n=n, span=int(span)))
                params += [memory_id, agent_id, at, at, memory_id]
        ids = [memory_id for memory_id, _ in anchors]
        return Read(" UNION ALL ".join(parts), params, lambda rows: _timeline(ids, rows))

    async def kinds_beside(
        self, agent_id: str, entity_id: str, limit: int
    ) -> dict[str, set[EntityKind]]:
        """Memory id -> the kinds of the other entities linked to each live memory linked to
        this one (a place, a person, a pet named beside it)."""
        rows = await self.db.fetchall(
            "SELECT o.memory_id, e.kind FROM memory_entities l"
            " JOIN memory_entities o ON o.memory_id = l.memory_id AND o.entity_id != l.entity_id"
            " JOIN entities e ON e.id = o.entity_id"
            f" JOIN memories m ON m.id = l.memory_id WHERE l.agent_id = ? AND l.entity_id = ?"
            f" AND {_LIVE} LIMIT ?",
            [agent_id, entity_id, limit],
        )
        found: dict[str, set[EntityKind]] = {}
        for memory_id, kind in rows:
            found.setdefault(str(memory_id), set()).add(_KINDS.get(kind, EntityKind.thing))
        return found

    async def entities_of(self, agent_id: str, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """Memory id -> the names of the entities it is linked to (speaker, subject, mentioned)."""
        if not memory_ids:
            return {}
        read = self.names_read(agent_id, memory_ids)
        return read.decode(await self.db.fetchall(read.sql, read.params))

    def names_read(self, agent_id: str, memory_ids: Sequence[str]) -> Read[dict[str, list[str]]]:
        """`entities_of` as a read to run beside another (memory_ids not empty)."""
        strength = _STRENGTH_SQL.format(col="l.role")
        return Read(
            "SELECT l.memory_id, e.name FROM memory_entities l JOIN entities e ON e.id = l.entity_id"
            f" WHERE l.agent_id = ? AND l.memory_id IN ({_marks(memory_ids)})"
            f" ORDER BY l.memory_id, {strength} DESC, e.name",
            [agent_id, *memory_ids],
            _names_by_memory,
        )

    async def get_entity(self, agent_id: str, entity_id: str) -> Entity | None:
        row = await self.db.fetchone(
            f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE id = ? AND agent_id = ?",
            (entity_id, agent_id),
        )
        if row is None:
            return None
        return _entity(row, await self._aliases_of(entity_id))

    async def _aliases_of(self, entity_id: str) -> list[Row]:
        return await self.db.fetchall(
            "SELECT alias, origin, speaker_id FROM entity_aliases WHERE entity_id = ?"
            " ORDER BY created_at, alias_key",
            (entity_id,),
        )

    async def entity_named(self, agent_id: str, name: str) -> list[Entity]:
        """The entities `name` names: the one whose name it is, else those it is an alias of
        (several when the alias is ambiguous)."""
        matches = await self.find_entities(agent_id, [normalize_name(name)])
        by_name = [m for m in matches if m.by == "name"]
        chosen = by_name or matches
        entities = []
        for entity_id in dict.fromkeys(m.entity_id for m in chosen):
            entity = await self.get_entity(agent_id, entity_id)
            if entity is not None:
                entities.append(entity)
        return entities

    async def list_entities(
        self, agent_id: str, prefix: str, limit: int, offset: int
    ) -> tuple[list[Entity], int]:
        """A page of the agent's entities whose name or an alias starts with `prefix` (any,
        when empty), the most mentioned first, and how many there are in all."""
        key = normalize_name(prefix) if prefix else ""
        where, params = "agent_id = ?", [agent_id]
        if key:
            pattern = _escape_like(key) + "%"
            where += (
                " AND (name_key LIKE ? ESCAPE '\\' OR id IN (SELECT entity_id FROM"
                " entity_aliases WHERE agent_id = ? AND alias_key LIKE ? ESCAPE '\\'))"
            )
            params += [pattern, agent_id, pattern]
        total = int(await self.db.scalar(f"SELECT COUNT(*) FROM entities WHERE {where}", params))
        rows = await self.db.fetchall(
            f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE {where}"
            " ORDER BY mention_count DESC, name_key, id LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        aliases = await self._aliases_of_many([row["id"] for row in rows])
        return [_entity(row, aliases.get(row["id"], [])) for row in rows], total

    async def _aliases_of_many(self, entity_ids: list[str]) -> dict[str, list[Row]]:
        if not entity_ids:
            return {}
        rows = await self.db.fetchall(
            "SELECT entity_id, alias, origin, speaker_id FROM entity_aliases"
            f" WHERE entity_id IN ({_marks(entity_ids)}) ORDER BY created_at, alias_key",
            entity_ids,
        )
        found: dict[str, list[Row]] = {}
        for row in rows:
            found.setdefault(row["entity_id"], []).append(row)
        return found

    async def memory_ids_of(self, agent_id: str, entity_id: str, limit: int) -> list[str]:
        """The agent's live memories linked to the entity, speakers and subjects first."""
        linked = await self.linked_memories(agent_id, [entity_id], limit)
        return [memory_id for memory_id, _, _ in linked]

    async def unresolved(self, agent_id: str, limit: int) -> list[dict[str, Any]]:
        """References an ambiguous alias left unlinked, newest first, each with the entities
        its alias names now (a person settles it by removing the alias from the wrong ones)."""
        rows = await self.db.fetchall(
            "SELECT u.memory_id, u.alias_key, u.phrase, u.role, u.created_at"
            " FROM entity_unresolved u JOIN memories m ON m.id = u.memory_id"
            f" WHERE u.agent_id = ? AND {_LIVE} ORDER BY u.created_at DESC, u.memory_id LIMIT ?",
            (agent_id, limit),
        )
        keys = list(dict.fromkeys(row["alias_key"] for row in rows))
        matches = await self.find_entities(agent_id, keys)
        candidates: dict[str, list[dict[str, str]]] = {}
        for match in matches:
            candidates.setdefault(match.key, []).append({"id": match.entity_id, "name": match.name})
        return [
            {
                "memory_id": row["memory_id"],
                "phrase": row["phrase"],
                "role": row["role"],
                "created_at": row["created_at"],
                "candidates": candidates.get(row["alias_key"], []),
            }
            for row in rows
        ]

    async def log(self, agent_id: str, limit: int) -> list[dict[str, Any]]:
        rows = await self.db.fetchall(
            "SELECT id, action, entity_ids, details, executed_at, undone_at FROM entity_log"
            " WHERE agent_id = ? ORDER BY id DESC LIMIT ?",
            (agent_id, limit),
        )
        return [
            {
                "id": int(row["id"]),
                "action": row["action"],
                "entity_ids": json.loads(row["entity_ids"]),
                "details": json.loads(row["details"]),
                "executed_at": row["executed_at"],
                "undone_at": row["undone_at"],
            }
            for row in rows
        ]

    async def count(self, agent_id: str | None = None) -> int:
        if agent_id is None:
            return int(await self.db.scalar("SELECT COUNT(*) FROM entities") or 0)
        sql = "SELECT COUNT(*) FROM entities WHERE agent_id = ?"
        return int(await self.db.scalar(sql, (agent_id,)) or 0)

    # ---- writes -----------------------------------------------------------------------------

    async def link(self, agent_id: str, plans: Sequence[LinkPlan], now: str) -> list[LinkReport]:
        """Link memories to entities as the resolution planned, in one transaction. A plan of a
        memory that is gone (forgotten or erased since) links nothing."""
        if not any(p.links or p.aliases or p.unresolved for p in plans):
            return [LinkReport(p.memory_id) for p in plans]

        def txn(conn: Connection) -> list[LinkReport]:
            live = _own_memories(conn, agent_id, [p.memory_id for p in plans], live=True)
            return apply_plans_in(conn, agent_id, [p for p in plans if p.memory_id in live], now)

        def named(reports: list[LinkReport]) -> bool:  # an entity or an alias new (or not)
            return any(report.created for report in reports) or any(p.aliases for p in plans)

        return await self.db.transact(txn, names=named)

    def link_in(
        self, conn: Connection, agent_id: str, plans: Sequence[LinkPlan], now: str
    ) -> list[LinkReport]:
        """`link` inside a transaction another store method holds (the memories are its own)."""
        return apply_plans_in(conn, agent_id, plans, now)

    async def add_alias(
        self, agent_id: str, entity_id: str, alias: str, origin: AliasOrigin, now: str
    ) -> dict[str, Any]:
        """A person's (or the LLM's) alias for an entity, logged. Refused when it is another
        entity's name (merge them instead); no change when the entity has it already. The
        references it was ambiguous for are linked when it now names one entity only."""
        key = normalize_name(alias)
        if not key:
            raise InvalidInput("alias: must contain a letter or a digit", field="alias")

        def txn(conn: Connection) -> dict[str, Any]:
            entity = _owned_entity(conn, agent_id, entity_id)
            if entity["name_key"] == key:
                return {"changed": False, "log_id": None, "linked": []}
            named = conn.execute(
                "SELECT id, name FROM entities WHERE agent_id = ? AND name_key = ?",
                (agent_id, key),
            ).fetchone()
            if named is not None:
                raise InvalidInput(
                    f"alias: {alias!r} is the name of entity {named['id']} ({named['name']});"
                    " merge the two entities instead",
                    field="alias",
                )
            if not _add_alias_in(conn, agent_id, entity_id, alias, origin, None, now):
                return {"changed": False, "log_id": None, "linked": []}
            linked = _settle_unresolved_in(conn, agent_id, key, now)
            details = {"alias": alias.strip(), "origin": origin.value, "linked": linked}
            log_id = _log_in(conn, agent_id, "alias_add", [entity_id], details, now)
            return {"changed": True, "log_id": log_id, "linked": linked}

        return await self.db.transact(txn)

    async def remove_alias(
        self, agent_id: str, entity_id: str, alias: str, now: str
    ) -> dict[str, Any]:
        """Remove an alias from an entity, logged with all it held (an undo puts it back).
        The references it was ambiguous for are linked when it now names one entity only."""
        key = normalize_name(alias)

        def txn(conn: Connection) -> dict[str, Any]:
            _owned_entity(conn, agent_id, entity_id)
            row = conn.execute(
                "SELECT alias, origin, speaker_id, created_at FROM entity_aliases"
                " WHERE entity_id = ? AND alias_key = ?",
                (entity_id, key),
            ).fetchone()
            if row is None:
                raise NotFound(f"alias: entity {entity_id} has no alias {alias!r}", field="alias")
            conn.execute(
                "DELETE FROM entity_aliases WHERE entity_id = ? AND alias_key = ?",
                (entity_id, key),
            )
            linked = _settle_unresolved_in(conn, agent_id, key, now)
            details = {**dict(zip(row.keys(), row, strict=True)), "linked": linked}
            log_id = _log_in(conn, agent_id, "alias_remove", [entity_id], details, now)
            return {"changed": True, "log_id": log_id, "linked": linked}

        return await self.db.transact(txn)

    async def rename(self, agent_id: str, entity_id: str, name: str, now: str) -> dict[str, Any]:
        """Give an entity a new canonical name, logged; the old name becomes an alias (what
        memories said still links). Refused when another entity has that name (merge them)."""
        key = normalize_name(name)
        if not key:
            raise InvalidInput("name: must contain a letter or a digit", field="name")

        def txn(conn: Connection) -> dict[str, Any]:
            entity = _owned_entity(conn, agent_id, entity_id)
            other = conn.execute(
                "SELECT id FROM entities WHERE agent_id = ? AND name_key = ? AND id <> ?",
                (agent_id, key, entity_id),
            ).fetchone()
            if other is not None:
                raise InvalidInput(
                    f"name: entity {other[0]} is named {name!r} already; merge the two instead",
                    field="name",
                )
            was_alias = conn.execute(
                "SELECT alias, origin, speaker_id, created_at FROM entity_aliases"
                " WHERE entity_id = ? AND alias_key = ?",
                (entity_id, key),
            ).fetchone()
            conn.execute(
                "DELETE FROM entity_aliases WHERE entity_id = ? AND alias_key = ?",
                (entity_id, key),
            )
            conn.execute(
                "UPDATE entities SET name = ?, name_key = ?, updated_at = ? WHERE id = ?",
                (name.strip(), key, now, entity_id),
            )
            old_alias = entity["name_key"] != key and _add_alias_in(
                conn, agent_id, entity_id, entity["name"], AliasOrigin.name, None, now
            )
            details = {
                "from": entity["name"],
                "to": name.strip(),
                "old_name_alias": bool(old_alias),
                "was_alias": dict(zip(was_alias.keys(), was_alias, strict=True))
                if was_alias is not None
                else None,
            }
            log_id = _log_in(conn, agent_id, "rename", [entity_id], details, now)
            return {"changed": True, "log_id": log_id, **details}

        return await self.db.transact(txn)

    async def merge(
        self, agent_id: str, source_id: str, into_id: str, now: str, *, dry_run: bool
    ) -> dict[str, Any]:
        """Merge entity `source_id` into `into_id`: its links (the stronger role kept where
        both name a memory) and aliases move, its name becomes an alias, it is deleted; logged
        with all it held, so an undo brings it back as it was. The dry run computes the same
        report in the same transaction and rolls it back."""
        if source_id == into_id:
            raise InvalidInput("into: an entity cannot be merged into itself", field="into")

        def txn(conn: Connection) -> dict[str, Any]:
            report = _merge_in(conn, agent_id, source_id, into_id, now)
            if dry_run:
                raise _DryRun(report)
            return report

        try:
            return await self.db.transact(txn)
        except _DryRun as done:
            return {**done.report, "dry_run": True, "log_id": None}

    async def undo(self, agent_id: str, log_id: int, now: str) -> dict[str, Any]:
        """Undo one logged verb. Only the latest verb not yet undone on its entities can be
        undone (a later one may have built on it): undo those first."""

        def txn(conn: Connection) -> dict[str, Any]:
            row = conn.execute(
                "SELECT id, action, entity_ids, details, undone_at FROM entity_log"
                " WHERE id = ? AND agent_id = ?",
                (log_id, agent_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"log_id: no entity log entry {log_id}", field="log_id")
            if row["undone_at"] is not None:
                raise InvalidInput(f"log_id: entry {log_id} is undone already", field="log_id")
            entity_ids = json.loads(row["entity_ids"])
            _require_latest(conn, agent_id, log_id, entity_ids)
            details = json.loads(row["details"])
            _UNDO[row["action"]](conn, agent_id, entity_ids, details, now)
            conn.execute("UPDATE entity_log SET undone_at = ? WHERE id = ?", (now, log_id))
            return {"undone": log_id, "action": row["action"], "entity_ids": entity_ids}

        return await self.db.transact(txn)


class _DryRun(Exception):
    """Rolls a dry run's transaction back, carrying its report out."""

    def __init__(self, report: dict[str, Any]) -> None:
        super().__init__("dry run")
        self.report = report


def _settle_unresolved_in(
    conn: Connection, agent_id: str, key: str, now: str
) -> list[dict[str, str]]:
    """References left unresolved for an alias key link now if it names one entity only;
    what was linked (memory id, phrase, role)."""
    targets = conn.execute(
        "SELECT DISTINCT entity_id FROM entity_aliases WHERE agent_id = ? AND alias_key = ?",
        (agent_id, key),
    ).fetchall()
    if len(targets) != 1:
        return []
    entity_id = str(targets[0][0])
    rows = conn.execute(
        "SELECT u.memory_id, u.phrase, u.role FROM entity_unresolved u"
        " JOIN memories m ON m.id = u.memory_id WHERE u.agent_id = ? AND u.alias_key = ?",
        (agent_id, key),
    ).fetchall()
    linked = []
    for memory_id, phrase, role in rows:
        if _link_in(conn, agent_id, memory_id, entity_id, _ROLES.get(role, LinkRole.mentioned)):
            _seen_in(conn, entity_id, memory_id, now)
            linked.append({"memory_id": str(memory_id), "phrase": phrase, "role": role})
    conn.execute(
        "DELETE FROM entity_unresolved WHERE agent_id = ? AND alias_key = ?", (agent_id, key)
    )
    return linked


def _require_latest(conn: Connection, agent_id: str, log_id: int, entity_ids: list[str]) -> None:
    later = conn.execute(
        "SELECT id, entity_ids FROM entity_log WHERE agent_id = ? AND id > ?"
        " AND undone_at IS NULL ORDER BY id",
        (agent_id, log_id),
    ).fetchall()
    for row in later:
        if set(json.loads(row["entity_ids"])) & set(entity_ids):
            raise InvalidInput(
                f"log_id: entry {row['id']} changed these entities after {log_id}; undo it first",
                field="log_id",
            )


def _merge_in(
    conn: Connection, agent_id: str, source_id: str, into_id: str, now: str
) -> dict[str, Any]:
    source = _owned_entity(conn, agent_id, source_id, "source")
    into = _owned_entity(conn, agent_id, into_id, "into")
    links = conn.execute(
        "SELECT memory_id, role FROM memory_entities WHERE entity_id = ? ORDER BY memory_id",
        (source_id,),
    ).fetchall()
    before = {
        str(row[0]): str(row[1])
        for row in conn.execute(
            "SELECT memory_id, role FROM memory_entities WHERE entity_id = ?", (into_id,)
        ).fetchall()
    }
    aliases = conn.execute(
        "SELECT alias_key, alias, origin, speaker_id, created_at FROM entity_aliases"
        " WHERE entity_id = ? ORDER BY alias_key",
        (source_id,),
    ).fetchall()
    into_aliases = {
        str(row[0])
        for row in conn.execute(
            "SELECT alias_key FROM entity_aliases WHERE entity_id = ?", (into_id,)
        ).fetchall()
    }
    # the source's own row and aliases, kept for an undo
    details: dict[str, Any] = {
        "source": {k: source[k] for k in (*_ENTITY_COLUMNS.split(", "), "name_key")},
        "into": {"id": into_id, "name": into["name"]},
        "links": [{"memory_id": str(m), "role": str(r)} for m, r in links],
        "into_roles": {m: before[m] for m, _ in links if m in before},
        "aliases": [dict(zip(a.keys(), a, strict=True)) for a in aliases],
        "aliases_moved": [
            a["alias"]
            for a in aliases
            if a["alias_key"] not in into_aliases and a["alias_key"] != into["name_key"]
        ],
        "name_alias": source["name_key"] not in into_aliases
        and source["name_key"] != into["name_key"],
    }
    for memory_id, role in links:
        _link_in(conn, agent_id, str(memory_id), into_id, _ROLES[str(role)])
    for alias in aliases:
        if alias["alias_key"] in into_aliases or alias["alias_key"] == into["name_key"]:
            continue
        conn.execute(
            "INSERT INTO entity_aliases (entity_id, agent_id, alias_key, alias, origin,"
            " speaker_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (into_id, agent_id, alias["alias_key"], alias["alias"], alias["origin"],
             alias["speaker_id"], alias["created_at"]),
        )  # fmt: skip
    conn.execute("DELETE FROM entities WHERE id = ?", (source_id,))  # its links and aliases go
    if details["name_alias"]:
        _add_alias_in(conn, agent_id, into_id, source["name"], AliasOrigin.name, None, now)
    recount_in(conn, [into_id])
    details["log_id"] = _log_in(conn, agent_id, "merge", [source_id, into_id], details, now)
    return {
        "source": {"id": source_id, "name": source["name"]},
        "into": {"id": into_id, "name": into["name"]},
        "memories_moved": [d["memory_id"] for d in details["links"]],
        "aliases_moved": details["aliases_moved"],
        "name_becomes_alias": details["name_alias"],
        "dry_run": False,
        "log_id": details["log_id"],
    }


def _undo_alias_add(
    conn: Connection, agent_id: str, ids: list[str], details: dict[str, Any], now: str
) -> None:
    entity_id = ids[0]
    key = normalize_name(details["alias"])
    _unlink_settled(conn, agent_id, details.get("linked", []), entity_id, key, now)
    conn.execute(
        "DELETE FROM entity_aliases WHERE entity_id = ? AND alias_key = ?", (entity_id, key)
    )


def _undo_alias_remove(
    conn: Connection, agent_id: str, ids: list[str], details: dict[str, Any], now: str
) -> None:
    entity_id = ids[0]
    key = normalize_name(details["alias"])
    _unlink_settled(conn, agent_id, details.get("linked", []), None, key, now)
    conn.execute(
        "INSERT INTO entity_aliases (entity_id, agent_id, alias_key, alias, origin, speaker_id,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (entity_id, alias_key) DO NOTHING",
        (entity_id, agent_id, key, details["alias"], details["origin"], details["speaker_id"],
         details["created_at"]),
    )  # fmt: skip


def _unlink_settled(
    conn: Connection,
    agent_id: str,
    settled: list[dict[str, str]],
    entity_id: str | None,
    key: str,
    now: str,
) -> None:
    """Undo what settling an alias linked: the links go, the references are unresolved again."""
    if not settled:
        return
    memory_ids = [item["memory_id"] for item in settled]
    if entity_id is None:  # the alias removed named one entity then: the one it still names
        row = conn.execute(
            "SELECT entity_id FROM entity_aliases WHERE agent_id = ? AND alias_key = ?",
            (agent_id, key),
        ).fetchone()
        entity_id = str(row[0]) if row is not None else None
    if entity_id is not None:
        conn.execute(
            f"DELETE FROM memory_entities WHERE entity_id = ? AND memory_id IN ({_marks(memory_ids)})",
            [entity_id, *memory_ids],
        )
        recount_in(conn, [entity_id])
    conn.executemany(
        "INSERT INTO entity_unresolved (memory_id, agent_id, alias_key, phrase, role,"
        " created_at) SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)"
        " ON CONFLICT DO NOTHING",
        [
            (item["memory_id"], agent_id, key, item["phrase"], item["role"], now, item["memory_id"])
            for item in settled
        ],
    )


def _undo_rename(
    conn: Connection, agent_id: str, ids: list[str], details: dict[str, Any], now: str
) -> None:
    entity_id = ids[0]
    old_key, new_key = normalize_name(details["from"]), normalize_name(details["to"])
    if details["old_name_alias"]:
        conn.execute(
            "DELETE FROM entity_aliases WHERE entity_id = ? AND alias_key = ?",
            (entity_id, old_key),
        )
    conn.execute(
        "UPDATE entities SET name = ?, name_key = ?, updated_at = ? WHERE id = ?",
        (details["from"], old_key, now, entity_id),
    )
    was = details.get("was_alias")
    if was is not None:
        conn.execute(
            "INSERT INTO entity_aliases (entity_id, agent_id, alias_key, alias, origin,"
            " speaker_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (entity_id, agent_id, new_key, was["alias"], was["origin"], was["speaker_id"],
             was["created_at"]),
        )  # fmt: skip


def _undo_merge(
    conn: Connection, agent_id: str, ids: list[str], details: dict[str, Any], now: str
) -> None:
    source_id, into_id = ids
    source = details["source"]
    conn.execute(
        "INSERT INTO entities (id, agent_id, name, name_key, kind, summary, first_seen,"
        " last_seen, mention_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (source["id"], agent_id, source["name"], source["name_key"], source["kind"],
         source["summary"], source["first_seen"], source["last_seen"], source["mention_count"],
         source["created_at"], now),
    )  # fmt: skip
    moved = [normalize_name(a) for a in details["aliases_moved"]]
    if details["name_alias"]:
        moved.append(source["name_key"])
    for key in moved:
        conn.execute(
            "DELETE FROM entity_aliases WHERE entity_id = ? AND alias_key = ?", (into_id, key)
        )
    for alias in details["aliases"]:
        conn.execute(
            "INSERT INTO entity_aliases (entity_id, agent_id, alias_key, alias, origin,"
            " speaker_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (source_id, agent_id, alias["alias_key"], alias["alias"], alias["origin"],
             alias["speaker_id"], alias["created_at"]),
        )  # fmt: skip
    into_roles = details["into_roles"]
    for link in details["links"]:
        memory_id = link["memory_id"]
        if memory_id in into_roles:
            conn.execute(
                "UPDATE memory_entities SET role = ? WHERE memory_id = ? AND entity_id = ?",
                (into_roles[memory_id], memory_id, into_id),
            )
        else:
            conn.execute(
                "DELETE FROM memory_entities WHERE memory_id = ? AND entity_id = ?",
                (memory_id, into_id),
            )
        conn.execute(
            "INSERT INTO memory_entities (memory_id, entity_id, agent_id, role)"
            " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)",
            (memory_id, source_id, agent_id, link["role"], memory_id),
        )
    recount_in(conn, [source_id, into_id])


_UNDO = {
    "alias_add": _undo_alias_add,
    "alias_remove": _undo_alias_remove,
    "rename": _undo_rename,
    "merge": _undo_merge,
}


# ---- export and import ----------------------------------------------------------------------


async def entity_pages(
    db: DatabaseHandle, agent_id: str | None, size: int
) -> AsyncIterator[list[dict[str, Any]]]:
    """The entities as an export writes them, page by page: name, kind, summary, aliases
    (whose words by the speaker's name) and links (memory id, role)."""
    owner = "AND agent_id = ?" if agent_id is not None else ""
    after: tuple[str, str, str] = ("", "", "")
    while True:
        params: list[Any] = [*after, *([agent_id] if agent_id is not None else []), size]
        rows = await db.fetchall(
            "SELECT id, agent_id, name, name_key, kind, summary FROM entities"
            f" WHERE (agent_id, name_key, id) > (?, ?, ?) {owner}"
            " ORDER BY agent_id, name_key, id LIMIT ?",
            params,
        )
        if not rows:
            return
        last = rows[-1]
        after = (str(last["agent_id"]), str(last["name_key"]), str(last["id"]))
        ids = [str(row["id"]) for row in rows]
        aliases = await db.fetchall(
            "SELECT a.entity_id, a.alias, a.origin, s.name AS speaker FROM entity_aliases a"
            " LEFT JOIN entities s ON s.id = a.speaker_id"
            f" WHERE a.entity_id IN ({_marks(ids)}) ORDER BY a.entity_id, a.created_at, a.alias_key",
            ids,
        )
        links = await db.fetchall(
            "SELECT entity_id, memory_id, role FROM memory_entities"
            f" WHERE entity_id IN ({_marks(ids)}) ORDER BY entity_id, memory_id",
            ids,
        )
        by_entity: dict[str, dict[str, Any]] = {
            str(row["id"]): {
                "agent_id": row["agent_id"],
                "name": row["name"],
                "kind": row["kind"],
                "summary": row["summary"] or "",
                "aliases": [],
                "links": [],
            }
            for row in rows
        }
        for alias in aliases:
            by_entity[alias["entity_id"]]["aliases"].append(
                {"alias": alias["alias"], "origin": alias["origin"], "speaker": alias["speaker"]}
            )
        for link in links:
            by_entity[link["entity_id"]]["links"].append(
                {"memory_id": link["memory_id"], "role": link["role"]}
            )
        yield list(by_entity.values())


def import_entities_in(
    conn: Connection, agent_id: str, entities: Sequence[dict[str, Any]], now: str
) -> int:
    """Entities an import carries, into `agent_id`'s (one of the same name is the same entity):
    their kind and summary, aliases and links to the agent's memories (a link to a memory the
    agent does not have is left out). Returns how many entities the items named."""
    touched: list[str] = []
    for item in entities:
        entity_id, _ = _entity_id_in(conn, agent_id, item["name"], EntityKind(item["kind"]), now)
        conn.execute(
            "UPDATE entities SET kind = ?, summary = CASE WHEN ? <> '' THEN ? ELSE summary END"
            " WHERE id = ?",
            (item["kind"], item["summary"], item["summary"], entity_id),
        )
        touched.append(entity_id)
        for alias in item["aliases"]:
            speaker = None
            if alias["speaker"]:
                speaker, _ = _entity_id_in(conn, agent_id, alias["speaker"], EntityKind.person, now)
            origin = AliasOrigin(alias["origin"])
            _add_alias_in(conn, agent_id, entity_id, alias["alias"], origin, speaker, now)
        owned = _own_memories(conn, agent_id, [link["memory_id"] for link in item["links"]])
        for link in item["links"]:
            if link["memory_id"] in owned:
                _link_in(conn, agent_id, link["memory_id"], entity_id, _ROLES[link["role"]])
    recount_in(conn, touched)
    return len(entities)


def _timeline(anchors: list[str], rows: list[Row]) -> dict[str, tuple[list[str], list[str]]]:
    """`timeline_read`'s rows per anchor: (before it, the nearest first; after it, likewise)."""
    sides: dict[tuple[str, bool], list[tuple[str, str]]] = defaultdict(list)
    for anchor, is_after, memory_id, at in rows:
        sides[(str(anchor), bool(is_after))].append((str(at), str(memory_id)))
    # in (occurred_at, id) order, as the statement sorted them (text compares bytewise on
    # both stores: PostgreSQL's columns are COLLATE "C")
    return {
        memory_id: (
            [i for _, i in sorted(sides[(memory_id, False)], reverse=True)],
            [i for _, i in sorted(sides[(memory_id, True)])],
        )
        for memory_id in anchors
    }


def _names_by_memory(rows: list[Row]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for memory_id, name in rows:
        found.setdefault(memory_id, []).append(name)
    return found
