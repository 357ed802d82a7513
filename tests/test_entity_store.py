"""The entity store on both backends: entities created by linking, found by name and alias,
links per memory with their roles, links gone with a forgotten or purged memory, and the verbs
(alias, rename, merge with its dry run, undo), each logged."""

from __future__ import annotations

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.errors import InvalidInput, NotFound
from cortex_mcp.models import (
    AliasOrigin,
    EntityKind,
    EntityRef,
    LinkPlan,
    LinkRole,
    PlannedAlias,
    PlannedLink,
    UnresolvedRef,
    to_iso,
)
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ForgetRequest, RememberRequest
from cortex_mcp.store.interfaces import EntityStorage
from tests.conftest import FakeClock
from tests.helpers.filler_memories import write_filler_memories

pytestmark = pytest.mark.anyio
NOW = "2026-03-01T10:00:00.000000Z"


def _hand_linked(settings: Settings) -> Settings:
    """The store under test gets its links from the plans the tests write, not the rules."""
    return settings.model_copy(update={"link_entities": False})


async def _remember(svc: CortexService, content: str, agent: str = "a1") -> str:
    result = await svc.memories.remember(
        RememberRequest(content=content, agent_id=agent, category="fact")
    )
    return result.id


def _plan(memory_id: str, *links: tuple[str, LinkRole], **extra: object) -> LinkPlan:
    planned = tuple(PlannedLink(EntityRef(name), role) for name, role in links)
    return LinkPlan(memory_id, planned, **extra)  # type: ignore[arg-type]


async def _entity_id(store: EntityStorage, agent: str, name: str) -> str:
    (entity,) = await store.entity_named(agent, name)
    return entity.id


