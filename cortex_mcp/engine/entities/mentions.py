"""Who a text names: the linking rules, offline, in English, Chinese and Japanese. Pure functions.

`find_mentions` reads one text (a turn, a memory) and returns the names it holds (`Mention`: who,
what kind, in which role, found by which rule, with the kinship phrases that became its aliases)
and the alias-only phrases it uses ("my sister", "我表弟", "部長": `Reference`). Markup first, then
each language's rules in order (`_ENGLISH_RULES`, `_CHINESE_RULES`, `_JAPANESE_RULES`); a later
rule never takes a span an earlier one took. Each mention says which kind of rule found it:

- `retain`: a `## Retain` line's entity tags (`- O(c=0.95) @Peter: ...`) name its subject.
- `label`: a `Name:` label at the start of a line names the speaker of that line.
- `slug`: an `@slug` mention.
- `kinship`: a kinship, role or pet word that introduces a name ("my sister Anna", "Anna, my
  sister", "Anna is my sister", "a dog named Rex", "我的表弟张伟", "同事小王", "张伟是我的表弟",
  "上司の田中さん", "うちの犬のポチ", "小林さんは私の幼なじみです"); the phrase becomes an alias.
- `name`: a self-introduction ("my name is Emily", "I'm Priya", "我叫孙悦", "中村と申します"), a
  Chinese surname with a title or a cue (张老师, 小王, 和王芳一起, 张伟说), a Japanese name with an
  honorific or a job title (田中さん, 佐藤部長), a place the lists know (Paris, 北京, 東京), a
  title in quotes, and in English capitalised runs that survive the stop lists.
- `address`: a name said to the other speaker ("Hey Maya!", "Thanks, Mel", "你好，刘琳").

Chinese has no capital letters and no spaces, so a Chinese name is only taken where a rule says a
name must follow and it starts with a known surname; famous names in passing (周杰伦) are left to
the LLM. Roles: `speaker` for whoever says the text, `subject` for a name that starts its sentence
(in Japanese: marked by は/が; or a Retain tag's entity), `mentioned` otherwise. Each entity
appears once (its first span; aliases gathered from every occurrence). docs/entities.md has the
stop lists, the near misses and what the rules get wrong."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from cortex_mcp.engine.entities import lexicon as lex
from cortex_mcp.models import EntityKind, LinkRole
from cortex_mcp.tokenize import CJK_CHAR, normalize_name


@dataclass(frozen=True)
class Mention:
    name: str  # as written, honorifics/possessive removed: "Anna", "张伟", "田中"
    kind: EntityKind  # best guess: person unless the rule knows better (pet, place, ...)
    role: LinkRole  # speaker | subject | mentioned
    start: int  # offsets of the name in the text ([start, end)); (0, 0) for the `speaker` given
    end: int
    rule: str  # "speaker" | "label" | "slug" | "retain" | "name" | "kinship" | "address"
    aliases: tuple[str, ...] = ()  # phrases this mention makes aliases of the same entity


@dataclass(frozen=True)
class Reference:
    phrase: str  # an alias-only phrase with no name beside it: "my sister", "我表弟", "部長"
    role: LinkRole
    start: int
    end: int


@dataclass(frozen=True)
class Mentions:
    mentions: tuple[Mention, ...]
    references: tuple[Reference, ...]


_ROLE_RANK = {LinkRole.speaker: 0, LinkRole.subject: 1, LinkRole.mentioned: 2}


@dataclass
class _Found:
    name: str
    kind: EntityKind
    start: int
    end: int
    rule: str
    aliases: list[str] = field(default_factory=list)
    kind_known: bool = False  # the rule saw the kind (pet word, place cue); person is a guess
    role: LinkRole | None = None  # set by the rule when it knows; else from the sentence


class _Scan:
    """One text being read: what the rules found so far and which spans they took."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[_Found] = []
        self.references: list[Reference] = []
        self._taken = bytearray(len(text))  # 1 where a rule took the character

    def free(self, start: int, end: int) -> bool:
        return self._taken.find(1, max(start, 0), end) == -1

    def take(self, start: int, end: int) -> None:
        start = max(start, 0)
        self._taken[start:end] = b"\x01" * (end - start)

    def add(self, found: _Found, span: tuple[int, int] | None = None) -> bool:
        """Keep a mention unless its span (default: the name's) overlaps one already taken."""
        start, end = span or (found.start, found.end)
        if not self.free(start, end):
            return False
        self.take(start, end)
        self.found.append(found)
        return True

    def refer(self, phrase_start: int, phrase_end: int) -> None:
        if not self.free(phrase_start, phrase_end):
            return
        self.take(phrase_start, phrase_end)
        phrase = self.text[phrase_start:phrase_end]
        role = LinkRole.subject if _starts_sentence(self.text, phrase_start) else LinkRole.mentioned
        self.references.append(Reference(phrase, role, phrase_start, phrase_end))


def _first_chars(*word_lists: Iterable[str]) -> str:
    """A lookahead on the first characters the words can start with: a pattern that tries a long
    alternation at every position fails at most positions after one character test."""
    chars = sorted({w[0] for words in word_lists for w in words})
    return "(?=[" + "".join(re.escape(c) for c in chars) + "])"


def _alternation(words: Iterable[str]) -> str:
    """A regex alternation of the words, longest first so 表弟 wins over 弟."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def _by_first_letter(alternation: str) -> str:
    """The same alternation (of words starting with a letter, bars only between them) with the
    words gathered under their first letter, in their order: `h(?:ey|i)|y(?:o|es)`. Words with
    different first letters never match at the same place, so it matches what the flat one
    does, the same word first; but a failed match tries one letter's words, not all of them
    (`_EN_ADDRESS` tries its greetings after every stop and colon of every text)."""
    words, depth, start = [], 0, 0
    for index, char in enumerate(alternation):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "|" and depth == 0:
            words.append(alternation[start:index])
            start = index + 1
    words.append(alternation[start:])
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0].casefold(), []).append(word[1:])
    return "|".join(f"{letter}(?:{'|'.join(rest)})" for letter, rest in groups.items())


def _holds(text: str, needles: tuple[str, ...]) -> bool:
    """Whether `text` holds one of `needles`: the marks or words one of which every match of a
    rule's pattern holds (the `_NEEDS` beside each; tests/test_mention_needles.py proves them
    from the patterns' parse). Most texts hold none, and `in` costs far less than a scan."""
    for needle in needles:  # noqa: SIM110 (a loop: any() over a generator costs 2.5x more)
        if needle in text:
            return True
    return False


# --- shared patterns -----------------------------------------------------------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々"
_KATA = "\u30a1-\u30fa\u30fc"
_HIRA = "\u3041-\u3096"
_SENTENCE_END = '.!?…\n:;。！？：；"“”()（）「」'
_OPENERS = " \t\"'“‘(（「『*-•>@"
_EMOJI = "\u2600-\u27bf\U0001f000-\U0001faff"  # symbols and pictographs, for a character class

_RETAIN = re.compile(
    r"^[ \t]*[-*][ \t]*[WBOS][ \t]*(?:\([^)\n]*\))?[ \t]*"
    r"(?P<tags>@[^\s:：@]+(?:[ \t,]+@[^\s:：@]+)*)[ \t]*[:：]",
    re.M,
)
_RETAIN_NEEDS = ("@",)
_TAG = re.compile(r"@([^\s:：@,]+)")
# What chat apps put around a display name, which is no part of it: an export's timestamp
# ("[12/03/2024, 14:22:05]", "12/03/2024, 14:22 - "), WhatsApp's "~ " before a number's own
# name, emoji before or after it ("Maya 🌸", "✨ Sam"), pronouns ("Maggie Chen (she/her)")
_STAMP = (
    r"(?:\[[^\]\n]{1,24}\][ \t]*"
    r"|\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4},?[ \t]+\d{1,2}:\d{2}(?::\d{2})?"
    r"(?:[ \t\u202f]?[AaPp]\.?[Mm]\.?)?[ \t]+[-–][ \t]+)?"
)
_MARKS = rf"[{_EMOJI}\ufe0f\u200d\U0001f3fb-\U0001f3ff]"  # with variation, joiner and skin tone
_DECORATION = rf"(?:[ \t]*(?:{_MARKS}|\((?:she|he|they|xe|ze|ey|any)(?:/[a-z]+){{1,2}}\)))*"
_LABEL_LATIN = re.compile(
    rf"^{_STAMP}(?:~[ \t\u202f]*)?(?:{_MARKS}[ \t]*)*(?:user:[ \t]*)?"
    rf"(?P<name>[A-Z][\w.'’-]{{0,30}}(?: [A-Z][\w.'’-]{{0,30}}){{0,2}}){_DECORATION}:[ \t]",
    re.M,
)
_LABEL_CJK = re.compile(rf"^[ \t]*(?P<name>[{_CJK}]{{1,8}})[：:]", re.M)
_LABEL_NEEDS = (":", "：")  # both label patterns'
_SLUG_NEEDS = ("@",)
_HANDLE_NEEDS = (":",)
_NOT_LABELS = frozenset(
    "user assistant ai system bot human note q a tip todo update edit re fwd ps warning error "
    "question answer summary example source date time subject from to cc title status result "
    "step http https 问 答 注意 用户 助手 质问 問 答え 質問 回答 ai伴侣 备注 メモ 注意".split()
)
_SLUG = re.compile(
    r"(?<![\w@.])@(?P<name>[^\s@:,.!?;，。！？：；()（）\"'“”]*[^\s@:,.!?;，。！？：；()（）\"'“”_.-])"
)


def _starts_sentence(text: str, start: int) -> bool:
    i = start
    while i > 0 and text[i - 1] in _OPENERS:
        i -= 1
    return i == 0 or text[i - 1] in _SENTENCE_END


def _role_at(text: str, start: int, end: int) -> LinkRole:
    """Subject when the name starts its sentence (Japanese: or is marked by は/が)."""
    if _starts_sentence(text, start):
        return LinkRole.subject
    after = text[end : end + 3]
    for honorific in lex.JA_HONORIFICS:
        if after.startswith(honorific):
            after = text[end + len(honorific) : end + len(honorific) + 1]
            break
    return LinkRole.subject if after[:1] in ("は", "が") else LinkRole.mentioned


# --- rules that read markup: retain tags, labels, slugs ------------------------------------


def _retain_tags(scan: _Scan) -> None:
    if not _holds(scan.text, _RETAIN_NEEDS):
        return
    for line in _RETAIN.finditer(scan.text):
        for tag in _TAG.finditer(line.group("tags"), 0):
            start = line.start("tags") + tag.start(1)
            found = _Found(
                tag.group(1), EntityKind.person, start, start + len(tag.group(1)), "retain"
            )
            found.role = LinkRole.subject
            scan.add(found, (start - 1, found.end))
        scan.take(line.start(), line.end())


# A lower-case display name as a label ("mkrause: ...", "yuki_h: ..."): a speaker only when the
# same handle labels two lines (of the text, or of the memories written together: `handles`).
# Chat apps' display names mix scripts ("momo猫", "橘子汽水_7", "夜猫子Z"): so may a handle.
# So may a number WhatsApp shows for someone not in the phone's contacts ("+1 415-555-0134"),
# or a display name of pictographs alone ("🌸", "🐱🐱"; not a check mark or an arrow, which
# head a list's lines).
_LABEL_HANDLE = re.compile(
    rf"^[ \t]*{_STAMP}(?:~[ \t\u202f]*)?"
    rf"(?P<name>[a-z{_CJK}][\w.-]{{0,30}}\w(?<!\.\.)|\+\d[\d \-().]{{6,18}}\d"
    r"|[\U0001f300-\U0001faff](?:[\U0001f300-\U0001faff\ufe0f\u200d\U0001f3fb-\U0001f3ff]){0,5})"
    rf"{_DECORATION}:[ \t]+(?P<rest>\S[^\n]*)",
    re.M,
)
_NOT_HANDLE_MARKS = frozenset("📌📝👉👆👇🔥⭐🚩💡🔔📣📢📎🔗📅📆⏰🕐🗓")
_NOT_HANDLES = _NOT_LABELS | frozenset(
    "fyi nb eta tldr tl.dr btw imo imho ps pps cc bcc fw via see also pros cons notes todos "
    "reminder reminders idea ideas fix bug issue task tasks goal goals plan plans done next "
    "why how what who when where which because so and but or if then else yes no ok okay "
    "name id key value type default example input output response request reply message "
    "total price cost location address email phone url link file path version".split()
)
_SPEECH = re.compile(rf"[{_CJK}]|[A-Za-z]+\W+[A-Za-z]")


