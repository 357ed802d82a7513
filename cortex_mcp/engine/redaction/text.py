"""Text as the detector reads it: zero-width characters removed, full-width ASCII and unusual
spaces folded to plain ASCII. Each position of the folded text maps back to the original, so a
secret found in the folded text is cut from the original and everything else stays as given."""

from __future__ import annotations

from dataclasses import dataclass

# U+200B..U+200D zero-width space/joiners, U+2060..U+2064 word joiner and invisible operators,
# U+FEFF byte order mark, U+00AD soft hyphen, U+180E Mongolian vowel separator.
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e")

_FOLD = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}  # ！..～ -> !..~
_FOLD.update(dict.fromkeys([0x3000, 0x00A0, 0x202F, 0x205F, *range(0x2000, 0x200B)], ord(" ")))


@dataclass(frozen=True)
class Folded:
    """The folded text and, when characters were removed, where each of its characters was."""

    text: str
    origin: list[int] | None = None  # None: same length, position i is position i

    def span_in_original(self, start: int, end: int) -> tuple[int, int]:
        if self.origin is None:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


def fold(text: str) -> Folded:
    if text.isascii():  # every character folded or removed lies outside ASCII
        return Folded(text)
    folded = text.translate(_FOLD)
    if not _INVISIBLE.intersection(folded):
        return Folded(folded)
    kept = [(index, char) for index, char in enumerate(folded) if char not in _INVISIBLE]
    return Folded("".join(char for _, char in kept), [index for index, _ in kept])
