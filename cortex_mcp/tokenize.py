"""Text normalisation shared by indexing (store) and query building (search). A leaf.

FTS5's unicode61 tokenizer keeps a whole run of CJK characters as one token, so a two-character
query such as 投资 could never match inside 我喜欢投资股票. We index CJK text one character per
token instead (spaces between the characters) and query CJK terms as phrases of characters: a
phrase matches adjacent tokens, so terms of any length match exactly, and Latin text keeps
porter stemming.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from typing import TYPE_CHECKING

_CJK_CLASS = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uff66-\uff9f"  # half-width katakana
)


# The patterns over these classes are compiled when first used: a class of ~40,000 characters
# costs `re` a few ms to compile, which every start paid (`cortex-mcp list` uses none of them).
@functools.cache
def _cjk_char() -> re.Pattern[str]:
    return re.compile(f"[{_CJK_CLASS}]")


@functools.cache
def _cjk_run() -> re.Pattern[str]:
    return re.compile(f"[{_CJK_CLASS}]+")


_PATTERNS = {"CJK_CHAR": _cjk_char, "CJK_RUN": _cjk_run}
if TYPE_CHECKING:
    CJK_CHAR: re.Pattern[str]  # one CJK character
    CJK_RUN: re.Pattern[str]  # a run of them


def __getattr__(name: str) -> re.Pattern[str]:
    """CJK_CHAR and CJK_RUN, compiled when first asked for."""
    if name in _PATTERNS:
        return _PATTERNS[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_WHITESPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, collapsed whitespace, trimmed: the form keys and indexes compare text in.

    Never the form content is stored in: a memory comes back exactly as it was given."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip()


# Japanese honorifics that follow a name and are no part of it (longest first).
_HONORIFICS = ("ちゃん", "さま", "さん", "くん", "様", "君", "氏")
_POSSESSIVE = re.compile(r"['’]s$")
# Words whose ending only looks like an honorific: 彼氏 is "boyfriend", not 彼 + 氏.
_WORDS_ENDING_LIKE_HONORIFICS = frozenset({"彼氏", "たくさん", "みなさん", "皆さん", "赤ちゃん"})


_PICTOGRAPH = re.compile("[\U0001f300-\U0001faff]")


def _is_edge_punctuation(char: str) -> bool:
    return unicodedata.category(char)[0] in "PSZ"


@functools.lru_cache(maxsize=65_536)  # a pure function of short texts, asked ~5 times a memory
def normalize_name(text: str) -> str:
    """The key names and aliases are compared by: NFKC (width), casefold, whitespace collapsed,
    surrounding punctuation stripped, a trailing English possessive ('s) and a Japanese honorific
    dropped. "Anna's" -> "anna", "田中さん" -> "田中", "ＡＮＮＡ" -> "anna"."""
    key = normalise(text).casefold()
    start, end = 0, len(key)
    while start < end and _is_edge_punctuation(key[start]):
        start += 1
    while end > start and _is_edge_punctuation(key[end - 1]):
        end -= 1
    if start == end:  # a display name of pictographs alone ("🌸") is its pictographs
        return key.strip() if _PICTOGRAPH.search(key) else ""
    key = _POSSESSIVE.sub("", key[start:end])
    if key in _WORDS_ENDING_LIKE_HONORIFICS:
        return key
    for honorific in _HONORIFICS:
        if key.endswith(honorific) and len(key) > len(honorific):
            key = key[: -len(honorific)]
            break
    return key.rstrip()


def content_hash(text: str) -> str:
    """Identity of a memory's content: case, width and spacing differences do not count."""
    return _hash_of_normalised(normalise(text))


def _hash_of_normalised(normalised: str) -> str:
    key = normalised.casefold().rstrip(" .!。！")
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def query_key(text: str) -> str:
    """What the access log keeps of a query: a hash of its normalised form, never the text.
    Equal queries (up to case, width and spacing) share a key, so diversity can be counted."""
    return hashlib.sha256(normalise(text).casefold().encode("utf-8")).hexdigest()[:32]


def index_text(text: str) -> str:
    """What goes into the FTS index: CJK characters split into single-character tokens."""
    return _index_of_normalised(normalise(text))


def _index_of_normalised(normalised: str) -> str:
    if normalised.isascii():  # no CJK character to split
        return normalised
    return _cjk_run().sub(lambda m: " " + " ".join(m.group(0)) + " ", normalised)


def hash_and_index_text(text: str) -> tuple[str, str]:
    """`content_hash(text)` and `index_text(text)`, normalising the text once (a bulk import
    asks both of every memory)."""
    normalised = normalise(text)
    return _hash_of_normalised(normalised), _index_of_normalised(normalised)


def has_cjk(text: str) -> bool:
    return _cjk_char().search(text) is not None


def count_tokens(text: str) -> int:
    """A tokenizer-free estimate that is honest for CJK: about one token per CJK character
    (cl100k/o200k give 1-1.5), and about four characters per token for other text."""
    if text.isascii():  # no CJK to count (most memories' lines; 2.5x faster)
        return (len(text) + 3) // 4
    cjk = len(_cjk_char().findall(text))
    rest = len(text) - cjk
    return cjk + (rest + 3) // 4


# "Caroline: ..." at the start of a line of dialogue, optionally after a raw-turn tag ("[...] ")
# and a role label ("user: "): a capitalised name of one to three words.
# In Chinese and Japanese dialogue: a name of two to five Han or kana characters and a
# full-width colon ("小李：", "佐藤さん："), but not a label such as 注意：, 提醒：, メモ：.
@functools.cache
def _speaker() -> re.Pattern[str]:
    return re.compile(
        r"^(?:\[[^\]\n]{1,16}\]\s*)?(?:user:\s*)?"
        r"(?:([A-Z][\w.'’-]{0,30}(?: [A-Z][\w.'’-]{0,30}){0,2}):\s"
        r"|(?!(?:注意|提醒|备注|備註|问题|問題|答案|总结|總結|结论|結論|更新|回答|质问|質問|メモ|まとめ|"
        r"ノート|追記|重要|注)：)([\u4e00-\u9fff\u3040-\u30ff]{2,5})：\s*)"
    )


_USER_ROLES = {"", "user", "human"}  # a role, not a name: the text may still name the speaker


def speaker_of(text: str, metadata: dict[str, object] | None = None) -> str | None:
    """Who said it, case-folded: metadata `speaker` when it is a name, else a leading "Name: ";
    None when neither says (the user's own words)."""
    named = (metadata or {}).get("speaker")
    if isinstance(named, str) and named.strip().casefold() not in _USER_ROLES:
        return named.strip().casefold() or None
    match = _speaker().match(text)
    if match is None:
        return None
    name = match.group(1) or re.sub(r"(?:さん|くん|ちゃん)$", "", match.group(2))
    return name.casefold()


def without_speaker(text: str) -> str:
    match = _speaker().match(text)
    return text[match.end() :] if match else text


_ANY_LABEL = re.compile(r"^[^\s:：]{1,40}[:：]\s*")  # "Tom: ", "kevin.zhou: ", "小陈："
_ENDS_SENTENCE = re.compile(r"[.!?。！？]")


def one_question(text: str) -> bool:
    """Whether a text (a speaker's label aside) is one question and nothing else: "旺财最近还好吗？",
    "How long is she staying?"; not "Lisbon, wow! What is she doing there?"."""
    said = _ANY_LABEL.sub("", text.strip(), count=1).rstrip()
    return said.endswith(("?", "？")) and _ENDS_SENTENCE.search(said.rstrip("?？")) is None


# The speaker speaking of themselves: "I", "my", "we", "our"; 我; 私, 僕, 俺.
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|us|our|ours"
    r"|ourselves)\b|我|私|僕|俺|わたし|ぼく|おれ",
    re.IGNORECASE,
)
_KANA = re.compile(r"[\u3040-\u30ff]")