def handle_labels(text: str) -> list[str]:
    """The lower-case display names that label the lines of `text` ("mkrause: Great, thanks!"),
    each line's, stop words ("note:", "todo:"), times and one-word values ("timeout: 30") left out."""
    if not _holds(text, _HANDLE_NEEDS):
        return []
    return [
        match.group("name")
        for match in _LABEL_HANDLE.finditer(text)
        if match.group("name").casefold() not in _NOT_HANDLES
        and match.group("name")[0] not in _NOT_HANDLE_MARKS
        and _SPEECH.search(match.group("rest"))
    ]


def _handle_labels(scan: _Scan, handles: frozenset[str]) -> None:
    names = handle_labels(scan.text)
    said = {name for name in names if name in handles or names.count(name) >= 2}
    if not said:
        return
    for match in _LABEL_HANDLE.finditer(scan.text):
        if match.group("name") not in said:
            continue
        found = _Found(
            match.group("name"), EntityKind.person, match.start("name"), match.end("name"), "label"
        )
        found.role = LinkRole.speaker
        if scan.add(found):
            scan.take(match.end("name"), match.start("rest"))


def _labels(scan: _Scan) -> None:
    if not _holds(scan.text, _LABEL_NEEDS):
        return
    for pattern in (_LABEL_LATIN, _LABEL_CJK):
        for match in pattern.finditer(scan.text):
            name = match.group("name")
            if name.casefold() in _NOT_LABELS or (pattern is _LABEL_CJK and name in lex.CJK_PLACES):
                continue
            found = _Found(name, EntityKind.person, match.start("name"), match.end("name"), "label")
            found.role = LinkRole.speaker
            if scan.add(found):
                scan.take(match.end("name"), match.end())


def _slugs(scan: _Scan) -> None:
    if not _holds(scan.text, _SLUG_NEEDS):
        return
    for match in _SLUG.finditer(scan.text):
        name = match.group("name")
        if not any(ch.isalpha() for ch in name):
            continue
        scan.add(
            _Found(name, EntityKind.person, match.start("name"), match.end("name"), "slug"),
            (match.start(), match.end()),
        )


# --- English -------------------------------------------------------------------------------

_UPPER = "A-ZÀ-ÖØ-Þ"  # Latin capitals with their accented forms: Émile, Zoë
_LOWER = "a-zß-öø-ÿ"
# A capitalised word of a name: "Anna", "José", "Émile", "O'Brien", "McKay".
_EN_WORD = rf"[{_UPPER}](?:[{_LOWER}]|['’][{_UPPER}])[\w'’-]*"
_EN_TITLED = rf"(?:(?:{_alternation(lex.TITLES)})\.?\s+)?"
_EN_NAME = rf"(?P<name>{_EN_WORD}(?:\s{_EN_WORD})?)"
_EN_ROLE_WORDS = _alternation(lex.PERSON_ROLES | lex.PET_ROLES)
_EN_ADJ = _alternation(lex.ROLE_ADJECTIVES)
_EN_POSSESSIVE = r"(?i:my|our|his|her|their|your)"
# "my sister Anna", "my best friend Leo", "my son's teacher, Mrs. Patel", "a dog named Rex"
_EN_ROLE_PHRASE = re.compile(
    rf"(?=[MmOoHhTtYy])\b(?P<phrase>(?P<poss>{_EN_POSSESSIVE})\s+"
    rf"(?:(?P<owner>(?i:{_EN_ROLE_WORDS}))['’]s\s+)?"
    rf"(?:(?i:{_EN_ADJ})\s+){{0,2}}"
    rf"(?P<role>(?i:{_EN_ROLE_WORDS})))\b"
    rf"(?:(?:,|\s+(?:is\s+|was\s+)?(?:named|called))?\s+{_EN_TITLED}{_EN_NAME})?"
)
# "Did the kitten settle in?", "the landlord fixed it": a role or pet word after "the" that a
# speaker's "my kitten" / "my landlord" made an alias (`resolve.alias_forms`); not a role many
# have ("the teacher", "the guy"), nor one a name, "of" or a clause follows ("the dog Rex", "the
# boss of", "the kid who").
_EN_THE_ROLE = re.compile(
    rf"(?=[Tt])\b(?P<phrase>[Tt]he\s+(?P<role>(?i:{_alternation(lex.OWN_ROLES)})))\b"
    rf"(?!['’]s|\s+(?:of|who|that|which|next|from|at|in)\b|\s+[{_UPPER}])"
)
# The name before a kinship phrase: "Anna, my sister", "Anna is my sister", "Anna's my sister".
_EN_NAME_BEFORE = re.compile(rf"(?<![\w'’])(?P<name>{_EN_WORD})(?:,\s*|\s+(?:is|was)\s+|['’]s\s+)$")
# "a dog named Rex", "Tom's cats are called Oscar and Milo"
_EN_NAMED = re.compile(
    rf"\b(?:named|called)\s+(?P<names>{_EN_WORD}(?:(?:,\s*|,?\s+and\s+){_EN_WORD})*)"
)
_EN_NAMED_NEEDS = ("named", "called")
_WORDS_BEFORE_NAMED = re.compile(r"([A-Za-z-]+)(?:\s+([A-Za-z-]+))?\s+(?:(?:is|are|was|were)\s+)?$")
_EN_SELF = re.compile(
    rf"(?=[MmCcIi])\b(?i:my\s+name\s+is|my\s+name['’]s|call\s+me|i\s+am\s+called|i['’]m\s+called)"
    rf"\s+{_EN_NAME}"
)
_EN_SELF_NEEDS = ("name", "call")  # in the lower-cased text
_GREETINGS = (
    r"hey|hi|hello|hiya|howdy|yo|thanks|thank\s+you|thx|ty|bye|goodbye|congrats|"
    r"congratulations|sorry|welcome|dear|morning|good\s+morning|good\s+night|goodnight|night|"
    r"see\s+you(?:\s+(?:later|soon|tomorrow|then|there))?|love\s+you|miss\s+you|cheers|wow|oh|"
    r"yes|yeah|yep|sure|ok|okay|agreed|great|awesome|nice|cool|haha|aww*|omg|way\s+to\s+go|"
    r"well\s+done|good\s+job|nice\s+one|of\s+course|absolutely|definitely|exactly|true|right|"
    r"hmm|ugh|oops|take\s+care|good\s+luck|happy\s+birthday|glad\s+to\s+help|no\s+problem|"
    r"no\s+worries|sounds\s+good|same\s+here|me\s+too"
)
_EN_GREETING = f"(?i:{_by_first_letter(_GREETINGS)})"
# what may follow a name said to someone: a stop, an emoji, the end of the line
_AFTER_CALL = rf"(?=\s*(?:[,!?.…{_EMOJI}]|$))"
_EN_ADDRESS = re.compile(
    rf"(?:^|(?<=[.!?…:\n\"“(]))[ \t]*(?P<greeting>{_EN_GREETING}),?\s+(?P<name>{_EN_WORD}){_AFTER_CALL}",
    re.M,
)
# the characters after which `_EN_ADDRESS` may start (its lookbehind; a new line is its `^`)
_ADDRESS_ANCHOR = re.compile(r"[.!?…:\n\"“(]")
# ", Gina!" / ", Nate." at the end of a sentence: a name said to the listener.
_EN_VOCATIVE = re.compile(
    rf"(?<=[a-z]),\s+(?P<name>{_EN_WORD})"
    rf"(?=\s*[!?{_EMOJI}]|\s*\.(?:\s|$)|\s*$)",
    re.M,
)
# "so proud of you Mags", "love you Ro!", "thank you Maya 🙏": a name right after "you" that
# ends what is said is said to the listener ("see you Friday" names a day)
_EN_YOU_CALL = re.compile(rf"(?<![\w'’])(?i:you)\s+(?P<name>{_EN_WORD}){_AFTER_CALL}", re.M)
_EN_RUN = re.compile(
    rf"(?<![\w'’@#.])[{_UPPER}](?:[\w'’-]*\w)?(?![.]\w)"
    rf"(?:(?: (?:of|the|de|da|di|van|von|der|del|la|le|du))* [{_UPPER}](?:[\w'’-]*\w)?)*"
)
_EN_SUFFIXES_NOT_NAMES = ("ing", "ed", "ly", "ful", "ous", "ness", "ment", "less", "able", "ish")
_EN_MONTH_BEFORE = frozenset(
    "in on of since until till by early late mid next last this every during through from to "
    "before after around".split()
)
_EN_MODAL_AFTER = frozenset("i we you he she they it this that".split())
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[^\w]*$")
_DIGIT_AROUND = re.compile(r"^\s*\d")


_CONTRACTION = re.compile(r"['’](?:s|ll|d|re|ve|m)$", re.I)


def _bare(word: str) -> str:
    """A word without a possessive or contraction: "Sara's" -> "Sara", "It's" -> "It",
    "Anna'll" -> "Anna"; "O'Brien" stays whole."""
    if "'" not in word and "’" not in word:
        return word
    return _CONTRACTION.sub("", word)


def _blocked(word: str) -> bool:
    bare = _bare(word)
    return (
        word.endswith(("n't", "n’t", "-style", "-based", "-like", "-ish"))
        or bare in lex.COMMON
        or (bare in lex.MONTHS and bare not in lex.MONTH_NAMES)
        or bare in lex.WEEKDAYS
        or bare in lex.HOLIDAYS
        or bare in lex.LANGUAGES
        or (len(bare) > 1 and bare.isupper())
    )


def _blocked_inside(word: str) -> bool:
    """`_blocked` for a word inside a sentence, where a capital means a name: "I met Will",
    "our dog Lucky" (at a sentence start "Will you ...?" is the verb)."""
    return _blocked(word) and _bare(word) not in lex.NAME_LIKE


def _alias_if_own(poss: str, phrase: str) -> list[str]:
    """A kinship phrase is an alias only in the speaker's own words: "my sister", not "his dog"."""
    return [phrase] if poss.casefold() in lex.FIRST_PERSON else []


def _english_roles(scan: _Scan) -> None:
    text = scan.text
    for match in _EN_ROLE_PHRASE.finditer(text):
        _english_role_phrase(scan, match)
    for match in _EN_THE_ROLE.finditer(text):  # "the kitten", "the landlord": someone's one
        scan.refer(match.start("phrase"), match.end("phrase"))
    named = _EN_NAMED.finditer(text) if _holds(text, _EN_NAMED_NEEDS) else ()
    for match in named:
        kind = _role_before_named(text, match.start())
        if kind is None:
            continue
        for word in re.finditer(_EN_WORD, match.group("names")):
            if _blocked_inside(word.group(0)):
                continue
            bare, start = _bare(word.group(0)), match.start("names") + word.start()
            found = _Found(bare, kind, start, start + len(bare), "kinship")
            found.kind_known = kind is EntityKind.pet
            scan.add(found)


def _role_before_named(text: str, start: int) -> EntityKind | None:
    """The kind a role word just before "named"/"called" says: "a dog named", "cats are called",
    "a guinea pig named"; None when no role word stands there ("a song called")."""
    before = _WORDS_BEFORE_NAMED.search(text, max(0, start - 40), start)
    if before is None:
        return None
    last = before.group(2) or before.group(1)
    pair = f"{before.group(1)} {before.group(2)}".casefold() if before.group(2) else ""
    for word in (pair, last.casefold()):
        if word in lex.PET_ROLES:
            return EntityKind.pet
        if word in lex.PERSON_ROLES or word in ("someone", "somebody", "person", "man", "woman"):
            return EntityKind.person
    return None


