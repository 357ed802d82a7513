"""Resolution: which entity each name and alias phrase of a memory is, planned from what the
store knows (`EntityMatch`es for the memory's keys) and applied by the store (`LinkPlan`).

The rules, in the order a careful person would apply them:
- a name links to the entity with that name (its key: `tokenize.normalize_name`); failing that,
  to the one entity that has it as an alias; failing that, a person's English given name links
  to the one person known by another form of it ("Bea" for Beatrice, "Kenny" for Ken, "Mel" for
  Melanie: `given_names`) and becomes that person's alias, and to none when several are (its
  candidates); a name nobody has is a new entity;
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

from cortex_mcp.engine.entities import lexicon as lex
from cortex_mcp.engine.entities.given_names import (
    is_cut_from,
    latin_word,
    other_forms,
    plain_name,
)
from cortex_mcp.engine.entities.mentions import Mention, Mentions, Pronoun
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
    """An alias phrase and the forms it is also said in: Chinese says 我的表弟 and 我表弟 alike,
    a doubled family word once as well (我姐姐 and 我姐, 我的妹妹 and 我妹), and the speaker's own
    kinship or role word alone (我表弟 -> 表弟, 我姐 -> 姐姐); English says "my grandmother" as
    Grandma too (a family word used as a name)."""
    forms = [alias]
    text = alias.strip()
    for pronoun in _ZH_POSSESSIVE:
        if text.startswith(pronoun) and len(text) > len(pronoun):
            forms.append(pronoun[:-1] + text[len(pronoun) :])
            break
    for form in list(forms):
        word = form.strip()
        if len(word) >= 3 and word[-1] == word[-2] and word[-1] in _DOUBLED_FAMILY:
            forms.append(word[:-1])  # 我姐姐 -> 我姐 (a bare 姐姐 keeps its two characters)
    forms += _bare_role_forms(text)
    return list(dict.fromkeys(forms))


_DOUBLED_FAMILY = frozenset("姐哥弟妹妈爸爷奶")
_ZH_OWN_ALIAS = re.compile(r"^(?:我的|我)(?P<role>\S+)$")
_EN_OWN_ALIAS = re.compile(r"^(?i:my|our)\s+(?P<role>[a-z-]+)$", re.IGNORECASE)
# The family word said as a name for the speaker's own relative: "my grandmother" is Grandma.
_EN_FAMILY_NAMES = {
    "grandmother": "Grandma", "grandma": "Grandma", "granny": "Granny", "nana": "Nana",
    "grandfather": "Grandpa", "grandpa": "Grandpa", "mother": "Mom", "mom": "Mom",
    "mum": "Mum", "father": "Dad", "dad": "Dad", "aunt": "Auntie", "auntie": "Auntie",
}  # fmt: skip


def _bare_role_forms(alias: str) -> list[str]:
    zh = _ZH_OWN_ALIAS.match(alias)
    if zh is not None:
        role = zh.group("role")
        if len(role) == 1 and role in _DOUBLED_FAMILY:
            role += role  # 我姐 -> 姐姐
        return [role] if role in lex.ZH_OWN_ROLES else []
    en = _EN_OWN_ALIAS.match(alias)
    if en is not None and en.group("role").casefold() in _EN_FAMILY_NAMES:
        return [_EN_FAMILY_NAMES[en.group("role").casefold()]]
    return []


_CAPITALISED = re.compile(r"(?<![\w'’])[A-Z][\w'’-]*[a-z][\w'’-]*")
# a sentence starts at the text's start, after a sentence's end, a new line or a speaker's label
# ("Tom: Anna arrived on Friday": Anna is the subject)
_SENTENCE_END = re.compile(r"(?:^|[.!?。！？]\s+|\n|^[\w.'’-]{1,40}:[ \t]+)\s*$")


def _sentence_starts(before: str) -> bool:
    """`_SENTENCE_END.search(before)`, searched only where a match can start: each way it ends a
    sentence lies in the character before `before`'s trailing whitespace, but a label, which
    is `before` whole (at most 41 characters before that whitespace)."""
    words = len(before.rstrip())  # rstrip's whitespace is the pattern's \s
    return _SENTENCE_END.search(before, 0 if words <= 42 else words - 1) is not None


def known_words(text: str, found: Mentions) -> list[tuple[str, LinkRole]]:
    """Capitalised words the rules left alone (a sentence's first word, which may be any word):
    each links only when it is the name of an entity the agent already has ("Anna runs ...")."""
    taken = [(m.start, m.end) for m in found.mentions]
    words = []
    for match in _CAPITALISED.finditer(text):
        start, end = match.span()
        if any(s < end and start < e for s, e in taken):
            continue
        role = LinkRole.subject if _sentence_starts(text[:start]) else LinkRole.mentioned
        words.append((match.group(), role))
    return words


# Chinese and Japanese write names without spaces or capitals: every run of two to four Han
# characters, and every whole katakana run, may be a name the agent already knows ("张伟找到房子了",
# "豆豆三岁了", "モモが寝ている"); like a capitalised word, it links only as a known entity's name.
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々]{2,}")
_KATA_RUN = re.compile(r"[\u30a1-\u30fa\u30fc]{2,}")
_RUN_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々\u30a1-\u30fa\u30fc]")
_KNOWN_GRAM = 4  # the longest Han run looked up (Chinese names are 2-3 characters, a few 4)
# Characters no name contains (particles, pronouns, the commonest verbs): a gram with one is no
# name, which keeps a long text's lookups few.
_NEVER_IN_NAMES = frozenset("的了是在我你他她它们就都也还很不这那个吗呢吧啊和与说去来到把被给")
# What makes a name before it part of a place or a thing: 中山路, 田中町, 小林駅, 王府井店.
_PLACE_AFTER = (
    "路", "街", "道", "巷", "町", "市", "区", "県", "县", "村", "駅", "站", "通り", "店", "公园",
    "大学", "公司", "桥", "橋", "寺", "号", "線", "线", "丁目", "屋", "堂",
)  # fmt: skip
_CLAUSE_AFTER_JA = ("は", "が", "も")


def known_cjk_words(text: str, found: Mentions) -> list[tuple[str, LinkRole]]:
    """Runs of Han characters (2 to `_KNOWN_GRAM`) and whole katakana runs the rules left
    alone, each with its role (subject at a clause's start or before は/が/も): they link only
    as the name of an entity the agent already has. Not inside a title (《…》, 「…」 holds a
    name too), not a name followed by what makes it a place (中山路, 田中町), nor counted
    (一张, 这张), nor a katakana run's part (モモ is not in モモンガ)."""
    if _RUN_CHAR.search(text) is None:  # most texts of an English import: no run to look at
        return []
    taken = bytearray(len(text))
    for m in found.mentions:
        taken[m.start : m.end] = b"\x01" * (m.end - m.start)
    for title in re.finditer(r"《[^》]*》", text):
        taken[title.start() : title.end()] = b"\x01" * (title.end() - title.start())
    words: list[tuple[str, LinkRole]] = []
    for run in _HAN_RUN.finditer(text):
        for start in range(run.start(), run.end() - 1):
            if text[start - 1 : start] in lex.ZH_MEASURE_BEFORE and start > run.start():
                continue
            for end in range(start + 2, min(start + _KNOWN_GRAM, run.end()) + 1):
                gram = text[start:end]
                if any(ch in _NEVER_IN_NAMES for ch in gram):
                    break
                if taken.find(1, start, end) == -1 and not text.startswith(_PLACE_AFTER, end):
                    words.append((gram, _cjk_role(text, start, end)))
    for run in _KATA_RUN.finditer(text):
        if taken.find(1, run.start(), run.end()) == -1:
            words.append((run.group(), _cjk_role(text, run.start(), run.end())))
    if _KANA.search(text):  # 綾は新居に: a one-kanji given name, alone before a particle
        for single in _JA_ONE_KANJI.finditer(text):
            if taken[single.start()] == 0:
                words.append((single.group(), _cjk_role(text, single.start(), single.end())))
    return words


_KANA = re.compile(r"[\u3041-\u3096\u30a1-\u30fa]")
_JA_ONE_KANJI = re.compile(
    r"(?<![\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々お御ご])[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
    r"(?=[はがもとにを、])"
)


def _cjk_role(text: str, start: int, end: int) -> LinkRole:
    before = text[start - 1 : start]
    opens = not before or not re.match(r"[\w]", before)
    if opens or text.startswith(_CLAUSE_AFTER_JA, end):
        return LinkRole.subject
    return LinkRole.mentioned


_ZH_OWN = re.compile(r"^(?:我们的|我的|我们|我)")


def superior_keys(phrase: str) -> list[str]:
    """The alias keys that may name the same superior as a title or the general word: 部長 ->
    上司, 上司 -> 部長, 課長, ...; 经理 -> 领导, 我领导, 我的领导 (`lex.SUPERIOR_TITLES`)."""
    bare = _ZH_OWN.sub("", phrase.strip())
    related: list[str] = []
    for general, titles in lex.SUPERIOR_TITLES.items():
        if bare == general:
            related += sorted(titles)
        elif bare in titles:
            related.append(general)
    forms = (form for word in related for form in (word, f"我{word}", f"我的{word}"))
    return [normalize_name(form) for form in dict.fromkeys(forms)]


def lookup_keys(
    found: Mentions, named: Iterable[Named] = (), words: Iterable[tuple[str, LinkRole]] = ()
) -> list[str]:
    """The keys the store is asked about for one memory: its names, their aliases, its alias
    phrases and the capitalised words that may be known names."""
    keys = [normalize_name(m.name) for m in found.mentions]
    keys += [normalize_name(word) for word, _ in words]
    keys += [normalize_name(alias) for m in found.mentions for alias in m.aliases]
    keys += [normalize_name(r.phrase) for r in found.references]
    keys += [normalize_name(own) for r in found.references if (own := own_form(r.phrase))]
    keys += [key for r in found.references for key in superior_keys(r.phrase)]
    keys += [normalize_name(n.name) for n in named]
    people = [m.name for m in found.mentions if m.kind == EntityKind.person]
    people += [n.name for n in named if n.kind == EntityKind.person]
    keys += [key for name in people for key in other_forms(name)]
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

    def by_other_form(self, name: str) -> list[EntityMatch]:
        """The people known by another form of the given name `name` (`given_names`), one
        match each: by a form it pairs with or is made from, or by a name it cuts short."""
        word = latin_word(name)
        if word is None:
            return []
        keys = [*other_forms(name), *(k for k in self.by_key if is_cut_from(word, k))]
        found = (m for key in keys for m in self.by_key.get(key, ()))
        return _distinct(m for m in found if m.kind == EntityKind.person)

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
    other_forms_said: list[int] = []  # names that linked as another form of a person's name
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
        if _by_another_form(mention.name, resolved, known):
            other_forms_said.append(index)
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
    aliases += [  # "Bea", once it names Beatrice, is her alias: found by its own key next time
        PlannedAlias(refs[index], plain_name(found.mentions[index].name), AliasOrigin.rule, speaker)
        for index in other_forms_said
    ]
    for reference in found.references:
        key = normalize_name(reference.phrase)
        if not key:
            continue
        if _YOUR.match(reference.phrase) or _THE.match(reference.phrase):
            owned = _owned(reference.phrase, addressee, known)
            if owned is not None:
                links.append(PlannedLink(owned, reference.role))
            continue
        outcome = _resolve_alias(key, speaker, known)
        if outcome == []:  # names nobody: 部長 may be the speaker's one 上司 (and becomes an alias)
            outcome = _superior(reference.phrase, speaker, known) or []
            if isinstance(outcome, EntityRef):
                aliases.append(PlannedAlias(outcome, reference.phrase, AliasOrigin.rule, speaker))
        if isinstance(outcome, EntityRef):
            links.append(PlannedLink(outcome, reference.role))
        elif outcome:
            names = tuple(sorted(m.name for m in outcome))
            unresolved.append(UnresolvedRef(reference.phrase, key, reference.role, names))
    plan = LinkPlan(memory_id, tuple(links), tuple(aliases), tuple(unresolved))
    known.learn(plan)
    return plan


_YOUR = re.compile(r"^your\s+", re.IGNORECASE)
_THE = re.compile(r"^the\s+", re.IGNORECASE)


def own_form(phrase: str) -> str | None:
    """The speaker's own alias a "your X" or "the X" phrase stands for: "my X"."""
    for pattern in (_YOUR, _THE):
        if pattern.match(phrase):
            return pattern.sub("my ", phrase, count=1)
    return None


def _owned(phrase: str, addressee: str | None, known: Known) -> EntityRef | None:
    """ "your grandmother" said to the other speaker of a two-person exchange is the one entity
    that speaker calls "my grandmother"; "the kitten" is the one entity anyone calls "my
    kitten". None when there is no such speaker, or no such entity or several."""
    key = normalize_name(own_form(phrase) or phrase)
    if _THE.match(phrase):
        candidates = _distinct(known.aliases(key))
        return _ref(candidates[0]) if len(candidates) == 1 else None
    if addressee is None:
        return None
    listener = _resolve_name(addressee, EntityKind.person, known)
    if isinstance(listener, UnresolvedRef):
        return None
    own = _distinct(m for m in known.aliases(key) if _said_by(m, listener))
    return _ref(own[0]) if len(own) == 1 else None


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
    if kind == EntityKind.person:
        by_form = known.by_other_form(name)
        if len(by_form) == 1:
            return _ref(by_form[0])
        if by_form:
            names = tuple(sorted(m.name for m in by_form))
            return UnresolvedRef(name.strip(), key, LinkRole.mentioned, names)
    return EntityRef(name.strip(), kind)


def _by_another_form(name: str, resolved: EntityRef, known: Known) -> bool:
    """`name` linked to `resolved` as another form of its name: by neither its name nor an
    alias."""
    key = normalize_name(name)
    return (
        resolved.kind == EntityKind.person
        and key != normalize_name(resolved.name)
        and not known.names(key)
        and not known.aliases(key)
    )


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


def _superior(phrase: str, speaker: EntityRef | None, known: Known) -> EntityRef | None:
    """The one entity the speaker calls by the general word for a superior when `phrase` is a
    title (部長 -> the speaker's 上司), or by a title when it is the general word; None when
    there is none or several."""
    own = _distinct(
        m for key in superior_keys(phrase) for m in known.aliases(key) if _said_by(m, speaker)
    )
    return _ref(own[0]) if len(own) == 1 else None


def _said_by(match: EntityMatch, speaker: EntityRef | None) -> bool:
    """Whether an alias is in the words of `speaker` (None: the agent's own user)."""
    if speaker is None:
        return match.speaker_id is None
    return match.speaker_id is not None and match.speaker_id in (
        speaker.entity_id,
        speaker.name,
    )


FOLLOW_S = 1800.0  # how far back a pronoun's turn may look for who it stands for (same chat)
FOLLOW_TURNS = 2  # and how many memories back


def follow_pronouns(
    plans: Sequence[LinkPlan],
    said: Sequence[Sequence[Pronoun]],
    speakers: Iterable[str],
    times: Sequence[float | None],
) -> list[LinkPlan]:
    """The plans of memories written together (in order), each with a link for its pronouns:
    "She works as a translator" after "My sister Anna just moved to Lisbon" is about Anna;
    "他是做游戏开发的" after "我表弟张伟…" about 张伟. A pronoun stands for the one person (a pet
    for 它) the nearest earlier memory of the last `FOLLOW_TURNS`, within `FOLLOW_S`, links to
    (not a speaker of these memories: "he" is never the one talking or listening); none when
    that memory names several, or when the pronoun's own memory names a person of its own."""
    talking = {normalize_name(name) for name in speakers}
    followed = list(plans)
    genders = _genders(plans)
    for index, (plan, found) in enumerate(zip(plans, said, strict=True)):
        if any(_others(plan, named, talking) for named in _ANIMATE):
            continue  # "Luna turned one, we gave her a treat": her is the one it names
        for kind, gender in dict.fromkeys((p.kind, p.gender) for p in found):
            who = _antecedent(followed, index, kind, talking, times)
            if who is None or genders.get(_ref_identity(who), gender) != gender:
                continue  # "My manager Derek ... He gave me ..." then "She fell": not Derek
            if gender is not None:
                genders[_ref_identity(who)] = gender
            role = min((p.role for p in found if p.kind == kind), key=_ROLE_ORDER.index)
            links = (*followed[index].links, PlannedLink(who, role))
            followed[index] = replace(followed[index], links=links)
    return followed


def follow_zero_subjects(
    plans: Sequence[LinkPlan],
    zero: Sequence[str | None],
    said: Sequence[Sequence[Pronoun]],
    times: Sequence[float | None],
) -> list[LinkPlan]:
    """Chinese and Japanese leave a known subject unsaid: a question that names no one and has no
    pronoun (生意怎么样？, 何歳？, どこが悪いの？) asks about the one person or pet the memory just
    before it (within `FOLLOW_S`) links to, besides its speakers; the answer right after it, by
    someone else and naming no one either, is about them too. `zero`: per memory, "question",
    "statement" or None (a language that says its subjects: `mentions.zero_subject`)."""
    followed = list(plans)
    talking = {identity for plan in plans for identity in _speakers_of(plan)}
    for index, kind in enumerate(zero):
        if kind != "question" or index == 0 or not _unsaid(plans[index], said[index], talking):
            continue
        who = _one_animate(followed[index - 1], talking)
        if who is None or not _near(times, index - 1, index):
            continue
        followed[index] = _with_link(followed[index], who)
        answer = index + 1
        if (
            answer < len(plans)
            and zero[answer] == "statement"
            and _unsaid(plans[answer], said[answer], talking)
            and _near(times, index, answer)
            and _speakers_of(plans[answer]) != _speakers_of(plans[index])
        ):
            followed[answer] = _with_link(followed[answer], who)
    return followed


def _speakers_of(plan: LinkPlan) -> set[str]:
    return {_ref_identity(link.entity) for link in plan.links if link.role is LinkRole.speaker}


def _unsaid(plan: LinkPlan, said: Sequence[Pronoun], talking: set[str]) -> bool:
    """No pronoun, no alias phrase left unresolved and no person or pet besides the speakers."""
    return not said and not plan.unresolved and not _animates(plan, talking)


def _one_animate(plan: LinkPlan, talking: set[str]) -> EntityRef | None:
    named = _animates(plan, talking)
    return named[0] if len(named) == 1 else None


def _animates(plan: LinkPlan, talking: set[str]) -> list[EntityRef]:
    """The distinct people and pets a plan links to, other than the speakers."""
    named: dict[str, EntityRef] = {}
    for link in plan.links:
        identity = _ref_identity(link.entity)
        speaks = link.role is LinkRole.speaker or identity in talking
        if not speaks and link.entity.kind in _ANIMATE:
            named.setdefault(identity, link.entity)
    return list(named.values())


def _near(times: Sequence[float | None], before: int, after: int) -> bool:
    then, at = times[before], times[after]
    return then is not None and at is not None and abs(at - then) <= FOLLOW_S


def _with_link(plan: LinkPlan, who: EntityRef) -> LinkPlan:
    return replace(plan, links=(*plan.links, PlannedLink(who, LinkRole.subject)))


_OWN = re.compile(r"^(?:(?:my|our)\s+|我们家的|我家的|我们的|我的|我们|我|うちの)", re.IGNORECASE)


def _genders(plans: Sequence[LinkPlan]) -> dict[str, str]:
    """What the family and partner words that became aliases say of each entity: "f" for "my
    sister", 我姐姐, 妹; "m" for "my brother", 我表弟, 兄."""
    genders: dict[str, str] = {}
    for plan in plans:
        for alias in plan.aliases:
            word = _OWN.sub("", alias.alias.strip()).casefold()
            gender = "f" if word in lex.FEMALE_WORDS else "m" if word in lex.MALE_WORDS else None
            if gender is not None:
                genders.setdefault(_ref_identity(alias.entity), gender)
    return genders


def _ref_identity(ref: EntityRef) -> str:
    return ref.entity_id or normalize_name(ref.name)


_ROLE_ORDER = [LinkRole.speaker, LinkRole.subject, LinkRole.mentioned]
_ANIMATE = (EntityKind.person, EntityKind.pet)  # what he, she, 他, 它 may stand for


def _others(plan: LinkPlan, kind: EntityKind, talking: set[str]) -> list[EntityRef]:
    """The distinct entities of `kind` a plan links to, other than the speakers."""
    seen: dict[str, EntityRef] = {}
    for link in plan.links:
        ref = link.entity
        if (
            link.role is not LinkRole.speaker
            and ref.kind == kind
            and normalize_name(ref.name) not in talking
        ):
            seen.setdefault(ref.entity_id or normalize_name(ref.name), ref)
    return list(seen.values())


def _antecedent(
    plans: Sequence[LinkPlan],
    index: int,
    kind: EntityKind,
    talking: set[str],
    times: Sequence[float | None],
) -> EntityRef | None:
    at = times[index]
    for back in range(index - 1, max(index - FOLLOW_TURNS, 0) - 1, -1):
        then = times[back]
        if at is None or then is None or abs(at - then) > FOLLOW_S:
            return None
        found = _others(plans[back], kind, talking)
        if found:
            return found[0] if len(found) == 1 else None
    return None