def about_the_listener(text: str) -> bool:
    """Whether a line of dialogue (its speaker's label aside) asks the listener something and
    says nothing of its speaker: "Wow, that agency looks great! What made you pick it?", "你去哪儿
    玩了？"; not "I just finished this one. What do you think?". Japanese leaves the speaker
    unsaid more often than not: a Japanese line is never taken for one."""
    if "?" not in text and "？" not in text:  # asks nothing: the cheap test first
        return False
    said = _ANY_LABEL.sub("", text.strip(), count=1).replace("’", "'")
    return _KANA.search(said) is None and _FIRST_PERSON.search(said) is None


# Single-valued slots (engine/beliefs/slots.py, search/slot_questions.py): whose fact it is and
# what value, compared as these keys. "I", "we", "my", 我, 私 ... are the speaker.
SELF_HOLDER = "I"
# whose belief an opinion is when it names no one else (engine/beliefs/evidence.py)
BELIEF_USER = "user"
_SELF_WORDS = {
    "i",
    "we",
    "me",
    "my",
    "our",
    "我",
    "我们",
    "私",
    "僕",
    "俺",
    "わたし",
    "ぼく",
    "おれ",
    "自分",
}
_HOLDER_ARTICLE = re.compile(r"^(?:the|our) ")


def slot_holder_key(holder: str) -> str:
    """The key of a fact's holder: width and case folded, "the"/"our" and 我的's 的 dropped,
    every word for the speaker one key."""
    folded = unicodedata.normalize("NFKC", holder).casefold().strip()
    folded = _HOLDER_ARTICLE.sub("", folded)
    folded = re.sub(r"^我的(?=[\u4e00-\u9fff])", "我", folded)
    return SELF_HOLDER.casefold() if folded in _SELF_WORDS else folded


def slot_value_key(value: str) -> str:
    """A slot's value as compared: width and case folded, punctuation and spacing ignored."""
    folded = unicodedata.normalize("NFKC", value).casefold()
    return re.sub(r"[\s\W_]+", " ", folded).strip()