def _english_role_phrase(scan: _Scan, match: re.Match[str]) -> None:
    """A kinship phrase ("my sister") with the name after it ("my sister Anna"), before it
    ("Anna, my sister", "Anna is my sister"), or none: then it is a reference when it is the
    speaker's own ("my sister"; "my son's teacher" and "my son")."""
    text = scan.text
    kind = EntityKind.pet if match.group("role").casefold() in lex.PET_ROLES else EntityKind.person
    phrase_start, phrase_end = match.start("phrase"), match.end("phrase")
    aliases = _alias_if_own(match.group("poss"), match.group("phrase"))
    name = match.group("name")
    if name is not None and len(name.split()) == 2 and _blocked(name.split()[1]):
        name = name.split()[0]
    if name is not None and not _blocked_inside(name.split()[0]):
        bare, start = _bare(name), match.start("name")
        found = _Found(bare, kind, start, start + len(bare), "kinship", aliases)
        found.kind_known = kind is EntityKind.pet
        if _starts_sentence(text, phrase_start):
            found.role = LinkRole.subject
        if scan.add(found, (match.start(), start + len(bare))) and match.group("owner"):
            _refer_to_owner(scan, match)
        return
    before = _EN_NAME_BEFORE.search(text, max(0, phrase_start - 40), phrase_start)
    if before is not None and not _blocked(before.group("name")):
        bare, start = _bare(before.group("name")), before.start("name")
        found = _Found(bare, kind, start, start + len(bare), "kinship", aliases)
        found.kind_known = kind is EntityKind.pet
        if scan.add(found, (start, phrase_end)) and match.group("owner"):
            _refer_to_owner(scan, match)
        return
    if aliases:
        scan.refer(phrase_start, phrase_end)
        if match.group("owner"):
            _refer_to_owner(scan, match)
    elif (
        match.group("poss").casefold() == "your"
        and not match.group("owner")
        and match.group("role").casefold() in lex.OWN_ROLES
    ):
        scan.refer(phrase_start, phrase_end)  # the listener's "my grandmother" (resolve._owned)


def _refer_to_owner(scan: _Scan, match: re.Match[str]) -> None:
    """ "my son" in "my son's teacher": a reference of its own, inside a phrase already taken."""
    if match.group("poss").casefold() in lex.FIRST_PERSON:
        start, end = match.start("phrase"), match.end("owner")
        scan.references.append(Reference(scan.text[start:end], LinkRole.mentioned, start, end))


def _english_self(scan: _Scan) -> None:
    if not _holds(scan.text.lower(), _EN_SELF_NEEDS):
        return
    for match in _EN_SELF.finditer(scan.text):
        name = (
            match.group("name").split()[0]
            if _blocked(match.group("name").split()[-1])
            else match.group("name")
        )
        if _blocked(name.split()[0]):
            continue
        found = _Found(
            _bare(name),
            EntityKind.person,
            match.start("name"),
            match.start("name") + len(_bare(name)),
            "name",
        )
        found.role = LinkRole.speaker
        scan.add(found)


_SECOND_PERSON = re.compile(
    r"\b(?i:you|your|you['’](?:re|ve|ll|d)|yours|thanks|thank|congrats|sorry|glad|hope|"
    r"love|miss|bye|see|welcome|cheers|awesome|great|nice|cool|wow|yes|sure|agreed)\b"
)


def _said_to_someone(text: str, comma: int) -> bool:
    """A ", Name!" at a sentence's end is said to the listener only if the sentence speaks to
    them ("Your support means a lot, Gina."); "my home country, Sweden." names a place."""
    window = max(0, comma - 200)
    sentence_start = max(text.rfind(mark, window, comma) for mark in ".!?\n") + 1
    sentence_start = max(sentence_start, window)
    return _SECOND_PERSON.search(text, sentence_start, comma) is not None


def _english_titles(scan: _Scan) -> None:
    """A title-cased phrase in quotes is a work's title, a thing: "Little Women", "Home Alone"."""
    for match in _EN_QUOTED.finditer(scan.text):
        title = match.group("title")
        words = title.split()
        if len(words) > 8 or not all(w[:1].isupper() or w in _TITLE_SMALL_WORDS for w in words):
            continue
        if len(words) == 1 and (_blocked(title) or title in lex.FAMILY_AS_NAME):
            continue
        found = _Found(title, EntityKind.thing, match.start("title"), match.end("title"), "name")
        found.kind_known = True
        scan.add(found)


def _english_named_others(scan: _Scan) -> None:
    """ "Her name is Shadow", "his name's Kyle", "I named her Tilly": a pet when a pet word
    came just before, a person otherwise."""
    text = scan.text
    if not _holds(text, _EN_OTHER_NAMED_NEEDS):
        return
    for match in _EN_OTHER_NAMED.finditer(text):
        name = match.group("name").split()[0]
        if _blocked_inside(name):
            continue
        bare = _bare(name)
        pet = _PET_WORD.search(text, max(0, match.start() - 120), match.start()) is not None
        kind = EntityKind.pet if pet else EntityKind.person
        found = _Found(bare, kind, match.start("name"), match.start("name") + len(bare), "name")
        found.kind_known = pet
        scan.add(found)


def _english_address(scan: _Scan) -> None:
    text = scan.text
    vocatives = _EN_VOCATIVE.finditer(text) if "," in text else ()  # it starts at a comma
    after_you = _EN_YOU_CALL.finditer(text) if "you" in text.casefold() else ()
    for pattern, matches in (
        (_EN_ADDRESS, _addresses(text)),
        (_EN_VOCATIVE, vocatives),
        (_EN_YOU_CALL, after_you),
    ):
        for match in matches:
            name = match.group("name")
            bare = _bare(name)
            if pattern is _EN_VOCATIVE and not (
                _said_to_someone(scan.text, match.start()) or _asked_of(text, match, bare)
            ):
                continue
            if bare in lex.FAMILY_AS_NAME:
                scan.refer(match.start("name"), match.start("name") + len(bare))
                continue
            if _blocked_inside(name) or bare in lex.MONTHS or bare in lex.NOT_ALONE:
                continue
            if pattern is _EN_YOU_CALL and _names_no_one_called(bare):
                continue
            found = _Found(
                bare,
                EntityKind.person,
                match.start("name"),
                match.start("name") + len(bare),
                "address",
            )
            found.role = LinkRole.mentioned
            scan.add(found)


def _asked_of(text: str, match: re.Match[str], name: str) -> bool:
    """A question that ends with ", Name?" asks it of that name ("How was the climbing, Mags?"),
    unless the name is a day, a place or a brand ("Are we still on for lunch, Friday?")."""
    return text.startswith("?", match.end("name")) and not _names_no_one_called(name)


def _names_no_one_called(word: str) -> bool:
    """A day, place or brand after "you" ("see you Friday", "meet you at Costa"): no listener."""
    return (
        word in lex.WEEKDAYS
        or word in lex.EN_PLACES
        or word in lex.BRANDS
        or word in lex.EXCLAMATIONS
        or re.fullmatch(_EN_GREETING, word) is not None
    )


def _addresses(text: str) -> Iterator[re.Match[str]]:
    """What `_EN_ADDRESS.finditer(text)` finds, tried only where its anchor lets a match start
    (the text's start, after one of `_ADDRESS_ANCHOR`) rather than at every position."""
    end = 0
    starts = (anchor.end() for anchor in _ADDRESS_ANCHOR.finditer(text))
    for start in itertools.chain((0,), starts):
        if start < end:
            continue
        match = _EN_ADDRESS.match(text, start)
        if match is not None:
            yield match
            end = match.end()


_EN_QUOTED = re.compile(r"[\"“](?P<title>[A-Z][^\"”\n]{0,80}?)[.,!?]?[\"”]")
_TITLE_SMALL_WORDS = frozenset(
    "a an the and of in on to for with at by from or is are my your".split()
)
_EN_OTHER_NAMED = re.compile(
    rf"(?=[HhIiTtn])\b(?:(?i:his|her|its|their)\s+name(?:\s+is|\s+was|['’]s)|named\s+(?:him|her|it|them))\s+"
    rf"{_EN_NAME}"
)
_EN_OTHER_NAMED_NEEDS = ("name",)
_PET_WORD = re.compile(rf"\b(?i:{_alternation(lex.PET_ROLES)})\b")


def _is_month_here(text: str, start: int, end: int) -> bool:
    """ "May" the month: a calendar word before it or a day number beside it; "May I" the modal."""
    before = _WORD_BEFORE.search(text, max(0, start - 30), start)
    if before and before.group(1).casefold() in _EN_MONTH_BEFORE:
        return True
    if _DIGIT_AROUND.match(text, end) or re.search(
        r"\d(?:st|nd|rd|th)?\s*(?:of\s+)?$", text[max(0, start - 8) : start]
    ):
        return True
    after = re.match(r"\s+(\w+)", text[end : end + 12])
    return bool(
        after and after.group(1).casefold() in _EN_MODAL_AFTER and _starts_sentence(text, start)
    )


def _english_names(scan: _Scan) -> None:
    text = scan.text
    segments = [
        seg for run in _EN_RUN.finditer(text) for seg in _segments(text, run.start(), run.group(0))
    ]
    # Capitalised words inside a sentence: a sentence-start word seen there too is a name.
    mid_sentence = {
        text[start:end].split()[0]
        for start, end in segments
        if not _starts_sentence(text, start) or _after_title(text, start)
    }
    for start, end in segments:
        if not scan.free(start, end):
            continue
        words = text[start:end].split()
        first, last = words[0], _bare(words[-1])
        at_sentence_start = _starts_sentence(text, start) and not _after_title(text, start)
        if len(words) == 1:
            if len(last) < 2 or last in lex.NOT_ALONE:
                continue
            if _bare(first) in lex.FAMILY_AS_NAME:  # "Grandma's party": Grandma, a relative
                scan.refer(start, start + len(_bare(first)))
                continue
            if first in lex.MONTH_NAMES and _is_month_here(text, start, end):
                continue
            if (
                at_sentence_start
                and first not in mid_sentence
                and _bare(first) not in lex.EN_PLACES
                and not _name_evidence(text, end, first)
            ):
                continue
        name_end = start + len(" ".join([*words[:-1], last]))
        kind, known = _english_kind(text, start, words)
        found = _Found(text[start:name_end], kind, start, name_end, "name", kind_known=known)
        scan.add(found)


# What follows a sentence-start word that makes it a name rather than a capitalised common word.
_PERSON_VERBS = (
    "said says told tells asked asks thinks thought called calls texted texts wants wanted "
    "loves loved likes liked hates hated came comes went goes bought gave gives sent sends "
    "invited visited met meets moved married adopted introduced helped helps taught showed "
    "brought cooked baked won wrote writes sang sings smiled laughed cried replied mentioned "
    "suggested recommended promised decided agreed admitted"
).split()
_AFTER_START_NAME = re.compile(
    r"(?:\s+(?:just|also|really|finally|always|never|and\s+I|then)\b)?\s+(?:"
    + "|".join(_PERSON_VERBS)
    + r")\b|\s+and\s+(?:I\b|me\b|my\b|[A-Z])"
    r"|,\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\s+(?:and|would|is|was|are|will)\b"
    r"|,\s+(?:you|your|you['’](?:re|ve|ll)|thanks|thank|how|what|did|do|can|could|would|are|"
    r"have|I|I['’]m|that['’]s|this|it['’]s|congrats|please|let['’]s|glad|so|we)\b"
)
# After "X's", these say the 's is "is" or "has" ("Painting's a fun way"), not a possessive.
_CONTRACTION_FOLLOWERS = frozenset(
    "a an the so really been my your our his her their mostly great awesome not just always "
    "pretty very such all also still definitely totally got gotten going gonna never too more "
    "one what how".split()
)
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)")


def _name_evidence(text: str, end: int, word: str) -> bool:
    """A single capitalised word at a sentence start is a name only with evidence: a possessive
    ("Ethan's birthday"), "and I" or another name after it, a verb only people do ("May said"),
    or a comma then words said to someone ("Caroline, you did it"). "Dinner was great" has none."""
    if word.casefold().endswith(_EN_SUFFIXES_NOT_NAMES) or len(_bare(word)) < 2:
        return False
    if _bare(word) != word:
        following = _NEXT_WORD.match(text, end)
        return following is not None and following.group(1).casefold() not in _CONTRACTION_FOLLOWERS
    return _AFTER_START_NAME.match(text, end) is not None


def _after_title(text: str, start: int) -> bool:
    return (
        re.search(r"\b(?:Mr|Mrs|Ms|Dr|Prof|Mx)\.\s*$", text[max(0, start - 8) : start]) is not None
    )