async def test_linking_creates_entities_once_and_the_reads_find_them_by_name_and_alias(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(_hand_linked(backend_settings), clock=clock) as svc:
        store = svc.stores.entities
        first = await _remember(svc, "Anna is a doctor")
        second = await _remember(svc, "Tom: my sister Anna moved to Lyon")
        await store.link("a1", [_plan(first, ("Anna", LinkRole.subject))], NOW)
        sister = PlannedAlias(EntityRef("Anna"), "my sister", AliasOrigin.rule, EntityRef("Tom"))
        reports = await store.link(
            "a1",
            [
                _plan(
                    second,
                    ("Tom", LinkRole.speaker),
                    ("Anna", LinkRole.mentioned),
                    ("ANNA", LinkRole.subject),
                    aliases=(sister,),
                )
            ],
            NOW,
        )
        assert reports[0].created == ["Tom"]  # Anna existed: found by her key
        anna = await _entity_id(store, "a1", "anna's")
        tom = await _entity_id(store, "a1", "Tom")
        matches = await store.find_entities("a1", ["anna", "my sister", "nobody"])
        assert {(m.key, m.entity_id, m.by) for m in matches} == {
            ("anna", anna, "name"),
            ("my sister", anna, "alias"),
        }
        assert [m.speaker_id for m in matches if m.by == "alias"] == [tom]
        linked = await store.linked_memories("a1", [anna], 10)
        assert sorted(linked) == sorted(
            [(first, anna, LinkRole.subject), (second, anna, LinkRole.subject)]
        )  # the stronger of "mentioned" and "subject" kept
        assert await store.entities_of("a1", [second, first]) == {
            second: ["Tom", "Anna"],
            first: ["Anna"],
        }
        entity = await store.get_entity("a1", anna)
        assert entity is not None
        assert (entity.name, entity.kind, entity.mention_count) == ("Anna", EntityKind.person, 2)
        assert entity.aliases == ["my sister"]
        assert entity.first_seen == entity.last_seen == to_iso(clock.now())
        assert await store.get_entity("a2", anna) is None  # another agent sees nothing
        assert await store.find_entities("a2", ["anna"]) == []
        page, total = await store.list_entities("a1", "an", 10, 0)
        assert ([e.name for e in page], total) == (["Anna"], 1)
        page, total = await store.list_entities("a1", "my s", 10, 0)  # by an alias too
        assert [e.name for e in page] == ["Anna"]
        page, total = await store.list_entities("a1", "", 1, 0)
        assert ([e.name for e in page], total) == (["Anna"], 2)  # most mentioned first


async def test_forgetting_or_purging_a_memory_removes_its_links_and_nothing_else(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(_hand_linked(backend_settings), clock=clock) as svc:
        store = svc.stores.entities
        kept = await _remember(svc, "Maya climbs on Sundays")
        forgotten = await _remember(svc, "Maya started pottery")
        purged = await _remember(svc, "Maya's phone number changed")
        for memory in (kept, forgotten, purged):
            await store.link("a1", [_plan(memory, ("Maya", LinkRole.subject))], NOW)
        maya = await _entity_id(store, "a1", "Maya")
        await svc.memories.forget(ForgetRequest(memory_id=forgotten, agent_id="a1"))
        await svc.memories.forget(ForgetRequest(memory_id=purged, agent_id="a1", purge=True))
        assert await store.linked_memories("a1", [maya], 10) == [(kept, maya, LinkRole.subject)]
        entity = await store.get_entity("a1", maya)
        assert entity is not None and entity.mention_count == 1
        still = await svc.stores.memories.get(forgotten)
        assert still is not None and still.content == "Maya started pottery"
        # a plan for a memory forgotten meanwhile links nothing
        await store.link("a1", [_plan(forgotten, ("Maya", LinkRole.subject))], NOW)
        assert await store.entities_of("a1", [forgotten]) == {}


async def test_a_plan_naming_another_agents_memory_links_nothing_for_either_agent(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(_hand_linked(backend_settings), clock=clock) as svc:
        store = svc.stores.entities
        own = await _remember(svc, "Maya climbs on Sundays")
        theirs = await _remember(svc, "Maya sings in a choir", agent="a2")
        await store.link(
            "a1",
            [_plan(own, ("Maya", LinkRole.subject)), _plan(theirs, ("Maya", LinkRole.subject))],
            NOW,
        )
        maya = await _entity_id(store, "a1", "Maya")
        assert await store.linked_memories("a1", [maya], 10) == [(own, maya, LinkRole.subject)]
        assert await store.entities_of("a1", [theirs]) == {}
        assert await store.entities_of("a2", [theirs]) == {}
        assert await store.entity_named("a2", "Maya") == []


async def test_an_ambiguous_reference_is_kept_and_linked_once_a_person_settles_the_alias(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(_hand_linked(backend_settings), clock=clock) as svc:
        store = svc.stores.entities
        memory = await _remember(svc, "my sister called")
        for name in ("Anna", "Beth"):
            other = await _remember(svc, f"my sister {name} is here")
            alias = PlannedAlias(EntityRef(name), "my sister", AliasOrigin.rule)
            await store.link("a1", [_plan(other, (name, LinkRole.subject), aliases=(alias,))], NOW)
        ref = UnresolvedRef("my sister", "my sister", LinkRole.subject, ("Anna", "Beth"))
        (report,) = await store.link("a1", [_plan(memory, unresolved=(ref,))], NOW)
        assert report.entities == [] and report.unresolved == {"my sister": ["Anna", "Beth"]}
        (waiting,) = await store.unresolved("a1", 10)
        assert waiting["memory_id"] == memory
        assert sorted(c["name"] for c in waiting["candidates"]) == ["Anna", "Beth"]
        beth = await _entity_id(store, "a1", "Beth")
        anna = await _entity_id(store, "a1", "Anna")
        removed = await store.remove_alias("a1", beth, "My Sister", NOW)
        assert [item["memory_id"] for item in removed["linked"]] == [memory]
        assert await store.entities_of("a1", [memory]) == {memory: ["Anna"]}
        assert await store.unresolved("a1", 10) == []
        await store.undo("a1", removed["log_id"], NOW)  # ambiguous again, unlinked again
        assert await store.entities_of("a1", [memory]) == {}
        assert [u["memory_id"] for u in await store.unresolved("a1", 10)] == [memory]
        entity = await store.get_entity("a1", beth)
        assert entity is not None and entity.aliases == ["my sister"]
        assert (await store.get_entity("a1", anna)).mention_count == 1  # type: ignore[union-attr]


async def test_merge_dry_run_equals_the_run_and_an_undo_brings_the_entity_back(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(_hand_linked(backend_settings), clock=clock) as svc:
        store = svc.stores.entities
        one = await _remember(svc, "Kate loves jazz")
        two = await _remember(svc, "Katie: I play the sax")
        both = await _remember(svc, "Kate, also called Katie, came")
        await store.link("a1", [_plan(one, ("Kate", LinkRole.subject))], NOW)
        nick = PlannedAlias(EntityRef("Katie"), "Kit", AliasOrigin.rule)
        await store.link("a1", [_plan(two, ("Katie", LinkRole.speaker), aliases=(nick,))], NOW)
        await store.link(
            "a1",
            [_plan(both, ("Kate", LinkRole.speaker), ("Katie", LinkRole.mentioned))],
            NOW,
        )
        kate, katie = await _entity_id(store, "a1", "Kate"), await _entity_id(store, "a1", "Katie")
        before = await store.get_entity("a1", katie)
        preview = await store.merge("a1", katie, kate, NOW, dry_run=True)
        assert await store.get_entity("a1", katie) == before  # nothing changed
        done = await store.merge("a1", katie, kate, NOW, dry_run=False)
        assert {**preview, "log_id": None, "dry_run": None} == {
            **done,
            "log_id": None,
            "dry_run": None,
        }
        assert sorted(done["memories_moved"]) == sorted([two, both])
        assert done["aliases_moved"] == ["Kit"] and done["name_becomes_alias"] is True
        assert await store.get_entity("a1", katie) is None
        merged = await store.get_entity("a1", kate)
        assert merged is not None and merged.mention_count == 3
        assert sorted(merged.aliases) == ["Katie", "Kit"]
        assert await store.entities_of("a1", [both]) == {both: ["Kate"]}
        (entry, *_) = await store.log("a1", 10)
        assert (entry["action"], entry["id"]) == ("merge", done["log_id"])
        await store.undo("a1", done["log_id"], NOW)
        back = await store.get_entity("a1", katie)
        assert back == before.model_copy(  # type: ignore[union-attr]
            update={"updated_at": NOW}
        )
        assert await store.entities_of("a1", [both, two]) == {
            both: ["Kate", "Katie"],
            two: ["Katie"],
        }
        restored = await store.get_entity("a1", kate)
        assert restored is not None and restored.aliases == [] and restored.mention_count == 2
        with pytest.raises(InvalidInput, match="undone already"):
            await store.undo("a1", done["log_id"], NOW)


async def test_rename_keeps_the_old_name_as_an_alias_and_refuses_another_entitys_name(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(_hand_linked(backend_settings), clock=clock) as svc:
        store = svc.stores.entities
        memory = await _remember(svc, "Bob and Rob went fishing")
        await store.link(
            "a1", [_plan(memory, ("Bob", LinkRole.subject), ("Rob", LinkRole.subject))], NOW
        )
        bob = await _entity_id(store, "a1", "Bob")
        with pytest.raises(InvalidInput, match="merge the two instead"):
            await store.rename("a1", bob, "ROB", NOW)
        with pytest.raises(InvalidInput, match="is the name of entity"):
            await store.add_alias("a1", bob, "rob", AliasOrigin.user, NOW)
        with pytest.raises(NotFound):
            await store.rename("a2", bob, "Robert", NOW)  # another agent's entity
        renamed = await store.rename("a1", bob, "Robert Smith", NOW)
        entity = await store.get_entity("a1", bob)
        assert entity is not None and (entity.name, entity.aliases) == ("Robert Smith", ["Bob"])
        assert [e.id for e in await store.entity_named("a1", "bob")] == [bob]
        await store.undo("a1", renamed["log_id"], NOW)
        entity = await store.get_entity("a1", bob)
        assert entity is not None and (entity.name, entity.aliases) == ("Bob", [])
        added = await store.add_alias("a1", bob, "Bobby", AliasOrigin.user, NOW)
        assert (await store.add_alias("a1", bob, "bobby", AliasOrigin.user, NOW))[
            "changed"
        ] is False
        entity = await store.get_entity("a1", bob)
        assert entity is not None and [(a.alias, a.origin) for a in entity.alias_details] == [
            ("Bobby", AliasOrigin.user)
        ]
        await store.undo("a1", added["log_id"], NOW)
        assert (await store.get_entity("a1", bob)).aliases == []  # type: ignore[union-attr]
        assert [e["action"] for e in await store.log("a1", 10)] == [
            "alias_add",
            "rename",
        ]


async def test_a_batch_naming_one_entity_many_times_counts_each_memory_and_spans_their_moments(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(_hand_linked(backend_settings), clock=clock) as svc:
        store = svc.stores.entities
        days = ["2025-03-05", "2024-11-20", "2025-07-01", "2025-01-15"]
        ids = []
        for n, day in enumerate(days):
            written = await svc.memories.remember(
                RememberRequest(
                    content=f"Anna visited Lyon, day {n}",
                    agent_id="a1",
                    category="fact",
                    occurred_at=f"{day}T09:00:00Z",
                )
            )
            ids.append(written.id)
        first = await store.link("a1", [_plan(ids[0], ("Anna", LinkRole.subject))], NOW)
        assert first[0].created == ["Anna"]
        plans = [
            _plan(i, ("Anna", LinkRole.subject), ("Lyon", LinkRole.mentioned)) for i in ids[1:]
        ]
        plans.append(_plan(ids[1], ("ANNA", LinkRole.mentioned)))  # the same link again
        reports = await store.link("a1", plans, NOW)
        assert [r.created for r in reports] == [["Lyon"], [], [], []]  # each made once
        anna = await store.get_entity("a1", await _entity_id(store, "a1", "Anna"))
        lyon = await store.get_entity("a1", await _entity_id(store, "a1", "Lyon"))
        assert anna is not None and lyon is not None
        assert anna.mention_count == 4 and lyon.mention_count == 3
        assert (anna.first_seen or "")[:10] == "2024-11-20"
        assert (anna.last_seen or "")[:10] == "2025-07-01"
        assert ((lyon.first_seen or "")[:10], (lyon.last_seen or "")[:10]) == (
            "2024-11-20",
            "2025-07-01",
        )


async def test_all_of_an_agents_keys_are_what_find_entities_gives_for_each_of_them(
    backend_settings: Settings, clock: FakeClock
) -> None:
    """`entity_keys` reads every name and alias of one agent at once (the entity stage keeps
    them), or nothing when there are more than asked for."""
    async with open_cortex(_hand_linked(backend_settings), clock=clock) as svc:
        store = svc.stores.entities
        said = await _remember(svc, "Tom: my sister Anna moved to Lyon")
        sister = PlannedAlias(EntityRef("Anna"), "my sister", AliasOrigin.rule, EntityRef("Tom"))
        links = (("Tom", LinkRole.speaker), ("Anna", LinkRole.mentioned))
        await store.link("a1", [_plan(said, *links, aliases=(sister,))], NOW)
        other = await _remember(svc, "Maya: hi", agent="a2")
        await store.link("a2", [_plan(other, ("Maya", LinkRole.speaker))], NOW)
        keys = await store.entity_keys("a1", 10)
        assert keys is not None
        each = await store.find_entities("a1", [m.key for m in keys])
        assert sorted(keys, key=repr) == sorted(each, key=repr)
        assert {(m.key, m.by) for m in keys} >= {
            ("anna", "name"),
            ("tom", "name"),
            ("my sister", "alias"),
        }
        assert "maya" not in {m.key for m in keys}  # another agent's names are not its own
        assert await store.entity_keys("a1", len(keys) - 1) is None


_KIND = {"Lyon": EntityKind.place}


async def test_links_and_kinds_read_at_once_are_each_entitys_links_and_the_kinds_beside_them(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(_hand_linked(backend_settings), clock=clock) as svc:
        store = svc.stores.entities
        ids = [await _remember(svc, f"Tom: day {n} in Lyon with Anna") for n in range(4)]
        for n, memory_id in enumerate(ids):
            links = [("Tom", LinkRole.speaker), ("Anna", LinkRole.mentioned)]
            if n % 2:
                links.append(("Lyon", LinkRole.mentioned))
            plan = LinkPlan(
                memory_id,
                tuple(
                    PlannedLink(EntityRef(name, _KIND.get(name, EntityKind.person)), role)
                    for name, role in links
                ),
            )
            await store.link("a1", [plan], NOW)
        await svc.memories.forget(ForgetRequest(memory_id=ids[0], agent_id="a1"))
        tom, anna = [await _entity_id(store, "a1", name) for name in ("Tom", "Anna")]
        for limit in (2, 10):
            together = await store.links_and_kinds("a1", [tom, anna], limit)
            assert set(together) == {tom, anna}
            for entity_id in (tom, anna):
                alone = await store.linked_moments("a1", [entity_id], limit)
                assert together[entity_id].moments == alone
            beside = await store.kinds_beside("a1", tom, 10)
            if limit == 10:
                assert together[tom].beside == beside
                assert beside[ids[1]] == {EntityKind.person, EntityKind.place}
        assert await store.links_and_kinds("a1", [], 10) == {}
        assert (await store.links_and_kinds("a2", [tom], 10))[tom].moments == []


async def test_linking_a_batch_reads_its_memories_by_id_not_every_memory_of_their_agent(
    settings: Settings, clock: FakeClock
) -> None:
    """An import links each batch after writing it: the batch's memories are read by their ids,
    so the work does not grow with the memories the agent already has (the read went along
    the agent's index, every memory of the agent for every batch)."""
    async with open_cortex(_hand_linked(settings), clock=clock) as svc:
        store = svc.stores.entities
        db = store.db  # type: ignore[attr-defined]

        async def vm_steps(prefix: str) -> int:
            counted = [0]

            def count() -> int:
                counted[0] += 1
                return 0

            plans = [_plan(f"{prefix}-{i}", ("Anna", LinkRole.subject)) for i in range(1, 501)]
            await db.transact(lambda conn: conn.set_progress_handler(count, 100))
            await store.link("a1", plans, NOW)
            await db.transact(lambda conn: conn.set_progress_handler(None, 0))
            return counted[0]

        await db.transact(lambda conn: write_filler_memories(conn, "first", 500, NOW))
        few = await vm_steps("first")
        await db.transact(lambda conn: write_filler_memories(conn, "other", 50_000, NOW))
        await db.transact(lambda conn: write_filler_memories(conn, "second", 500, NOW))
        many = await vm_steps("second")
    assert many < few * 2, (few, many)
