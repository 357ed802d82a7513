"""Resolution: which entity each name and alias phrase of a memory is, planned from what the
store knows (`EntityMatch`es for the memory's keys) and applied by the store (`LinkPlan`).

The rules, in the order a careful person would apply them:
- a name links to the entity with that name (its key: `tokenize.normalize_name`); failing that,
  to the one entity that has it as an alias; a name nobody has is a new entity;
- an alias phrase ("my sister", "我表弟", "部長") links to the one entity it names: an alias in
  the words of the text's speaker first (Tom's "my sister" is not Maya's), else any. When it
  names several entities it links none and is reported with its candidates (kept in the store,
  so a person can settle it: never a silent merge);
- a kinship or role phrase that introduces a name ("my sister Anna", "上司の田中さん") becomes
  an alias of that name, in the words of the text's speaker (None: the agent's own user).
Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from cortex_mcp.engine.entities.mentions import Mention, Mentions
from cortex_mcp.models import (
    AliasOrigin,
    EntityKind,
    EntityMatch,
    EntityRef,
    LinkPlan,
    LinkRole,
    PlannedAlias,
    PlannedLink,
    UnresolvedRef,
)
from cortex_mcp.tokenize import normalize_name


@dataclass(frozen=True)
class Named:
    """A name an LLM's extraction gave for a memory (no offsets: it is not a rule's find)."""

    name: str
    kind: EntityKind = EntityKind.person
    role: LinkRole = LinkRole.mentioned


_ZH_POSSESSIVE = ("我的", "你的", "他的", "她的", "我们的")


def alias_forms(alias: str) -> list[str]:
    """An alias phrase and the forms it is also said in: Chinese says 我的表弟 and 我表弟 alike."""
    forms = [alias]
    text = alias.strip()
    for pronoun in _ZH_POSSESSIVE:
        if text.startswith(pronoun) and len(text) > len(pronoun):
            forms.append(pronoun[:-1] + text[len(pronoun) :])
            break
    return forms


_CAPITALISED = re.compile(r"(?<![\w'’])[A-Z][\w'’-]*[a-z][\w'’-]*")
_SENTENCE_END = re.compile(r"(?:^|[.!?。！？]\s+|\n)\s*$")


def known_words(text: str, found: Mentions) -> list[tuple[str, LinkRole]]:
    """Capitalised words the rules left alone (a sentence's first word, which may be any word):
    each links only when it is the name of an entity the agent already has ("Anna runs ...")."""
    taken = [(m.start, m.end) for m in found.mentions]
    words = []
    for match in _CAPITALISED.finditer(text):
        start, end = match.span()
        if any(s < end and start < e for s, e in taken):
            continue
        role = LinkRole.subject if _SENTENCE_END.search(text[:start]) else LinkRole.mentioned
        words.append((match.group(), role))
    return words


def lookup_keys(
    found: Mentions, named: Iterable[Named] = (), words: Iterable[tuple[str, LinkRole]] = ()
) -> list[str]:
    """The keys the store is asked about for one memory: its names, their aliases, its alias
    phrases and the capitalised words that may be known names."""
    keys = [normalize_name(m.name) for m in found.mentions]
    keys += [normalize_name(word) for word, _ in words]
    keys += [normalize_name(alias) for m in found.mentions for alias in m.aliases]
    keys += [normalize_name(r.phrase) for r in found.references]
    keys += [normalize_name(n.name) for n in named]
    return [key for key in dict.fromkeys(keys) if key]


class Known:
    """What the store knows about a batch's keys, and what the batch itself planned so far
    (an alias one memory introduces resolves the next memory's phrase)."""

    def __init__(self, matches: Iterable[EntityMatch]) -> None:
        self.by_key: dict[str, list[EntityMatch]] = {}
        for match in matches:
            self.by_key.setdefault(match.key, []).append(match)

    def names(self, key: str) -> list[EntityMatch]:
        return [m for m in self.by_key.get(key, []) if m.by == "name"]

    def aliases(self, key: str) -> list[EntityMatch]:
        return [m for m in self.by_key.get(key, []) if m.by == "alias"]

    def learn(self, plan: LinkPlan) -> None:
        """Names and aliases the plan creates, as the store will hold them."""
        for link in plan.links:
            self._add(normalize_name(link.entity.name), link.entity, "name", None)
        for alias in plan.aliases:
            speaker = alias.speaker.entity_id or alias.speaker.name if alias.speaker else None
            self._add(normalize_name(alias.alias), alias.entity, "alias", speaker)

    def _add(self, key: str, ref: EntityRef, by: str, speaker: str | None) -> None:
        identity = ref.entity_id or normalize_name(ref.name)
        present = self.by_key.setdefault(key, [])
        if any((m.entity_id or normalize_name(m.name)) == identity and m.by == by for m in present):
            return
        present.append(EntityMatch(key, ref.entity_id or "", ref.name, ref.kind, by, speaker))


def _ref(match: EntityMatch) -> EntityRef:
    return EntityRef(match.name, match.kind, match.entity_id or None)


def _identity(match: EntityMatch) -> str:
    return match.entity_id or normalize_name(match.name)


def _distinct(matches: Iterable[EntityMatch]) -> list[EntityMatch]:
    seen: dict[str, EntityMatch] = {}
    for match in matches:
        seen.setdefault(_identity(match), match)
    return list(seen.values())


def plan_links(
    memory_id: str,
    found: Mentions,
    known: Known,
    *,
    named: Sequence[Named] = (),
    words: Sequence[tuple[str, LinkRole]] = (),
    addressee: str | None = None,
) -> LinkPlan:
    """The links, aliases and unresolved references of one memory (`words`: capitalised words
    that link only as a known entity's name; `addressee`: the other speaker of a two-person
    exchange, whose alias a name said to the listener becomes: `_addressed`)."""
    links: list[PlannedLink] = []
    for word, role in words:
        by_name = known.names(normalize_name(word))
        if by_name:
            links.append(PlannedLink(_ref(by_name[0]), role))
    unresolved: list[UnresolvedRef] = []
    refs: dict[int, EntityRef] = {}  # mention index -> the entity it resolved to
    # an LLM that names the same entity knows its kind better than a rule's guess of person
    told = {normalize_name(n.name): n.kind for n in named if n.kind != EntityKind.person}
    inferred: list[PlannedAlias] = []
    for index, mention in enumerate(found.mentions):
        if addressee is not None and mention.rule == "address":
            addressed = _addressed(mention, addressee, known)
            if addressed is not None:
                inferred.append(addressed[0])
                if isinstance(addressed[1], UnresolvedRef):
                    unresolved.append(addressed[1])
                else:
                    links.append(addressed[1])
                continue
        kind = mention.kind
        if kind == EntityKind.person:
            kind = told.get(normalize_name(mention.name), kind)
        resolved = _resolve_name(mention.name, kind, known)
        if isinstance(resolved, UnresolvedRef):
            unresolved.append(_with_role(resolved, mention.role))
            continue
        refs[index] = resolved
        links.append(PlannedLink(resolved, mention.role))
    for item in named:
        resolved = _resolve_name(item.name, item.kind, known)
        if isinstance(resolved, UnresolvedRef):
            unresolved.append(_with_role(resolved, item.role))
        else:
            links.append(PlannedLink(resolved, item.role))
    speaker = _speaker(found.mentions, refs)
    aliases = [replace(said, speaker=speaker) for said in inferred] + [
        PlannedAlias(refs[index], form, AliasOrigin.rule, speaker)
        for index, mention in enumerate(found.mentions)
        if index in refs
        for alias in mention.aliases
        for form in alias_forms(alias)
        if normalize_name(form) and normalize_name(form) != normalize_name(refs[index].name)
    ]
    for reference in found.references:
        key = normalize_name(reference.phrase)
        if not key:
            continue
        outcome = _resolve_alias(key, speaker, known)
        if isinstance(outcome, EntityRef):
            links.append(PlannedLink(outcome, reference.role))
        elif outcome:
            names = tuple(sorted(m.name for m in outcome))
            unresolved.append(UnresolvedRef(reference.phrase, key, reference.role, names))
    plan = LinkPlan(memory_id, tuple(links), tuple(aliases), tuple(unresolved))
    known.learn(plan)
    return plan


def _addressed(
    mention: Mention, addressee: str, known: Known
) -> tuple[PlannedAlias, PlannedLink | UnresolvedRef] | None:
    """A name said to the listener ("Hey Maya!", "丽丽，…", "由紀、…") as an alias of the other
    speaker, and the memory's link to them; None (the name resolves as any name) when it is the
    addressee's own name or another entity's name. An alias another entity already has is kept
    but links none: the candidates are reported, as for any ambiguous alias."""
    key = normalize_name(mention.name)
    target = _resolve_name(addressee, EntityKind.person, known)
    if not key or isinstance(target, UnresolvedRef) or key == normalize_name(addressee):
        return None
    identity = target.entity_id or normalize_name(target.name)
    if any(_identity(m) != identity for m in known.names(key)):
        return None
    alias = PlannedAlias(target, mention.name, AliasOrigin.rule, None)
    others = [m for m in _distinct(known.aliases(key)) if _identity(m) != identity]
    if others:
        names = tuple(sorted({target.name, *(m.name for m in others)}))
        return alias, UnresolvedRef(mention.name, key, mention.role, names)
    return alias, PlannedLink(target, mention.role)


def _with_role(ref: UnresolvedRef, role: LinkRole) -> UnresolvedRef:
    return UnresolvedRef(ref.phrase, ref.key, role, ref.candidates)


def _resolve_name(name: str, kind: EntityKind, known: Known) -> EntityRef | UnresolvedRef:
    """The entity a name is: by that name, else the one whose alias it is, else a new one."""
    key = normalize_name(name)
    by_name = known.names(key)
    if by_name:
        return _ref(by_name[0])
    by_alias = _distinct(known.aliases(key))
    if len(by_alias) == 1:
        return _ref(by_alias[0])
    if len(by_alias) > 1:
        names = tuple(sorted(m.name for m in by_alias))
        return UnresolvedRef(name.strip(), key, LinkRole.mentioned, names)
    return EntityRef(name.strip(), kind)


def _speaker(mentions: Sequence[Mention], refs: dict[int, EntityRef]) -> EntityRef | None:
    """Who says the text: its speaker mention (a turn's speaker, a `Name:` label), if any."""
    for index, mention in enumerate(mentions):
        if mention.role == LinkRole.speaker and index in refs:
            return refs[index]
    return None


def _resolve_alias(
    key: str, speaker: EntityRef | None, known: Known
) -> EntityRef | list[EntityMatch]:
    """The one entity an alias phrase names (an entity, or the candidates when there are
    several; an empty list when it names nobody yet)."""
    candidates = _distinct(known.aliases(key) + known.names(key))
    if len(candidates) <= 1:
        return _ref(candidates[0]) if candidates else []
    own = _distinct(m for m in known.aliases(key) if _said_by(m, speaker))
    if len(own) == 1:
        return _ref(own[0])
    return candidates


def _said_by(match: EntityMatch, speaker: EntityRef | None) -> bool:
    """Whether an alias is in the words of `speaker` (None: the agent's own user)."""
    if speaker is None:
        return match.speaker_id is None
    return match.speaker_id is not None and match.speaker_id in (
        speaker.entity_id,
        speaker.name,
    )