def _segments(text: str, offset: int, run: str) -> list[tuple[int, int]]:
    """Split a capitalised run at the words that are never part of a name; keep a leading "The"
    of a title ("The Hobbit"). A segment holding a holiday word ("New Year") is dropped."""
    segments: list[tuple[int, int]] = []
    current: list[tuple[int, int, str]] = []
    position = offset
    words: list[tuple[int, int, str]] = []
    for word in run.split(" "):
        words.append((position, position + len(word), word))
        position += len(word) + 1

    def close() -> None:
        while current and current[-1][2] in lex.CONNECTORS:
            current.pop()
        while current and current[0][2] in lex.CONNECTORS:
            current.pop(0)
        if current and not any(_bare(w) in lex.HOLIDAYS for _, _, w in current):
            segments.append((current[0][0], current[-1][1]))
        current.clear()

    for index, (start, end, word) in enumerate(words):
        if _bare(word) in lex.HOLIDAYS and current and current[-1][2] in lex.HOLIDAY_LEADS:
            current.clear()  # "New Year", "Mother's Day": a date, not a name
        if word in lex.CONNECTORS:
            if current:
                current.append((start, end, word))
            continue
        is_title_the = (
            word == "The"
            and not current
            and index + 1 < len(words)
            and not _blocked(words[index + 1][2])
        )
        name_like = _bare(word) in lex.NAME_LIKE and not _starts_sentence(text, start)
        if _blocked(word) and not is_title_the and not name_like:
            close()
            continue
        current.append((start, end, word))
        if _bare(word) != word:  # a possessive ends the name: "Sara's birthday"
            close()
    close()
    return segments


_FROM_TO = re.compile(r"[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* to [A-Z]")
_FROM_BEFORE_TO = re.compile(r"\bfrom [A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* to $")


# "Edinburgh, Scotland": a name right after a place and a comma is the place's region.
_AFTER_PLACE = re.compile(
    r"\b(?:in|to|from|near|visit|visited|visiting)\s+[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)*,\s*$"
)


def _english_kind(text: str, start: int, words: list[str]) -> tuple[EntityKind, bool]:
    last = _bare(words[-1])
    if " ".join([*words[:-1], last]) in lex.EN_PLACES:
        return EntityKind.place, True
    if last in lex.PLACE_SUFFIXES and len(words) > 1:
        return EntityKind.place, True
    if last in lex.ORGANIZATION_SUFFIXES and len(words) > 1:
        return EntityKind.organization, True
    if words[0] in lex.BRANDS or words[0] == "The":
        return EntityKind.thing, True
    before = text[max(0, start - 40) : start].split()
    cue = before[-1].casefold() if before else ""
    if cue in ("a", "an"):
        return EntityKind.thing, True
    if cue == "the" and len(before) > 1:  # "in the Midwest", "through the Himalayas"
        before = before[:-1]
        cue = before[-1].casefold()
        if cue not in lex.PLACE_CUES:
            return EntityKind.thing, False
    if _AFTER_PLACE.search(text, max(0, start - 80), start):
        return EntityKind.place, True
    if cue in lex.PLACE_CUES:
        verb = before[-2].casefold().strip(",.") if len(before) > 1 else ""
        if (
            cue not in lex.WEAK_PLACE_CUES
            or verb in lex.PLACE_VERBS
            or (cue == "from" and _FROM_TO.match(text, start))
            or (cue == "to" and _FROM_BEFORE_TO.search(text, max(0, start - 80), start))
        ):
            return EntityKind.place, True
    return EntityKind.person, False


# --- Chinese -------------------------------------------------------------------------------

_ZH_PREFIX = r"(?P<prefix>我的|我家的|我们的|我们家的|我们家|我家|我们|我)?"
_ZH_ROLE_PHRASE = re.compile(
    rf"{_first_chars('我', lex.ZH_PERSON_ROLES)}{_ZH_PREFIX}(?P<role>{_alternation(lex.ZH_PERSON_ROLES)})"
)
_ZH_AFTER = "".join(sorted(lex.ZH_AFTER_NAME))
_ZH_NAME_CHAR = rf"(?:(?![{_ZH_AFTER}])[{_CJK}])"
_ZH_PET_PHRASE = re.compile(
    rf"{_first_chars('我', lex.ZH_PET_ROLES)}{_ZH_PREFIX}(?P<role>{_alternation(lex.ZH_PET_ROLES)})"
    rf"(?:(?:的名字)?叫(?:做)?(?P<called>{_ZH_NAME_CHAR}{{1,4}}?)(?=[^{_CJK}]|$|[{_ZH_AFTER}])"
    rf"|(?P<name>(?P<dup>{_ZH_NAME_CHAR})(?P=dup)|{_ZH_NAME_CHAR}{{2,3}}?(?=[{_ZH_AFTER}]|$)))"
)
# 我家的狗, 我的猫: the speaker's own pet with no name beside it is a reference.
_ZH_OWN_PET = re.compile(
    rf"(?P<prefix>我的|我家的|我们家的|我家)(?P<role>{_alternation(lex.ZH_PET_ROLES)})"
)
# A place by its suffix after a verb of going or being: 我去的是绿禾公园, 到了西湖.
_ZH_SUFFIX_PLACE = re.compile(
    rf"(?<=[是去到在逛从往])(?P<name>{_ZH_NAME_CHAR}{{2,4}}?(?:{_alternation(lex.ZH_PLACE_SUFFIXES)}))"
)
# "张伟是我的表弟": the role after 是 is an alias of the name before it.
_ZH_IS_ROLE = re.compile(
    rf"(?P<name>[{_CJK}]{{2,4}}?)是(?P<phrase>(?:我的|我们的|我)(?P<role>{_alternation(lex.ZH_PERSON_ROLES)}))"
)
_ZH_ADDRESS = re.compile(
    rf"{_first_chars(lex.ZH_ADDRESS)}(?:^|(?<=[^{_CJK}]))(?:{_alternation(lex.ZH_ADDRESS)})[，,、！!\s]*(?P<name>[{_CJK}]{{2,4}}?)(?=[，。！？,.!?\s~～]|$)"
)
_ZH_SELF = re.compile(
    rf"(?:我叫|我的名字是|我的名字叫|我名字叫|我名叫)(?P<name>[{_CJK}]{{2,4}}?)(?=[^{_CJK}]|$|今年|是)"
)
_ZH_TITLED = re.compile(
    rf"(?P<name>(?:{_alternation(s for s in lex.ZH_SURNAMES if len(s) == 2)}|[{''.join(s for s in lex.ZH_SURNAMES if len(s) == 1)}])"
    rf"(?:{_alternation(lex.ZH_TITLES)}))"
)
_BOOK_TITLE = re.compile(r"《[^》]*》")
# A name that starts a clause and says, tells, asks or gives: 张伟说他明天来, 今天李娜告诉我.
_ZH_SAYS = re.compile(
    r"说|告诉|觉得|认为|问我|让我|给我|送我|和我|跟我|带我|约我|请我|邀请|打电话|发消息|发微信|来了|来看我"
)
_ZH_CLAUSE_OPENERS = (
    "今天",
    "昨天",
    "明天",
    "刚才",
    "后来",
    "然后",
    "那天",
    "上周",
    "周末",
    "最近",
)
# A name said to the listener at a sentence's end or start, in a sentence that speaks to them:
# 很高兴能够帮助到你，刘琳。 / 刘琳，你最近好吗？
_ZH_VOCATIVE = re.compile(
    rf"[，,]\s*(?P<end>[{_CJK}]{{2,4}}?)(?=[。！？!?~～]|$)"
    rf"|(?:^|(?<=[。！？!?\n]))\s*(?P<start>[{_CJK}]{{2,4}}?)[，,](?=\s*(?:你|您))",
    re.M,
)
# 小王, 老李: 小 or 老 before a surname is what friends and colleagues call each other; 阿强,
# 阿芳: 阿 before one character is a familiar name (阿姨, 阿拉, 阿里巴巴 are not: lex.ZH_NOT_AFTER_A).
_ZH_NICKNAME = re.compile(
    rf"(?<![{_CJK}])?(?P<name>[小老][{''.join(sorted(s for s in lex.ZH_SURNAMES if len(s) == 1))}]"
    rf"|阿(?![{''.join(sorted(lex.ZH_NOT_AFTER_A))}])[\u4e00-\u9fff])"
)
_ZH_WITH = re.compile(
    rf"(?:和|跟|与|同|给|对|问|告诉|找|陪|约|喊|帮|见到|遇到|碰到)(?P<name>[{_CJK}]{{2,4}}?)"
    rf"(?=一起|一块|聊天|聊|说|讲|打电话|打了|见面|吃饭|吃|去|玩|发|借|商量|学习|视频|通话|约会)"
)


def _zh_name_at(text: str, position: int) -> int | None:
    """End of a Chinese personal name starting at `position`, or None: a known surname and one
    or two given characters (or surname + title: 王总; or 小王, 老李)."""
    if text[position - 1 : position] in lex.ZH_MEASURE_BEFORE:
        return None  # 一张照片, 这张桌子: 张 counts, it is no surname here
    if text.startswith(lex.ZH_TIME_WORDS, position):
        return None  # 老师明天考试: 明 is a surname, 明天 a day
    head = text[position : position + 2]
    if head in lex.ZH_SURNAMES:
        given_start = position + 2
    elif head[:1] in lex.ZH_SURNAMES:
        given_start = position + 1
    elif (
        head[:1] in "小老阿"
        and len(head) == 2
        and CJK_CHAR.match(head[1])
        and head[1] not in lex.ZH_AFTER_NAME
    ):
        return position + 2
    else:
        return None
    for title in lex.ZH_TITLES:
        if text.startswith(title, given_start):
            return given_start + len(title)
    first = text[given_start : given_start + 1]
    if not first or not CJK_CHAR.match(first) or first in lex.ZH_NOT_GIVEN:
        return None
    second = text[given_start + 1 : given_start + 2]
    if (
        not second
        or not CJK_CHAR.match(second)
        or second in lex.ZH_AFTER_NAME
        or text.startswith(lex.ZH_TIME_WORDS, given_start + 1)
    ):
        return given_start + 1
    return given_start + 2


def _zh_plausible_name(name: str) -> bool:
    """A whole string that reads as a Chinese personal name: a known surname and one or two
    characters (a double surname and one or two), none a particle, and no common word."""
    if name in lex.ZH_NOT_NAMES or not all(CJK_CHAR.match(ch) for ch in name):
        return False
    if len(name) == 2 and name[0] in "小老" and name[1] in lex.ZH_SURNAMES:
        return True  # 小王, 老李: what friends and colleagues call each other
    if len(name) == 2 and name[0] == "阿" and name[1] not in lex.ZH_NOT_AFTER_A:
        return True  # 阿强
    surname = 2 if name[:2] in lex.ZH_SURNAMES else 1 if name[:1] in lex.ZH_SURNAMES else 0
    given = name[surname:]
    return (
        surname > 0
        and 1 <= len(given) <= 2
        and not any(ch in lex.ZH_NOT_GIVEN for ch in given)
        and given[-1] not in "家们里"  # 张家, 王家: a family or a house, not a person
    )


def _zh_with(scan: _Scan) -> None:
    """A name between a word of company or address and what is done with them:
    我和王芳一起去, 给李明打电话, 跟张伟聊天."""
    text = scan.text
    for match in _ZH_WITH.finditer(text):
        name, start = match.group("name"), match.start("name")
        if _zh_plausible_name(name) and text[start - 1 : start] not in lex.ZH_MEASURE_BEFORE:
            scan.add(_Found(name, EntityKind.person, start, match.end("name"), "name"))


def _zh_clause_starts(text: str, position: int) -> bool:
    """Nothing but punctuation, the start, or a time word before `position`."""
    before = text[position - 1 : position]
    return (
        not before or not CJK_CHAR.match(before) or text.endswith(_ZH_CLAUSE_OPENERS, 0, position)
    )


def _zh_vocative(scan: _Scan) -> None:
    text = scan.text
    for match in _ZH_VOCATIVE.finditer(text):
        group = "end" if match.group("end") else "start"
        name, start = match.group(group), match.start(group)
        if not _zh_plausible_name(name):
            continue
        if group == "end":
            sentence_start = max(
                text.rfind(mark, max(0, start - 80), start) for mark in "。！？!?\n"
            )
            if (
                "你" not in text[sentence_start + 1 : start]
                and "您" not in text[sentence_start + 1 : start]
            ):
                continue
        found = _Found(name, EntityKind.person, start, match.end(group), "address")
        found.role = LinkRole.mentioned
        scan.add(found)


