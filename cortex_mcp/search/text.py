"""Turning user text into a safe FTS5 expression that works for English, Chinese and Japanese.

Every term is emitted as a quoted phrase, so no user input can become FTS syntax. Terms are
OR-ed: BM25 ranks memories that match more (and rarer) terms higher, and a long question
still matches memories that share only some of its words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from cortex_mcp.tokenize import CJK_RUN, normalise

# Question and function words that carry no topic in a memory search.
EN_STOP_WORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll
    i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor
    not of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them themselves
    then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where
    where's which while who who's whom why why's will with won't would wouldn't you you'd you'll
    you're you've your yours yourself yourselves also just would ever really yes""".split()
)  # not like, know, think, tell, get: "what does Melanie like?" asks about liking
# Adjacent content words also go in as a phrase (a light form of the sequential dependence
# model): a memory that says "video game" outranks one that says "video" and "game" apart.
MAX_PHRASES = 16  # a long question must not become hundreds of phrase lookups
# Question words and particles removed from CJK runs before they are split into terms.
CJK_STOP_WORDS = (
    "为什么",
    "什么",
    "怎么样",
    "怎么",
    "哪里",
    "哪儿",
    "哪个",
    "多少",
    "如何",
    "是否",
    "有没有",
    "吗",
    "呢",
    "吧",
    "啊",
    "的",
    "了",
    "是",
    "在",
    "和",
    "与",
    "也",
    "都",
    "就",
    "我",
    "你",
    "どうして",
    "なぜ",
    "どこ",
    "いつ",
    "だれ",
    "誰",
    "何",
    "どう",
    "どれ",
    "ですか",
    "ますか",
    "です",
    "ます",
    "でした",
    "ました",
    "の",
    "に",
    "は",
    "を",
    "が",
    "で",
    "と",
    "も",
    "へ",
    "や",
    "か",
    "な",
    "ね",
    "よ",
)
_CJK_STOP = re.compile("|".join(re.escape(word) for word in CJK_STOP_WORDS))
_LATIN_TOKEN = re.compile(r"\w[\w.\-/:@#+'’]*\w|\w")
_POSSESSIVE = re.compile(r"['’]s$")
_HIRAGANA_ONLY = re.compile("[\u3040-\u309f]+")
_HAS_IDEOGRAPH = re.compile("[\u3400-\u9fff\uf900-\ufaff]")
_IDENTIFIER_CHARS = re.compile(r"[\d.\-/:@#_+]")
_PLAIN_WORD = re.compile(r"[^\W\d_]+")


@dataclass
class TextQuery:
    """A parsed query: the FTS expression, the terms it was built from, and LIKE fallbacks."""

    raw: str
    terms: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    like_patterns: list[str] = field(default_factory=list)

    @property
    def match(self) -> str:
        return match_of(self.quoted)

    @property
    def quoted(self) -> list[str]:
        """Each term and phrase as the FTS string literal it is matched as."""
        return [quote(term) for term in _unique([*self.terms, *self.phrases])]

    @property
    def empty(self) -> bool:
        return not self.terms


def quote(term: str) -> str:
    """An FTS5 string literal: the whole term is one phrase, never syntax."""
    return '"' + term.replace('"', '""') + '"'


def match_of(quoted: list[str]) -> str:
    return " OR ".join(quoted)


@dataclass(frozen=True)
class Bounded:
    """The part of a query worth reading when the index is large. Candidates are the memories
    matching `match` (the rarest terms), or only the newest `newest` of them when even the
    rarest matches more rows than the budget. The terms of `rest` add to each candidate's
    score without adding candidates, so a candidate scores what the whole expression gives
    it; `dropped` terms (too costly for FTS5 to count) are in neither."""

    match: str
    newest: int | None
    dropped: int
    rest: str = ""


def words_of(quoted: str) -> list[str]:
    """The single tokens of a quoted term ("video game", or a CJK bigram "投 资") as FTS
    literals: what FTS5 reads to evaluate it (a rare phrase of common words still reads
    both words' whole lists)."""
    return [quote(word) for word in quoted[1:-1].replace('""', '"').split()] or [quoted]


def term_costs(quoted: list[str], word_counts: dict[str, int]) -> dict[str, int]:
    """Rows FTS5 reads to evaluate each term: the sum of its words' matches."""
    return {term: sum(word_counts.get(w, 0) for w in words_of(term)) for term in quoted}


