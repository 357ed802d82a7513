"""Other forms of an English given name: the nicknames people go by ("Bea" for Beatrice, "Liz"
for Elizabeth, from the `nicknames` package's hand-curated table), the diminutives made from a
name itself ("Kenny" for Ken, "Mikey" for Mike) and a name cut short ("Mel" for Melanie).
Linking asks for them only when a person's name is neither an entity's name nor an alias, and
links it only when exactly one person it knows goes by one of them (resolve.py); a question's
names are read the same way (search/stages/entity.py)."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from cortex_mcp.tokenize import normalize_name

if TYPE_CHECKING:
    from nicknames import NickNamer

# A diminutive is the name with its last consonant doubled and -y or -ie ("Ken" -> "Kenny",
# "Ann" -> "Annie"), or a name ending in a double consonant with -y or -ie ("Jess" -> "Jessie"), or the name with -y, -ie or -ey for its final e ("Mike" -> "Mikey", "Rose"
# -> "Rosie"); the name it is made from has three letters at least ("Amy" is no "Am").
_DOUBLED = re.compile(r"^(?P<stem>[a-z]{2,}(?P<c>[b-df-hj-np-tv-z]))(?P=c)(?:y|ie)$")
_FOR_E = re.compile(r"^(?P<stem>[a-z]{2,}[b-df-hj-np-tv-z])(?:y|ie|ey)$")
_LATIN_NAME = re.compile(r"^[A-Za-z][a-z]+$")
SHORTEST = 3  # a name cut short ("Mel", "Sam") keeps three letters at least
CUT = 2  # and drops two at least ("Mel" for Melanie, not "Melani")


@functools.cache
def _table() -> NickNamer:
    # imported here, not at start-up: the package alone costs ~70 ms to import (its version
    # lookup reads package metadata), and its table ~60 ms more to read
    from nicknames import NickNamer

    return NickNamer()  # read once, by `warm` or when a name first needs it


def warm() -> None:
    """Read the table now (a server does, once its client is connected), so no recall waits."""
    _table()


def plain_name(name: str) -> str:
    """`name` without its possessive's 's ("Bea's" -> "Bea")."""
    word = name.strip()
    return word[:-2] if word.endswith(("'s", "’s")) else word


def latin_word(name: str) -> str | None:
    """`name` as one lower-case Latin word (a possessive's 's dropped), or None."""
    word = plain_name(name)
    return word.lower() if _LATIN_NAME.match(word) else None


@functools.lru_cache(maxsize=4096)  # a batch or a chat says the same few names again and again
def other_forms(name: str) -> tuple[str, ...]:
    """Keys (as `normalize_name` makes them) of other forms of `name` when it is one capitalised
    Latin word: the forms the table pairs with it directly (a nickname's full names and a full
    name's nicknames, never a nickname's other nicknames: "Liam" is no "Bill"), the name its
    diminutive is made from; () for anything else. A name cut short ("Mel" for Melanie) is
    found among the names already known (`is_cut_from`); a longer name is never taken for the
    full form of a short one known ("Danielle" is no "Dan")."""
    word = latin_word(name)
    if word is None:
        return ()
    table = _table()
    paired = table.canonicals_of(word) | table.nicknames_of(word)
    forms = sorted(form for form in paired if _sounds_alike(word, form))
    forms += _diminutive_stems(word)
    keys = (normalize_name(form) for form in forms if form != word)
    return tuple(dict.fromkeys(key for key in keys if key))


def _sounds_alike(a: str, b: str) -> bool:
    """The shorter form starts the longer one's way (Kate, Alex), or is the middle (Liz for
    Elizabeth, Lexi for Alexandra) or the end (Beth, Tina) of a name three letters longer at
    least: not Bill for William, nor the table's Fred for Bill, Nancy for Ann or Anna for
    Hannah, names people today rarely mean by each other; nor a name and the same name with
    an a or an e more (Louise and Louis, Edwina and Edwin, Anne and Ann: two names, often two
    people, which the table pairs too; Peter and Pete, Joe and Joey are one)."""
    short, long = sorted((a, b), key=len)
    if len(long) == len(short) + 1 and long.startswith(short) and long[-1] in "ae":
        return False  # Louise, Edwina, Anne: names of their own (Pete, Steve, Joey are not)
    if short[0] == long[0]:
        return True
    if len(long) - len(short) < 3:
        return False
    return long[1:].startswith(short[:3]) or long.endswith(short)


def is_cut_from(short: str, key: str) -> bool:
    """`short` (a lower-case word) is `key` (a one-word name's key) cut short."""
    return len(short) >= SHORTEST and len(key) >= len(short) + CUT and key.startswith(short)


def _diminutive_stems(word: str) -> list[str]:
    doubled = _DOUBLED.match(word)
    if doubled is not None:  # Kenny: Ken (or Kenn); Jessie: Jess (or Jes)
        stem = doubled.group("stem")
        return [stem, stem + doubled.group("c")]
    for_e = _FOR_E.match(word)
    return [for_e.group("stem") + "e"] if for_e is not None else []