def _zh_says(scan: _Scan) -> None:
    text = scan.text
    for verb in _ZH_SAYS.finditer(text):
        for length in (3, 2):
            start = verb.start() - length
            name = text[max(start, 0) : verb.start()]
            if start < 0 or not _zh_plausible_name(name) or not _zh_clause_starts(text, start):
                continue
            found = _Found(name, EntityKind.person, start, verb.start(), "name")
            found.role = LinkRole.subject
            scan.add(found)
            break
    for match in _ZH_NICKNAME.finditer(text):
        after = text[match.end() : match.end() + 1]
        ends = (
            not after
            or after in lex.ZH_AFTER_NAME
            or not CJK_CHAR.match(after)
            or text.startswith(lex.ZH_TIME_WORDS, match.end())  # 小王明天去北京
        )
        if ends and match.group("name") not in lex.ZH_NOT_NAMES:
            name = match.group("name")
            scan.add(_Found(name, EntityKind.person, match.start(), match.end(), "name"))


def _zh_is_role(scan: _Scan) -> None:
    text = scan.text
    for match in _ZH_IS_ROLE.finditer(text):
        start = match.start("name")
        for offset in range(len(match.group("name"))):  # the name ends right before 是
            end = _zh_name_at(text, start + offset)
            if end == match.end("name"):
                found = _Found(
                    text[start + offset : end], EntityKind.person, start + offset, end, "kinship"
                )
                found.aliases = [match.group("phrase")]
                scan.add(found, (match.start("phrase"), match.end()))
                break


def _zh_self(scan: _Scan) -> None:
    """我叫孙悦, 我是孙悦: the speaker's own name (我是 only when what follows reads as a name)."""
    for match in _ZH_SELF.finditer(scan.text):
        name = match.group("name")
        if match.group(0).startswith("我是") and not _zh_plausible_name(name):
            continue  # 我是学生: a description, not a name
        start = match.start("name")
        scan.add(
            _Found(name, EntityKind.person, start, match.end("name"), "name", role=LinkRole.speaker)
        )


def _zh_pets(scan: _Scan) -> None:
    """我家的猫咪咪, 我的狗叫小黑: a pet word and the pet's name; the phrase is the speaker's alias."""
    text = scan.text
    for match in _ZH_PET_PHRASE.finditer(text):
        group = "called" if match.group("called") else "name"
        phrase_start = match.start("prefix") if match.group("prefix") else match.start("role")
        found = _Found(
            match.group(group), EntityKind.pet, match.start(group), match.end(group), "kinship"
        )
        found.kind_known = True
        found.aliases = [text[phrase_start : match.end("role")]] if match.group("prefix") else []
        if _starts_sentence(text, phrase_start):
            found.role = LinkRole.subject
        scan.add(found, (phrase_start, match.end(group)))
    for match in _ZH_OWN_PET.finditer(text):
        scan.refer(match.start(), match.end("role"))


def _zh_roles(scan: _Scan) -> None:
    """我的表弟张伟, 同事小王, 我表弟叫张伟: a kinship or role word and the name after it; with no
    name, the speaker's own phrase (我表弟, 我的上司) or a bare family word (妈妈) is a reference."""
    text = scan.text
    for match in _ZH_ROLE_PHRASE.finditer(text):
        phrase_start = match.start("prefix") if match.group("prefix") else match.start("role")
        name_start = match.end("role") + (1 if text.startswith("叫", match.end("role")) else 0)
        name_end = _zh_name_at(text, name_start)
        if name_end is None:
            role = match.group("role")
            # 表弟到了, 领导说…: a role word opening a clause is the speaker's own one
            opens = role in lex.ZH_OWN_ROLES and _zh_clause_starts(text, phrase_start)
            if match.group("prefix") or role in lex.ZH_BARE_FAMILY or opens:
                scan.refer(phrase_start, match.end("role"))
            continue
        found = _Found(
            text[name_start:name_end], EntityKind.person, name_start, name_end, "kinship"
        )
        found.aliases = [text[phrase_start : match.end("role")]]
        if _starts_sentence(text, phrase_start) or text[phrase_start - 1 : phrase_start] == "和":
            found.role = LinkRole.subject
        scan.add(found, (phrase_start, name_end))


def _zh_places_by_suffix(scan: _Scan) -> None:
    for match in _ZH_SUFFIX_PLACE.finditer(scan.text):
        name = match.group("name")
        scan.add(
            _Found(name, EntityKind.place, match.start(), match.end(), "name", kind_known=True)
        )


def _zh_greetings(scan: _Scan) -> None:
    """你好，刘琳: a name right after a greeting, up to punctuation."""
    text = scan.text
    for match in _ZH_ADDRESS.finditer(text):
        start = match.start("name")
        if _zh_name_at(text, start) == match.end("name"):
            found = _Found(
                match.group("name"), EntityKind.person, start, match.end("name"), "address"
            )
            found.role = LinkRole.mentioned
            scan.add(found)


def _zh_titled(scan: _Scan) -> None:
    """张老师, 王总, 李阿姨: a surname and a title, unless 张 counts something (一张老师的照片)."""
    text = scan.text
    for match in _ZH_TITLED.finditer(text):
        if text[match.start() - 1 : match.start()] not in lex.ZH_MEASURE_BEFORE:
            scan.add(
                _Found(match.group("name"), EntityKind.person, match.start(), match.end(), "name")
            )


_CHINESE_RULES = (
    _zh_self,
    _zh_is_role,
    _zh_pets,
    _zh_roles,
    _zh_places_by_suffix,
    _zh_with,
    _zh_says,
    _zh_vocative,
    _zh_greetings,
    _zh_titled,
)


def _chinese(scan: _Scan) -> None:
    for book in _BOOK_TITLE.finditer(scan.text):  # 《听妈妈的话》: a title, nobody in it
        scan.take(book.start(), book.end())
    for rule in _CHINESE_RULES:
        rule(scan)


# --- Japanese ------------------------------------------------------------------------------

_JA_NAME = rf"(?:[{_HAN}]{{1,4}}|[{_KATA}]{{2,8}}|[{_HIRA}]{{2,4}})"
_JA_HON = _alternation(lex.JA_HONORIFICS + lex.JA_NAME_TITLES)
_JA_PARTICLE = r"(?=[がはとにをものへやで、。！？!?\s]|です|だ|$)"
_JA_OWN = r"(?P<prefix>うちの|私の|僕の|俺の|わたしの|あたしの)?"
_JA_ROLE_NAME = re.compile(
    rf"{_first_chars('うわ私僕俺あ', lex.JA_PERSON_ROLES, lex.JA_PET_ROLES)}{_JA_OWN}"
    rf"(?<![{_HAN}{_KATA}])(?P<role>{_alternation(lex.JA_PERSON_ROLES + lex.JA_PET_ROLES)})の"
    rf"(?P<name>{_JA_NAME}?)(?P<hon>{_JA_HON})?{_JA_PARTICLE}"
)
_JA_HONORIFIC = re.compile(
    rf"(?=[{_HAN}{_KATA}{_HIRA}])(?:(?<![{_HAN}{_KATA}])(?P<name>[{_HAN}]{{1,6}}|[{_KATA}]{{2,8}})"
    rf"|(?:(?<=^)|(?<=[、。！？!?\s「『（の]))(?P<hira>[{_HIRA}]{{2,4}}))(?P<hon>{_JA_HON})",
    re.M,
)
_JA_ADDRESS = re.compile(
    rf"(?:{_alternation(lex.JA_ADDRESS)})[、,！!\s]+(?P<name>{_JA_NAME}?)(?:{_JA_HON})?(?=[！!。、？?\s]|$)"
)
_JA_SELF = re.compile(rf"(?:私|僕|俺|わたし)の名前は(?P<name>{_JA_NAME}?)(?=です|だ|と申|。|$)")
_JA_BARE_ROLE = re.compile(
    rf"{_first_chars('うわ私僕俺あ', lex.JA_PERSON_ROLES)}(?<![{_HAN}{_KATA}]){_JA_OWN}"
    rf"(?P<role>{_alternation(lex.JA_PERSON_ROLES)})(?:さん|様|さま)?"
    rf"(?=[がはとにをもへのや、。！？!?\s]|で(?!す)|って|から|まで|より|$)"
)
# うちの犬, 私の猫: the speaker's own pet with no name beside it is a reference.
_JA_OWN_PET = re.compile(
    rf"(?P<prefix>うちの|私の|僕の|俺の|わたしの|あたしの)(?P<role>{_alternation(lex.JA_PET_ROLES)})"
    rf"(?=[がはとにをもへのや、。！？!?\s]|で(?!す)|$)"
)
# "小林さんは私の幼なじみです": the role after は is an alias of the name before it.
_JA_IS_ROLE = re.compile(
    rf"(?<![{_HAN}{_KATA}])(?P<name>[{_HAN}]{{1,4}}|[{_KATA}]{{2,8}})(?P<hon>{_JA_HON})?は"
    rf"(?P<phrase>(?:私の|僕の|俺の|うちの|わたしの)?(?P<role>{_alternation(lex.JA_PERSON_ROLES)}))"
    rf"(?=です|だ|でした|だった|。|$)"
)


def _ja_self(scan: _Scan) -> None:
    """私の名前は中村です, 中村と申します: the speaker's own name."""
    for match in _JA_SELF.finditer(scan.text):
        group = "name" if match.group("name") else "own"
        start, end = match.start(group), match.end(group)
        scan.add(
            _Found(match.group(group), EntityKind.person, start, end, "name", role=LinkRole.speaker)
        )


def _ja_is_role(scan: _Scan) -> None:
    """小林さんは私の幼なじみです: the role after は is an alias of the name before it (a job
    alone, 恵子は看護師です, says what she does, not who she is to the speaker)."""
    for match in _JA_IS_ROLE.finditer(scan.text):
        name = match.group("name")
        own = match.group("phrase") != match.group("role")
        if name in lex.JA_ROLE_WORDS or name in lex.JA_NOT_NAMES:
            continue
        if not own and match.group("role") in lex.JA_JOBS:
            continue
        found = _Found(name, EntityKind.person, match.start("name"), match.end("name"), "kinship")
        found.aliases = [match.group("phrase")]
        scan.add(found, (match.start("phrase"), match.end("phrase")))


def _ja_roles(scan: _Scan) -> None:
    """上司の田中さん, うちの犬のポチ, 妹の由美, 妹の綾が: a role or pet word, の, and the name. A
    single kanji without an honorific is a name after a family word and before a particle, unless
    it is a common noun (母の日, 兄の車が); a word ending like a thing or an event (課長の送別会,
    看護師の試験) is no name."""
    text = scan.text
    for match in _JA_ROLE_NAME.finditer(text):
        name = match.group("name")
        if not name or name in lex.JA_NOT_NAMES or name in lex.JA_ROLE_WORDS:
            continue
        if not match.group("hon") and not _ja_bare_name_after_role(text, match):
            continue
        kind = EntityKind.pet if match.group("role") in lex.JA_PET_ROLES else EntityKind.person
        phrase_start = match.start("prefix") if match.group("prefix") else match.start("role")
        found = _Found(name, kind, match.start("name"), match.end("name"), "kinship")
        found.kind_known = kind is EntityKind.pet
        found.aliases = [text[phrase_start : match.end("role")]]
        scan.add(
            found, (phrase_start, match.end("hon") if match.group("hon") else match.end("name"))
        )


_JA_AFTER_ONE_KANJI = ("が", "は", "も", "と", "に", "を", "って", "、")


def _ja_bare_name_after_role(text: str, match: re.Match[str]) -> bool:
    """Whether the word after a role and の, with no honorific, reads as a name: one kanji only
    as a known given name (息子の翔) or after a family word before a particle (妹の綾が), and no
    word that ends like a thing or an event (課長の送別会)."""
    name = match.group("name")
    if len(name) > 1:
        return not (_HAN_ONLY.fullmatch(name) and name.endswith(lex.JA_NOT_NAME_ENDINGS))
    if name in lex.JA_ONE_KANJI_NAMES:
        return True
    return (
        match.group("role") in lex.JA_FAMILY_ROLES
        and _HAN_ONLY.fullmatch(name) is not None
        and name not in lex.JA_ONE_KANJI_NOUNS
        and text.startswith(_JA_AFTER_ONE_KANJI, match.end("name"))
    )