def within_budget(
    rows: dict[str, int], budget: int, costs: dict[str, int] | None = None, scan_budget: int = 0
) -> Bounded:
    """Rarest terms first, while the rows they match together (`rows`: a bound on the rows
    FTS5 scores) fit `budget`; when every term is more common than that, only the newest
    `budget` rows matching the rarest are scored. The other terms, cheapest first while the
    index entries FTS5 reads to count them (`costs`) fit `scan_budget`, still score every
    candidate (`rest`), so candidates rank by their exact BM25 over those terms too. With
    every term within budget nothing changes."""
    ordered = sorted(rows, key=lambda term: (rows[term], term))
    chosen = _prefix_within(ordered, rows, budget, at_least_one=True)
    newest = budget if sum(rows[term] for term in chosen) > budget else None
    if len(chosen) == len(ordered):
        chosen = list(rows)  # every term: the order (and so the expression) as written
    costs = rows if costs is None else costs
    others = sorted(ordered[len(chosen) :], key=lambda term: (costs[term], term))
    scanned = set(_prefix_within(others, costs, scan_budget))
    rest = [term for term in rows if term in scanned]  # as written
    dropped = len(ordered) - len(chosen) - len(rest)
    return Bounded(match_of(chosen), newest, dropped, match_of(rest))


def _prefix_within(
    ordered: list[str], sizes: dict[str, int], budget: int, *, at_least_one: bool = False
) -> list[str]:
    """The longest prefix of `ordered` whose sizes sum to at most `budget`."""
    taken: list[str] = []
    total = 0
    for term in ordered:
        if (taken or not at_least_one) and total + sizes[term] > budget:
            break
        taken.append(term)
        total += sizes[term]
    return taken


def build_query(text: str) -> TextQuery:
    query = TextQuery(raw=text)
    normalised = normalise(text).lower().replace("’", "'")
    latin_part = CJK_RUN.sub(" ", normalised)
    words, identifiers = _latin_terms(latin_part)
    query.phrases = _adjacent_pairs(latin_part)[:MAX_PHRASES]
    cjk_terms = [term for run in CJK_RUN.findall(normalised) for term in _cjk_terms(run)]
    query.identifiers = identifiers
    query.terms = _unique([*identifiers, *words, *(" ".join(term) for term in cjk_terms)])
    # A substring scan costs O(memories); only identifiers need it (a fragment such as
    # CONN_REF inside E_CONN_REFUSED); words are stemmed and CJK is matched by FTS already.
    query.like_patterns = [i for i in identifiers if len(i) >= 3]
    return query


def _latin_terms(text: str) -> tuple[list[str], list[str]]:
    tokens = [_POSSESSIVE.sub("", token.rstrip(".:")) for token in _LATIN_TOKEN.findall(text)]
    identifiers = [t for t in tokens if _IDENTIFIER_CHARS.search(t) and len(t) > 1]
    words = [t for t in tokens if _PLAIN_WORD.fullmatch(t) or ("'" in t or "’" in t)]
    # A compound (transgender-specific, pottery/painting, E_CONN_REFUSED) is also its words:
    # as a phrase alone it missed every memory that says them apart, where plain BM25 matches.
    words += [part for t in identifiers for part in _PLAIN_WORD.findall(t) if part != t]
    content = [w for w in words if w not in EN_STOP_WORDS and len(w) > 1]
    if not content and not identifiers:
        content = [w for w in words if len(w) > 1] or words  # "what is it": keep something
    return content, identifiers


def _adjacent_pairs(text: str) -> list[str]:
    """Pairs of content words next to each other in the query, as phrases."""
    tokens = [_POSSESSIVE.sub("", token.rstrip(".:")) for token in _LATIN_TOKEN.findall(text)]
    pairs = [f"{a} {b}" for a, b in pairwise(tokens) if _is_content(a) and _is_content(b)]
    return _unique(pairs)


def _is_content(token: str) -> bool:
    return bool(_PLAIN_WORD.fullmatch(token)) and token not in EN_STOP_WORDS and len(token) > 1


def _cjk_terms(run: str) -> list[str]:
    """Terms of a CJK run: short pieces as phrases, longer ones as overlapping bigrams
    (pure-hiragana bigrams next to kanji are grammar, not topic, and are dropped)."""
    pieces = [piece for piece in _CJK_STOP.split(run) if piece] or [run]
    terms: list[str] = []
    for piece in pieces:
        if _HIRAGANA_ONLY.fullmatch(piece) and _HAS_IDEOGRAPH.search(run):
            continue
        if len(piece) <= 2:
            terms.append(piece)
            continue
        bigrams = [piece[i : i + 2] for i in range(len(piece) - 1)]
        if _HAS_IDEOGRAPH.search(piece):
            bigrams = [b for b in bigrams if not _HIRAGANA_ONLY.fullmatch(b)]
        terms.extend(bigrams)
        if len(piece) <= 6:
            terms.append(piece)  # the exact longer phrase ranks its own match first
    return terms or [run]


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(item for item in items if item))
