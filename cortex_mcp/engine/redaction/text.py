"""Text as the detector reads it: each character in its NFKC form (full-width letters, ligatures
and unusual spaces become plain ASCII), zero-width characters removed, Greek and Cyrillic
look-alikes inside a Latin word read as the Latin letters they imitate ("рassword" with a
Cyrillic р, "passwοrd" with a Greek ο), and letters spelt out one by one read as one word
("p a s s w o r d", "P.A.S.S.W.O.R.D"). Each position of the folded text maps back to the
original, so a secret found in the folded text is cut from the original and everything else
stays as given."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from cortex_mcp.engine.redaction.rules import lazy_pattern

# U+200B..U+200D zero-width space/joiners, U+2060..U+2064 word joiner and invisible operators,
# U+FEFF byte order mark, U+00AD soft hyphen, U+180E Mongolian vowel separator.
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e")
_SPACES = frozenset("\u3000\u00a0\u202f\u205f" + "".join(map(chr, range(0x2000, 0x200B))))

# Greek and Cyrillic letters drawn like Latin ones (Unicode's confusables, the unambiguous ones).
_LOOK_ALIKES = dict(
    zip(
        "αβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧаеорсухіѕјԁԝкмтвнАВЕКМНОРСТХІЅЈ",
        "abeiknoptuxABEZHIKMNOPTYXaeopcyxisjdwkmtbhABEKMHOPCTXISJ",
        strict=True,
    )
)
_TO_LATIN = str.maketrans(_LOOK_ALIKES)
_ANY_LOOK_ALIKE = lazy_pattern(f"[{''.join(_LOOK_ALIKES)}]")
_SPECIAL = lazy_pattern(f"[{''.join(sorted(_INVISIBLE | _SPACES))}]")
_WORD = lazy_pattern(r"[^\W\d_]+")
# Four or more single letters each followed by one space, dot, underscore or hyphen: "p a s s".
_SPELT = lazy_pattern(r"(?<![^\W\d_])(?:[A-Za-z][ ._\-])+[A-Za-z](?![^\W\d_])")
_SPELT_HINT = lazy_pattern(r"[A-Za-z][ ._\-][A-Za-z][ ._\-][A-Za-z][ ._\-][A-Za-z]")


@dataclass(frozen=True)
class Folded:
    """The folded text and, when its length changed, where each of its characters was."""

    text: str
    origin: list[int] | None = None  # None: same length, position i is position i

    def span_in_original(self, start: int, end: int) -> tuple[int, int]:
        if self.origin is None:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


@lru_cache(maxsize=4096)
def _nfkc(char: str) -> str:
    if char in _INVISIBLE:
        return ""
    if char in _SPACES:
        return " "
    return unicodedata.normalize("NFKC", char)


def fold(text: str) -> Folded:
    folded = Folded(text) if text.isascii() else _normalised(text)
    if _SPELT_HINT.search(folded.text) is None:
        return folded
    return _joined_spelt_letters(folded)


def _normalised(text: str) -> Folded:
    if unicodedata.is_normalized("NFKC", text) and _SPECIAL.search(text) is None:
        return Folded(_latin_look_alikes(text))
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char.isascii():
            chars.append(char)
            origin.append(index)
            continue
        for out in _nfkc(char):
            chars.append(out)
            origin.append(index)
    joined = _latin_look_alikes("".join(chars))
    if len(joined) == len(text):
        return Folded(joined)
    return Folded(joined, origin)


def _latin_look_alikes(text: str) -> str:
    """Greek and Cyrillic look-alikes read as Latin inside a word that holds Latin letters
    (a Greek or Russian word alone is left as it is)."""
    if _ANY_LOOK_ALIKE.search(text) is None:
        return text
    return _WORD.sub(_latin_word, text)


def _latin_word(match: re.Match[str]) -> str:
    word = match.group()
    has_latin = any("a" <= c.lower() <= "z" for c in word)
    if not has_latin or not any(c in _LOOK_ALIKES for c in word):
        return word
    return word.translate(_TO_LATIN)


def _joined_spelt_letters(base: Folded) -> Folded:
    """`base` with the separators between letters spelt out one by one removed."""
    origin = base.origin or list(range(len(base.text)))
    drop: set[int] = set()
    for match in _SPELT.finditer(base.text):
        letters = match.end() - match.start()
        if letters >= 7:  # four letters or more: "a b c" stays, "p a s s" joins
            drop.update(range(match.start() + 1, match.end(), 2))
    if not drop:
        return base
    kept = [i for i in range(len(base.text)) if i not in drop]
    return Folded("".join(base.text[i] for i in kept), [origin[i] for i in kept])