_HAN_ONLY = re.compile(f"[{_HAN}]+")


def _ja_greetings(scan: _Scan) -> None:
    """おはよう、健太！: a name right after a greeting."""
    for match in _JA_ADDRESS.finditer(scan.text):
        name = match.group("name")
        if name and name not in lex.JA_ROLE_WORDS and name not in lex.JA_NOT_NAMES:
            found = _Found(
                name, EntityKind.person, match.start("name"), match.end("name"), "address"
            )
            found.role = LinkRole.mentioned
            scan.add(found, (match.start("name"), match.end()))


def _ja_honorifics(scan: _Scan) -> None:
    """田中さん, 翔太くん, 山本様, 佐藤部長: a name before an honorific or a job title (the title
    becomes an alias); 部長さん, お医者さん are role references, never names."""
    text = scan.text
    for match in _JA_HONORIFIC.finditer(text):
        group = "name" if match.group("name") else "hira"
        start, end, name = match.start(group), match.end(group), match.group(group)
        for prefix in lex.JA_TIME_PREFIXES:  # 今日田中さん: the kanji run holds a time word
            if name.startswith(prefix) and len(name) > len(prefix):
                name, start = name[len(prefix) :], start + len(prefix)
        honorific_end = match.end("hon")
        if name in lex.JA_FAMILY_KANA:  # おばあちゃん, ねえちゃん, 赤ちゃん: one word, a relative
            scan.refer(start, honorific_end)
        elif name in lex.JA_NOT_NAMES:  # たくさん, みなさん, 彼氏 (a word, not 彼 + 氏)
            continue
        elif text[start - 1 : start] in (
            "お",
            "ご",
        ):  # お母さん, お医者さん: one word with its さん
            if name in lex.JA_ROLE_WORDS:
                scan.refer(start - 1, honorific_end)
            scan.take(start - 1, honorific_end)
        elif name in lex.JA_ROLE_WORDS:
            scan.refer(start, end)
            scan.take(start, honorific_end)
        else:
            name, end, title = _without_job_title(name, end, match.group("hon"))
            found = _Found(name, EntityKind.person, start, end, "name")
            found.aliases = [title] if title else []
            scan.add(found, (start, honorific_end))


def _without_job_title(name: str, end: int, honorific: str) -> tuple[str, int, str | None]:
    """佐藤部長 -> (佐藤, 部長); 佐藤部長さん has the title inside the kanji run."""
    if honorific in lex.JA_NAME_TITLES:
        return name, end, honorific
    for title in lex.JA_NAME_TITLES:
        if name.endswith(title) and len(name) > len(title):
            return name[: -len(title)], end - len(title), title
    return name, end, None


def _ja_bare_roles(scan: _Scan) -> None:
    """母が, 部長は, うちの夫, うちの犬: a family or role word on its own, or the speaker's own
    pet, is a reference."""
    for match in _JA_BARE_ROLE.finditer(scan.text):
        start = match.start("prefix") if match.group("prefix") else match.start("role")
        scan.refer(start, match.end("role"))
    for match in _JA_OWN_PET.finditer(scan.text):
        scan.refer(match.start(), match.end("role"))


_JAPANESE_RULES = (_ja_self, _ja_is_role, _ja_roles, _ja_greetings, _ja_honorifics, _ja_bare_roles)


def _japanese(scan: _Scan) -> None:
    for rule in _JAPANESE_RULES:
        rule(scan)


# --- places the gazetteer knows (Chinese and Japanese) --------------------------------------

_CJK_PLACE = re.compile(_alternation(lex.CJK_PLACES))


def _cjk_places(scan: _Scan) -> None:
    for match in _CJK_PLACE.finditer(scan.text):
        scan.add(
            _Found(
                match.group(0),
                EntityKind.place,
                match.start(),
                match.end(),
                "name",
                kind_known=True,
            )
        )


# --- assembly ------------------------------------------------------------------------------

_LATIN = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]")


def find_mentions(
    text: str, *, speaker: str | None = None, handles: frozenset[str] = frozenset()
) -> Mentions:
    """The names and alias-only phrases in `text`; `speaker` (who said it) joins as a mention
    with role speaker and an empty span (0, 0), unless it is a role ("user", "assistant"). A
    `Name:` label is found in the text itself, on every line; a lower-case handle label
    ("mkrause: ...") when it labels two lines of the text or is one of `handles` (labels the
    caller saw on two lines of the same agent: `handle_labels`)."""
    scan = _Scan(text)
    _retain_tags(scan)
    _labels(scan)
    _handle_labels(scan, handles)
    _slugs(scan)
    if CJK_CHAR.search(text):
        _chinese_or_japanese(scan)
    if _LATIN.search(text):
        for rule in _ENGLISH_RULES:
            rule(scan)
    _turn_address(scan)
    return _assemble(scan, speaker)


# --- a name said to the listener at the very start of a turn ---------------------------------
# "Maya, how was your weekend?", "丽丽，周末过得怎么样？", "由紀、週末どうだった？": the linker makes
# it an alias of the other speaker of a two-person exchange.
_EN_TURN_ADDRESS = re.compile(rf"(?P<name>{_EN_WORD})(?P<mark>,|!+)[ \t]+(?P<rest>[^.!?\n]*[.!?]?)")
# "Theo, send some over!": after a name and a comma, a request is said to that name ("Porto, I
# loved it" may front a place: the first person alone is no sign).
_EN_TURN_REQUEST = re.compile(
    r"(?i:let['’]s|guess\s+what|look|listen|remember|don['’]t|please|check|come|send|tell\s+me|"
    r"wait|call\s+me|text\s+me|bring|hurry|stop|try)\b"
)
_YOU = re.compile(r"\b(?i:you|your|yours|you['’](?:re|ve|ll|d)|ya)\b")
# "Mags how was the climbing?", "Anna you there?": a name opening a turn with no mark, before a
# question put to the listener (the mark group is empty: `_english_turn_address` reads it)
_EN_TURN_BARE = re.compile(
    rf"(?P<name>{_EN_WORD})(?P<mark>)[ \t]+(?P<rest>(?:how|what|when|where|why|did|are|r|you|u"
    r"|have|can|could|do|were|will|would)\b[^.!\n]*\?)"
)
# what opens such a question and is no one's name: a group, an endearment, a topic
_EN_BARE_NOT_NAMES = frozenset(
    "guys everyone everybody all folks people team y'all yall ladies gents fam bro bros dude dudes "
    "man mate mates babe baby honey hun sweetie love question questions update random quick real "
    "serious poll survey".split()
)
_ZH_TURN_ADDRESS = re.compile(rf"(?P<name>[{_HAN}]{{2,3}})[，,][ \t]*(?P<rest>[^\n]*)")
# A kana name needs its ちゃん/くん/さん (ゆきちゃん、): a bare kana word before a comma is any word.
_JA_TURN_ADDRESS = re.compile(
    rf"(?:(?P<name>[{_HAN}]{{1,3}}|[{_KATA}]{{2,6}})(?P<hon>{_alternation(lex.JA_HONORIFICS)})?"
    rf"|(?P<kana>[{_HIRA}]{{2,4}})(?P<kana_hon>ちゃん|くん|さん))"
    rf"[、，,][ \t]*(?P<rest>[^\n]*)"
)
_ZH_TURN_NOT_NAMES = frozenset(
    "谢谢 哈哈 呵呵 嘿嘿 嘻嘻 嗯嗯 哦哦 好好 刚刚 常常 慢慢 天天 渐渐 明明 偏偏 往往 仅仅 悄悄 默默 "
    "试试 看看 想想 等等 拜拜 对对 是是 行行 妈妈 爸爸 哥哥 姐姐 弟弟 妹妹 爷爷 奶奶 姥姥 姥爷 宝宝 "
    "宝贝 亲爱的 老婆 老公 老板 老师 同学 大家 朋友 兄弟 其实 然后 所以 但是 不过 那么 好的 对了 "
    "而且 另外 还有 总之 反正 最近 今天 昨天 明天 周末 刚才 现在 后来 当时 以前 以后 确实 当然 "
    "首先 其次 最后 因为 如果 虽然 要是 不然 顺便 老实 真的 好吧 算了 没事 放心 别急 快点 亲爱 哥们 "
    "老兄 大哥 大姐 美女 帅哥 同志 女士 小姐 宝宝 亲亲 早安 午安 晚安 喂喂 嗨嗨 哎呀 天哪 我靠 "
    "中午 晚上 早上 上午 下午 今晚 明早 那个 这个 那么 这样 那样 平时 每次 有时 偶尔 终于 果然 其它 "
    "医生 护士 师傅 同学们 各位 大伙".split()
)
_JA_TURN_NOT_NAMES = frozenset(
    "今日 昨日 明日 最近 週末 先週 来週 今週 今年 去年 来年 毎日 今朝 今夜 昨夜 実は 本当 正直 "
    "結局 確か 一応 多分 先日 先月 来月 今月 今度 以前 当時 午前 午後 朝 夜 昼 今 後 次 前 "
    "皆 皆様 皆さん 先生 先輩 部長 課長 社長 ママ パパ ねえ ところで 因みに 例えば 特に 結果 "
    "マジ ホント オッケー ヤバ".split()
)


def _turn_address(scan: _Scan) -> None:
    text = scan.text
    start = _turn_body(scan)
    if start:  # a turn of a chat, its speaker's label first
        _at_calls(scan, start)
        if CJK_CHAR.search(text, start):
            _cjk_calls(scan, start)
    english = _EN_TURN_ADDRESS.match(text, start) or (
        _EN_TURN_BARE.match(text, start) if start else None  # only in a chat's turn
    )
    if english is not None:
        if _english_turn_address(english):
            _take_address(scan, english, EntityKind.person)
        return
    pattern = _JA_TURN_ADDRESS if _KANA.search(text) else _ZH_TURN_ADDRESS
    cjk = pattern.match(text, start)
    if cjk is None:
        return
    # 美香ちゃん、お疲れさま！: a name with ちゃん/くん/さん and a comma opening a turn calls the
    # listener whatever follows; a bare word before a comma must ask or greet them.
    called = pattern is _JA_TURN_ADDRESS and bool(cjk.group("hon") or cjk.group("kana"))
    if not called and not _asks_listener(cjk.group("rest"), japanese=pattern is _JA_TURN_ADDRESS):
        return
    group = "kana" if pattern is _JA_TURN_ADDRESS and cjk.group("kana") else "name"
    name = cjk.group(group)
    if group == "kana" and name in lex.JA_FAMILY_KANA | lex.JA_NOT_NAMES:
        return  # おばあちゃん、みなさん、
    stop = _JA_TURN_NOT_NAMES if pattern is _JA_TURN_ADDRESS else _ZH_TURN_NOT_NAMES
    if name in stop or name in lex.CJK_PLACES or name in lex.ZH_NOT_NAMES:
        return
    if pattern is _ZH_TURN_ADDRESS and not (
        (len(name) == 2 and name[0] == name[1]) or _zh_plausible_name(name) or _zh_given_name(name)
    ):
        return  # a Chinese word before a comma is a name as XX (丽丽), surname-led or a given name
    if pattern is _JA_TURN_ADDRESS and (name in lex.JA_NOT_NAMES or name in lex.JA_ROLE_WORDS):
        return
    _take_address(scan, cjk, EntityKind.person, group)


def _at_calls(scan: _Scan, start: int) -> None:
    """ "@Lu how was it?", "那就好！@佳佳 记得梳毛", "@あや 森さんの件": in a chat, an @name opening
    the turn or a sentence of it calls that person (one later in a sentence points at
    someone: "ask @mike")."""
    text = scan.text
    for found in scan.found:
        if found.rule != "slug":
            continue
        before = text[start : found.start - 1].rstrip()
        if not before or before[-1] in _CALL_OPENS:
            found.rule, found.role = "address", LinkRole.mentioned


_CALL_OPENS = ".!?…。！？~～"


