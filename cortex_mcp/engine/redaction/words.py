"""Where a secret written in prose ends, and when the words after "password is" describe the
password instead of being it ("the password is stored hashed", "密码是多少", "パスワードは何")."""

from __future__ import annotations

import itertools

from cortex_mcp.engine.redaction.rules import lazy_pattern

# First words that describe a password rather than state it.
DESCRIBING = set(
    """a an the my your his her our their its it this that these those same different what which
    how why where when who whom whose there here not never no none nothing something anything
    everything too very so really pretty quite super kinda also only always usually probably
    maybe definitely stored hashed encrypted saved written kept wrong incorrect correct right
    invalid valid expired expiring weak strong long short longer shorter stronger weaker better
    worse required needed necessary optional mandatory case sensitive secure insecure safe
    unsafe easy hard difficult simple complicated complex unknown missing empty blank locked
    reset changed updated set in on at under inside somewhere taped printed from for of with
    without by about like one being going gonna supposed hidden private secret protected
    managed handled known forgotten lost compromised leaked stolen fine good bad ok okay great
    ready working broken due less more identical similar must should can cannot can't will
    would could may might has have had needs need expires requires is was be been asking
    requested generated sent shared both all any each every either neither much many few
    several another other used using use getting got even yet already now currently
    included attached below above following as available visible shown displayed given
    provided impossible terrible awful yours mine hers theirs ours whatever you i we they he
    she me him them us i'm you're it's that's what's case-sensitive still just and or but if
    then because since until unless though although while whether than actually literally
    basically simply again doesn't don't isn't wasn't won't didn't please thanks thank
    stuck annoying weird strange ridiculous crazy silly funny obvious guessable hackable
    something's somewhere else encrypted-at-rest changing expiring working""".split()
)
_UNITS = set(
    """characters chars character letters letter digits digit numbers number symbols words
    long days weeks months years minutes hours times""".split()
)
# Words that end a spoken password ("hunter two and my pin is ..." stops before "and").
_ENDS = set(
    """and but so or because since then which that if when for on at in to please ok okay btw
    lol haha thanks thank don't dont do it's its is was right now just also from with by
    until unless though while whereas except plus""".split()
)
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»", "「": "」", "『": "』", "`": "`"}
_TRAILING = ".,;:?)]}\"'”’」』"
_WORD = lazy_pattern(r"\S+")
_ASCII_RUN = lazy_pattern(r"[!-~]+")


def quoted(text: str) -> tuple[int, int] | None:
    """The inside of a leading quotation, when `text` starts with one."""
    closing = _QUOTES.get(text[:1])
    if closing is None:
        return None
    end = text.find(closing, 1)
    if end <= 1 or end > 120:
        return None
    return 1, end


def password_like(word: str) -> bool:
    """A single word that could be a password rather than a description of one."""
    bare = word.rstrip(_TRAILING)
    lowered = bare.lower()
    if not bare or lowered in DESCRIBING:
        return False
    plain = bare.isalpha() and bare.islower()
    return not (plain and lowered.endswith(("ed", "ing", "ly")))


def has_digit_or_symbol(text: str) -> bool:
    return any(c.isdigit() or not (c.isalnum() or c.isspace()) for c in text)


def spoken_value(text: str, max_words: int = 5) -> tuple[int, int] | None:
    """The password at the start of `text`, as people say it: a quoted string, or one to
    `max_words` words up to a clause's end ("hunter two", "correct horse battery staple")."""
    inside = quoted(text)
    if inside is not None:
        return inside
    words = list(_WORD.finditer(text))
    if not words or not password_like(words[0].group()):
        return None
    if len(words) > 1 and words[1].group().lower().rstrip(_TRAILING) in _UNITS:
        return None  # "8 characters long"
    end = _word_end(words[0].group(), words[0].start())
    for previous, word in itertools.pairwise(words[:max_words]):
        if previous.group()[-1] in ".,;!?)" or text[previous.end() : word.start()].count("\n"):
            break
        token = word.group()
        if token.lower().rstrip(_TRAILING) in _ENDS or not token[0].isalnum():
            break
        end = _word_end(token, word.start())
    return (0, end) if end > 0 else None


def _word_end(word: str, start: int) -> int:
    """End of a word with the sentence's punctuation left out (a password's own `!`
    or `&3` inside the word stays)."""
    stripped = word.rstrip(_TRAILING)
    if stripped.endswith("!") and stripped.rstrip("!").isalpha():
        stripped = stripped.rstrip("!")
    return start + len(stripped)


def ascii_run(text: str) -> tuple[int, int] | None:
    """The run of printable ASCII at the start of `text` ("abc123" in "abc123です")."""
    match = _ASCII_RUN.match(text)
    if match is None:
        return None
    end = _word_end(match.group(), 0)
    return (0, end) if end > 0 else None