def _cjk_calls(scan: _Scan, start: int) -> None:
    """A Chinese name and 你 opening a turn ("晓晓你攀岩现在能爬到几级了"), or a name closing it
    after 你 or a greeting ("爱你晓晓", "谢谢小雨！", "恭喜啊，小雨"); a Japanese name with its
    ちゃん/くん/さん opening a turn before no particle ("あやちゃんすご！") or closing a greeting
    ("おめでとう、たくみくん！"): said to the listener."""
    text = scan.text
    japanese = _KANA.search(text, start) is not None
    starts = (_JA_START_CALL, _ZH_START_CALL)
    for pattern in (_JA_START_CALL, _JA_END_CALL) if japanese else (_ZH_START_CALL, _ZH_END_CALL):
        match = pattern.match(text, start) if pattern in starts else pattern.search(text, start)
        if match is None:
            continue
        group = "kana" if japanese and match.group("kana") else "name"
        name = match.group(group)
        if japanese:
            if name in lex.JA_NOT_NAMES or name in lex.JA_ROLE_WORDS or name in lex.JA_FAMILY_KANA:
                continue
        elif not _zh_called_name(name):
            continue
        _take_address(scan, match, EntityKind.person, group)


def _zh_called_name(name: str) -> bool:
    return (
        name not in _ZH_TURN_NOT_NAMES
        and name not in lex.CJK_PLACES
        and name not in lex.ZH_NOT_NAMES
        and (
            (len(name) == 2 and (name[0] == name[1] or name[0] in _ZH_NICKNAME_HEADS))
            or _zh_plausible_name(name)
        )
    )


# what opens a Chinese nickname (阿凯, 小雨, 老陈): beside 你 or a greeting a given name alone
# cannot be told from a verb (希望你…, 祝你顺利, 和你分享)
_ZH_NICKNAME_HEADS = "阿小老"


def _zh_given_name(name: str) -> bool:
    """Two characters that may be a given name said without the surname (晓雯，…): none a
    particle, pronoun or common verb, and no kinship or role word (老板，…)."""
    return (
        len(name) == 2
        and not any(
            ch in lex.ZH_NOT_GIVEN or ch in lex.ZH_AFTER_NAME or ch in lex.ZH_NOT_IN_GIVEN_NAMES
            for ch in name
        )
        and name not in lex.ZH_PERSON_ROLES
        and name not in lex.ZH_ADDRESS
    )


_LABEL_END = re.compile(rf"{_DECORATION}[ \t]*[:：]")  # "Tom (he/him): ", "Maya 🌸: "


def _turn_body(scan: _Scan) -> int:
    """Where the words of the turn start: after a label found on the first line, else the text's start."""
    text = scan.text
    first_line = text.find("\n") if "\n" in text else len(text)
    labels = [f for f in scan.found if f.rule == "label" and f.end <= first_line]
    start = min(labels, key=lambda f: f.start).end if labels else 0
    if labels and (decorated := _LABEL_END.match(text, start)):
        start = decorated.end()
    while start < len(text) and text[start] in " \t:：":
        start += 1
    return start


# Greetings and wishes are said to someone: "Maya, long time no see!", "周凯，好久不见！",
# "健太、久しぶり！" speak to the listener as a question or a "you" does.
_EN_GREETS = re.compile(
    r"^(?i:long time no see|happy birthday|happy new year|congrat|thanks|thank|good morning"
    r"|good night|welcome|good luck|well done|nice to (?:see|meet))"
)
_CJK_GREETS = (
    "好久不见", "早上好", "晚上好", "下午好", "生日快乐", "新年快乐", "节日快乐", "恭喜", "辛苦了",
    "加油", "谢谢", "欢迎", "晚安", "久しぶり", "おはよう", "こんにちは", "こんばんは", "お疲れ",
    "おめでとう", "ありがとう", "よろしく", "おかえり", "いらっしゃい", "おやすみ",
)  # fmt: skip
_CALL_END = rf"(?=[！!。~～？?{_EMOJI}]|\s*$)"
_ZH_START_CALL = re.compile(rf"(?P<name>[{_HAN}]{{2,3}}?)[你您]")
# after 你 a name is said to the listener ("爱你晓晓"), not after a word that leads 你 to a verb
# (跟你聊聊, 陪你走走, 帮你问问)
_ZH_END_CALL = re.compile(
    rf"(?:(?<![跟和陪帮给让带替为教请叫对向同与])[你您]"
    rf"|(?:{_alternation(_CJK_GREETS)})[啊呀啦哦]?[，,]?)(?P<name>[{_HAN}]{{2,3}}){_CALL_END}"
)
# "たくみくん！おめでとう", "あやちゃんすご！": a name with its ちゃん/くん/さん opening a turn and
# followed by a mark or a word that is no particle ("あやちゃんが来た", "田中さんから届いた" speak
# of them; "佐藤さんゴルフ始めたんだ" may say either)
_JA_PARTICLES = (
    "が は の も を に と へ や で か から まで より って たち ら とか なら だって じゃ にも とも"
).split()
_JA_START_CALL = re.compile(
    rf"(?:(?P<name>[{_HAN}]{{1,3}}|[{_KATA}]{{2,6}})(?P<hon>ちゃん|くん|さん|君)"
    rf"|(?P<kana>[{_HIRA}]{{2,4}})(?P<kana_hon>ちゃん|くん|さん))"
    rf"(?=[！!？?~～{_EMOJI}]|(?!{_alternation(_JA_PARTICLES)})[{_HIRA}])"
)
_JA_END_CALL = re.compile(
    rf"(?:{_alternation(_CJK_GREETS)})[^、，,！!]{{0,4}}[、，,！!]\s*"
    rf"(?:(?P<name>[{_HAN}]{{1,3}}|[{_KATA}]{{2,6}})(?P<hon>{_alternation(lex.JA_HONORIFICS)})"
    rf"|(?P<kana>[{_HIRA}]{{2,4}})(?P<kana_hon>ちゃん|くん|さん)){_CALL_END}"
)


def _english_turn_address(match: re.Match[str]) -> bool:
    """ "Maya, how was your weekend?", "Ben! Long time no see, how's the flat?", "Theo, send some
    over!": a name opening a turn, said to the listener; not a greeting or a common word ("Wow!",
    "Sunday, we…"), a month, a place, or a word that is no name ("Honestly, …")."""
    name = match.group("name")
    if (
        _blocked(name)
        or _bare(name) in lex.EN_PLACES
        or _bare(name) in lex.MONTHS
        or name.casefold().endswith((*_EN_SUFFIXES_NOT_NAMES, "ive", "ible"))
        or _bare(name) in lex.EXCLAMATIONS
        or _bare(name) in lex.BRANDS  # "Tesla! Did you buy one?" asks about a car
        or re.fullmatch(_EN_GREETING, name)
    ):
        return False
    rest = match.group("rest")
    if not match.group("mark"):  # _EN_TURN_BARE: a question, put to the listener
        return name.casefold() not in _EN_BARE_NOT_NAMES
    if (
        match.group("mark")[0] == "!"
    ):  # "Porto! How was it?" asks about a place: "you" or a greeting
        return _YOU.search(rest) is not None or _EN_GREETS.match(rest) is not None
    return _addresses_listener(rest) or _EN_TURN_REQUEST.match(rest) is not None


def _addresses_listener(sentence: str) -> bool:
    return (
        sentence.rstrip().endswith("?")
        or _YOU.search(sentence) is not None
        or _EN_GREETS.match(sentence) is not None
    )


def _asks_listener(rest: str, *, japanese: bool) -> bool:
    sentence = re.split(r"(?<=[。！？!?])", rest, maxsplit=1)[0].rstrip()
    if sentence.endswith(("？", "?")) or sentence.startswith(_CJK_GREETS):
        return True
    return (
        (("あなた" in sentence) or ("君は" in sentence))
        if japanese
        else ("你" in sentence or "您" in sentence)
    )


def _take_address(scan: _Scan, match: re.Match[str], kind: EntityKind, group: str = "name") -> None:
    """The name as an address: a new mention, or the person a name rule already found there."""
    start, end = match.start(group), match.end(group)
    for found in scan.found:
        if found.start == start and found.end == end:
            if found.rule == "name" and found.kind is EntityKind.person:
                found.rule, found.role = "address", LinkRole.mentioned
            return
    found = _Found(match.group(group), kind, start, end, "address")
    found.role = LinkRole.mentioned
    scan.add(found)


_ENGLISH_RULES = (
    _english_titles,
    _english_roles,
    _english_self,
    _english_named_others,
    _english_address,
    _english_names,
)
_KANA = re.compile(f"[{_HIRA}{_KATA}]")


def _chinese_or_japanese(scan: _Scan) -> None:
    """Kana make a text Japanese: its rules first, then the places; Chinese rules read the
    places first so a place holding a surname (张家界) is taken before the names."""
    if _KANA.search(scan.text):
        _japanese(scan)
        _cjk_places(scan)
    else:
        _cjk_places(scan)
        _chinese(scan)


# "thanks javi", "love you mags": chat is often typed in lower case; a lower-case word is read as
# a name only where a greeting or "you" calls someone (`lower_case_calls`)
_EN_LOWER_CALL = re.compile(
    rf"(?:(?:^|(?<=[.!?…:\n\"“(]))[ \t]*(?:{_EN_GREETING}),?|(?<![\w'’])(?i:you))"
    rf"\s+(?P<name>[a-z][a-z'’-]*[a-z]){_AFTER_CALL}",
    re.M,
)


def lower_case_called(text: str) -> list[str]:
    """The lower-case words `text` calls someone by ("thanks javi" -> ["javi"]): a name only if
    the memories written with it or the store know that person (`lower_case_calls`)."""
    if not _LATIN.search(text):
        return []
    return [
        word
        for match in _EN_LOWER_CALL.finditer(text)
        if (word := match.group("name")).capitalize() not in lex.FAMILY_AS_NAME  # "thanks mom"
    ]


def lower_case_calls(found: Mentions, text: str, names: Mapping[str, str]) -> Mentions:
    """`found` and the calls of `names` (lower case -> the name with its capital: people the
    memories written together name, or the store knows) typed in lower case in `text`: "thanks
    javi" where a memory beside it says "Javi!!". Only a known person's name is read so: in
    lower case any word may follow a greeting ("thanks man", "hey there")."""
    said = {normalize_name(m.name) for m in found.mentions}
    calls = []
    for match in _EN_LOWER_CALL.finditer(text):
        name = names.get(match.group("name"))
        if name is None or normalize_name(name) in said:
            continue
        said.add(normalize_name(name))
        start, end = match.span("name")
        calls.append(Mention(name, EntityKind.person, LinkRole.mentioned, start, end, "address"))
    return replace(found, mentions=found.mentions + tuple(calls)) if calls else found


def _assemble(scan: _Scan, speaker: str | None) -> Mentions:
    by_key: dict[str, Mention] = {}
    found = sorted(scan.found, key=lambda f: f.start)
    if speaker and speaker.strip() and speaker.strip().casefold() not in _NOT_LABELS:
        name = speaker.strip()
        by_key[normalize_name(name)] = Mention(
            name, EntityKind.person, LinkRole.speaker, 0, 0, "speaker"
        )
    for item in found:
        key = normalize_name(item.name)
        if not key:
            continue
        role = item.role or _role_at(scan.text, item.start, item.end)
        mention = Mention(
            item.name, item.kind, role, item.start, item.end, item.rule, tuple(item.aliases)
        )
        earlier = by_key.get(key)
        by_key[key] = _merge(earlier, mention, item.kind_known) if earlier else mention
    references = tuple(sorted(_unique_references(scan.references), key=lambda r: r.start))
    return Mentions(tuple(by_key.values()), references)


def _merge(earlier: Mention, later: Mention, later_kind_known: bool) -> Mention:
    aliases = earlier.aliases + tuple(a for a in later.aliases if a not in earlier.aliases)
    role = min(earlier.role, later.role, key=_ROLE_RANK.__getitem__)
    kind = later.kind if later_kind_known and earlier.kind is EntityKind.person else earlier.kind
    return Mention(earlier.name, kind, role, earlier.start, earlier.end, earlier.rule, aliases)


def _unique_references(references: list[Reference]) -> list[Reference]:
    seen: set[str] = set()
    unique = []
    for reference in references:
        key = normalize_name(reference.phrase)
        if key not in seen:
            seen.add(key)
            unique.append(reference)
    return unique


# --- questions -----------------------------------------------------------------------------

_ZH_QUESTION_NAME = re.compile(
    rf"^\s*(?P<name>[{_CJK}]{{2,4}}?)(?=是谁|是誰|是什么人|的|呢|最近|在哪|怎么样|好吗|喜欢|做什么|住在)"
)
# A lower-case possessive in a question ("what are maya's hobbies?"): a candidate the caller
# looks up among the entities it knows.
_LOWER_POSSESSIVE = re.compile(r"\b([a-z][a-z-]{1,30})['’]s\b")


def query_entities(query: str) -> tuple[str, ...]:
    """The names and alias phrases a question names, best first: names (in order of appearance),
    then alias-only phrases. "What are Maya's hobbies?" -> ("Maya",), "我表弟的老家在哪里" ->
    ("我表弟",), "田中さんは?" -> ("田中",)."""
    found = find_mentions(query)
    names = [m.name for m in sorted(found.mentions, key=lambda m: m.start)]
    question_name = _ZH_QUESTION_NAME.match(query)
    if question_name and _zh_plausible_name(question_name.group("name")):
        names.insert(0, question_name.group("name"))
    names += [w for w in _LOWER_POSSESSIVE.findall(query) if _plausible_lowercase_name(w)]
    subject = page_subject(query)
    if subject is not None:
        names.insert(0, subject)
    phrases = names + [r.phrase for r in found.references]
    seen: set[str] = set()
    unique = []
    for phrase in phrases:
        key = normalize_name(phrase)
        if key and key not in seen:
            seen.add(key)
            unique.append(phrase)
    return tuple(unique)


_END = r"[\s?？。.!！~～…]*$"
_PAGE_QUESTIONS = (
    re.compile(
        r"^\s*(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:tell|remind)\s+me\s+"
        r"(?:(?:everything|all|more|a\s+bit|a\s+little|something|anything)\s+)?(?:you\s+know\s+)?"
        rf"about\s+(?P<x>.+?){_END}",
        re.I,
    ),
    re.compile(
        r"^\s*what\s+(?:do|did)\s+(?:you|we|i)\s+(?:know|remember|have)\s+(?:about|on)\s+"
        rf"(?P<x>.+?){_END}",
        re.I,
    ),
    re.compile(
        r"^\s*(?:what\s+(?:can|could)\s+you\s+tell\s+me"
        r"|what\s+(?:have|had|did)\s+(?:i|we)\s+(?:told|tell|said\s+to|say\s+to)\s+you"
        r"|(?:please\s+)?(?:summari[sz]e|recap)\s+(?:what\s+you\s+know|everything)"
        r"|(?:please\s+)?catch\s+me\s+up|(?:give\s+me\s+)?(?:a\s+)?(?:quick\s+)?(?:rundown|recap))"
        rf"\s+(?:about|on|of)\s+(?P<x>.+?){_END}",
        re.I,
    ),
    re.compile(rf"^\s*(?:who\s+is|who\s+was|who['’]s)\s+(?P<x>.+?){_END}", re.I),
    re.compile(rf"^\s*(?:everything|all|anything)\s+about\s+(?P<x>.+?){_END}", re.I),
    re.compile(rf"^\s*what\s+about\s+(?P<x>.+?){_END}", re.I),
    re.compile(rf"^\s*(?:what['’]s|what\s+is|what\s+was)\s+(?P<x>.+?)\s+like{_END}", re.I),
    re.compile(rf"^\s*(?:do|did)\s+you\s+(?:remember|know)\s+(?P<x>.+?){_END}", re.I),
    re.compile(
        rf"^\s*(?:请)?(?:告诉我|跟我说说|和我说说|给我讲讲|说说|讲讲|聊聊(?!天)|谈谈|談談|介绍一下|介绍)(?:一下)?(?:关于)?"
        rf"(?P<x>.+?)(?:的(?:事情|事|情况|一切|信息|资料))?[吧吗呢]?{_END}"
    ),
    re.compile(rf"^\s*(?P<x>.+?)是(?:谁|誰|什么人|怎样的人)[呀啊呢吗]?{_END}"),
    re.compile(rf"^\s*(?:你知道|你记得)(?:关于)?(?P<x>.+?)(?:的(?:事情|事))?[吗么]{_END}"),
    re.compile(rf"^\s*关于(?P<x>.+?)(?:，?你知道什么|的(?:事情|事))?{_END}"),
    re.compile(
        rf"^\s*(?P<x>.+?)(?:について|のこと(?:を|について)?)(?:何か|何を)?(?:教えて|知って|覚えて)"
        rf"(?:ください|くれる|くれ|る|いる|いますか|ますか)?(?:か)?{_END}"
    ),
    re.compile(
        rf"^\s*(?P<x>.+?)(?:って|は)(?:誰|だれ|どんな人)(?:ですか|なの|だっけ|でしたっけ)?{_END}"
    ),
)
_EN_ALIAS_PHRASE = re.compile(
    rf"^(?i:my|our)\s+(?:(?i:{_EN_ROLE_WORDS})['’]s\s+)?(?:(?i:{_EN_ADJ})\s+){{0,2}}(?i:{_EN_ROLE_WORDS})$"
)


@functools.lru_cache(maxsize=1024)
def page_subject(query: str) -> str | None:
    """The name or alias a "tell me about X" question asks for a page on, or None.
    "tell me about Anna" / "what do you know about Anna?" / "who is my sister?" /
    "告诉我关于张伟的事" / "张伟是谁" / "田中さんについて教えて" -> "Anna", "my sister", "张伟", "田中".
    Kept per question: a recall asks it (for its page) and so do the linking rules that read
    the question's names (`query_entities`)."""
    for pattern in _PAGE_QUESTIONS:
        match = pattern.match(query)
        if match is None:
            continue
        subject = _page_subject_of(match.group("x").strip(" \t,，、\"'“”「」"))
        if subject is not None:
            return subject
    return None


def _page_subject_of(phrase: str) -> str | None:
    """The entity a phrase names: a CJK name or role (honorific dropped), a kinship phrase ("my
    sister"), an @slug, the name a rule finds in it ("my sister Anna" -> Anna, "Dr. Patel" ->
    Patel), a run of capitalised words, or one lower-case word that is no common word ("luna":
    the caller looks it up among the entities it knows)."""
    if not phrase:
        return None
    if CJK_CHAR.match(phrase):
        if len(phrase) > 8 or re.search(r"[\s，。？！、]", phrase):
            return None
        key = normalize_name(phrase)
        return phrase[: len(key)] if phrase.startswith(key) else phrase
    if _EN_ALIAS_PHRASE.match(phrase):
        return phrase
    words = phrase.split()
    if len(words) == 2 and words[0].casefold() == "the" and words[1].casefold() in lex.OWN_ROLES:
        return f"my {words[1].casefold()}"  # "the kitten": the one someone calls "my kitten"
    if len(words) > 6:
        return None
    if phrase.startswith("@"):
        return phrase[1:] or None
    named = find_mentions(phrase).mentions
    if named:
        return named[0].name
    bare_words = [*words[:-1], _bare(words[-1])]
    if len(words) <= 4 and all(w[:1].isupper() or w in lex.CONNECTORS for w in bare_words):
        return None if _blocked(bare_words[0]) else " ".join(bare_words)
    if len(words) == 1 and _plausible_lowercase_name(bare_words[0]):
        return bare_words[0]
    return None


def _plausible_lowercase_name(word: str) -> bool:
    return (
        word.isalpha()
        and len(word) > 2
        and not _blocked(word.capitalize())
        and not word.endswith(_EN_SUFFIXES_NOT_NAMES)
        and word not in _PRONOUNS
    )


_PRONOUNS = frozenset("yourself myself himself herself themselves ourselves yourselves it".split())


# --- third-person pronouns, for the linker to follow back to the turn before ----------------


@dataclass(frozen=True)
class Pronoun:
    """A he/she/it that stands for someone named just before: "She works as a translator",
    "他是做游戏开发的", "彼女は…"; `kind` person, or pet for Chinese 它."""

    kind: EntityKind
    role: LinkRole
    start: int
    end: int
    gender: str | None = None  # "f" (she, 她, 彼女), "m" (he, 他, 彼), None (它)


# he/she as subject; him, her, his as object or owner. "it" refers to anything: left out.
# the lookahead (folded as the words are: "ſhe") fails most places at once
_EN_PRONOUN = re.compile(r"(?=(?i:[hs]))\b(?i:(?P<subject>he|she)|him|her|his)\b")
_GENDER = {"he": "m", "him": "m", "his": "m", "she": "f", "her": "f", "他": "m", "她": "f"}
_GENDER |= {"彼": "m", "彼女": "f"}
# 他/她/它 but not 他们 (they), 其他/其它 (other), 他人 (others), 他乡, 她们, 它们.
_ZH_PRONOUN = re.compile(r"(?<![其])(?P<word>[他她它])(?![们人乡])")
# 彼/彼女 but not 彼ら (they), 彼氏 (boyfriend), 彼岸, 彼方; 彼女 is also "girlfriend":
# only before a particle (彼女は, 彼女が, 彼女の, 彼女に, 彼女も, 彼女を).
# 彼女ができた / 彼女がいる / 私の彼女: a girlfriend, not "she".
_JA_PRONOUN = re.compile(
    r"(?<!の)(?P<word>彼女|彼)(?!がい|ができ|はいな)(?P<particle>[はがのにもをと])"
)
_ZH_CLAUSE_LEAD = "那但可而就也还"
_KANA = re.compile(
    rf"[{_HIRA}{_KATA}]"
)  # a conjunction before a pronoun that still opens the clause


_TURN_LABEL = re.compile(r"^[^\s:：]{1,40}[:：][ \t]*")
_QUESTION_END = re.compile(r"[？?][\s」』）)]*$")


def zero_subject(text: str) -> str | None:
    """Whether a Chinese or Japanese turn may leave its subject unsaid: "question" when it asks
    (生意怎么样？, 何歳？), "statement" otherwise, "personal" when it says I or you; None for a
    text with Latin words or no CJK, where a subject is said. The linker follows an unsaid subject only in a question and the
    answer right after it (`resolve.follow_zero_subjects`)."""
    if text.isascii():  # no CJK character in it (most texts of an English import)
        return None
    body = _TURN_LABEL.sub("", text, count=1)
    if not CJK_CHAR.search(body) or _LATIN.search(body):
        return None
    if _FIRST_OR_SECOND.search(body):
        return "personal"  # 你周末去哪了？ / 我去爬山了: about the speakers, not the one before
    return "question" if _QUESTION_END.search(body) else "statement"


_FIRST_OR_SECOND = re.compile("你|您|我|咱|あなた|君|私|僕|俺|自分|わたし|あたし")


def pronouns(text: str) -> tuple[Pronoun, ...]:
    """The third-person singular pronouns of `text`, for the linker to follow back to the one
    person (or, for 它, pet) the turn before names: pronouns are not names, so `find_mentions`
    never returns them."""
    body = _LABEL_LATIN.sub("", text, count=1) if _holds(text, _LABEL_NEEDS) else text
    ascii_only = body.isascii()  # then no Chinese or Japanese label or pronoun can be in it
    if not ascii_only:
        body = _LABEL_CJK.sub("", body, count=1)
    offset = len(text) - len(body)
    found: list[Pronoun] = []
    for match in _EN_PRONOUN.finditer(body):
        role = LinkRole.subject if match.group("subject") else LinkRole.mentioned
        he_or_she: str | None = _GENDER[match.group().casefold()]
        at = (match.start() + offset, match.end() + offset)
        found.append(Pronoun(EntityKind.person, role, *at, he_or_she))
    if ascii_only:
        return tuple(found)  # in order already
    japanese = _KANA.search(body) is not None  # 他 in Japanese is "other" (他の人, その他)
    for match in () if japanese else _ZH_PRONOUN.finditer(body):
        kind = EntityKind.pet if match.group("word") == "它" else EntityKind.person
        before = body[max(0, match.start() - 1) : match.start()]
        opens = not before or not CJK_CHAR.match(before) or before in _ZH_CLAUSE_LEAD
        role = LinkRole.subject if opens else LinkRole.mentioned
        gender = _GENDER.get(match.group("word"))
        found.append(Pronoun(kind, role, match.start() + offset, match.end() + offset, gender))
    for match in _JA_PRONOUN.finditer(body):
        role = LinkRole.subject if match.group("particle") in "はが" else LinkRole.mentioned
        at = (match.start() + offset, match.end("word") + offset)
        found.append(Pronoun(EntityKind.person, role, *at, _GENDER[match.group("word")]))
    return tuple(sorted(found, key=lambda p: p.start))
