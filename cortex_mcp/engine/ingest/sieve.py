"""The fast channel of the Memory Sieve: high-signal sentences of the user's own words.

Only what the user wrote counts: fenced code, quoted lines and any paragraph that carries an
injected instruction ("ignore previous instructions") are external content and never become the
user's identity or preference, and neither does a pasted transcript (`dialogue.py`). A sentence
goes to core when it states a lasting fact about its speaker: a trigger of `signals.py` matches
and none of the vetoes of `noise.py` applies in the trigger's own clause (questions, greetings,
photo presentations, hedges; so "你好，我叫孙悦。" and "I love jazz, don't you?" stand) nor to
its object (pronoun-only objects, once time phrases are read as times) nor to the sentence as a
whole (a conditional, today's plans, instructions with nothing to remember), and no
trigger counts inside reported speech ("The email said: 'my name is ...'"). Every
sentence of a turn written as dialogue keeps its speaker's label ("Caroline: ...").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from cortex_mcp.engine.ingest import dialogue, noise, signals
from cortex_mcp.tokenize import CJK_CHAR

_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_TAGGED = re.compile(r"<(\w[\w-]*)[^>]*>.*?</\1>", re.DOTALL)
_QUOTED_LINE = re.compile(r"^\s*>.*$", re.MULTILINE)
# A quotation is someone else's words wherever its reporting clause stands ("'My name is X,' the
# email said"). Single quotes open after a space or a line's start and close before one, so an
# apostrophe inside (I'm, parents' house) is no quote.
_QUOTED_SPAN = re.compile(
    r"\"[^\"\n]{12,}\"|“[^”\n]{4,}”|「[^」\n]{4,}」|『[^』\n]{4,}』"
    r"|(?<![\w'])'(?=\w)(?:[^'\n]|(?<=\w)'(?=\w)){11,}(?<=\S)'(?!\w)"
    r"|(?<![\w‘’])‘(?=\w)(?:[^‘’\n]|(?<=\w)’(?=\w)){11,}(?<=\S)’(?!\w)"
)
# A title is a name, whatever words it holds: "《你好，李焕英》" opens no address to the listener.
_TITLE = re.compile(r"《[^》\n]{1,40}》")
_KANA = re.compile(r"[\u3040-\u30ff]")
_LETTER = re.compile(r"[^\W\d_]")
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[。！？!?\n])|(?<=[.;])\s+")

_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,30}\b(?:previous|prior|above|earlier|"
    r"all|system|your)\b[^.\n]{0,20}\b(?:instructions?|prompts?|rules|messages|context)\b"
    r"|\byou are now\b|\bnew instructions?:|\bsystem prompt\b|\bjailbreak\b"
    r"|忽略[^。\n]{0,10}(?:指令|指示|说明|提示|规则)|无视[^。\n]{0,10}(?:指令|指示|规则)"
    r"|(?:以前|前|上記|これまで)の(?:指示|命令|プロンプト)を(?:無視|忘れ)",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(
    r"\b(?:always|only|never) (?:reply|respond|answer|write|speak|talk)\b|\bfrom now on\b"
    r"|\bignore\b[^.\n]{0,30}\binstructions?\b"
    r"|(?:总是|永远|一律|只)用[^。\n]{0,10}(?:回复|回答)|以后都用"
    r"|(?:常に|必ず|いつも)[^。\n]{0,10}で(?:返答|回答|答え)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class HighSignal:
    category: str  # the stored category (identity, preference, relationship, decision, ...)
    kind: str  # the rule family that matched (the categories, plus plan/milestone/important)
    content: str  # the sentence, verbatim, after its speaker's label when the turn has one
    importance: float
    language: str
    corrected_term: str | None = None  # for "不是X而是Y" / "not X, but Y": X
    speaker: str | None = None  # the speaker label of a turn written as dialogue

    @property
    def layer(self) -> str:
        return "working" if self.kind in signals.WORKING_ONLY else "core"

    @property
    def metadata(self) -> dict[str, str]:
        spoken = {"speaker": self.speaker} if self.speaker else {}
        return {"signal": self.kind, **spoken}


def looks_injected(text: str) -> bool:
    return _INJECTION.search(text) is not None


def instruction_like(text: str) -> bool:
    return _INSTRUCTION.search(text) is not None or looks_injected(text)


def own_words(message: str) -> str:
    """The part of a user message the user wrote themselves: no fenced or tagged blocks, no
    quoted lines, no paragraph that carries an injected instruction."""
    text = _FENCE.sub("\n\n", message)
    text = _TAGGED.sub("\n\n", text)
    text = _QUOTED_LINE.sub("", text)
    kept = [p for p in _PARAGRAPH.split(text) if p.strip() and not looks_injected(p)]
    return "\n\n".join(kept)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def language_of(sentence: str) -> str:
    if _KANA.search(sentence):
        return "ja"
    return "zh" if CJK_CHAR.search(sentence) else "en"


@cache
def _compiled(language: str, kind: str) -> re.Pattern[str]:
    return re.compile("|".join(signals.PATTERNS[language][kind]), re.IGNORECASE | re.MULTILINE)


@cache
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source, re.IGNORECASE)


def _any(patterns: list[str], text: str) -> bool:
    return any(_pattern(p).search(text) for p in patterns)


@cache
def _explicit() -> list[tuple[re.Pattern[str], float]]:
    return [(re.compile(p, re.IGNORECASE), boost) for p, boost in signals.EXPLICIT]


def importance(kind: str, sentence: str) -> float:
    """The seed's rule: intrinsic score + explicit signal, capped at 1.0 (floored at 0.1)."""
    score = signals.INTRINSIC[kind]
    for pattern, boost in _explicit():
        if pattern.search(sentence):
            score += boost
    return round(min(1.0, max(0.1, score)), 3)


def _content_free(language: str, body: str) -> bool:
    """An instruction to remember that holds nothing to remember ("记住哦", "Remember this!")."""
    rest = _pattern(noise.FILLER[language]).sub(" ", body)
    return _LETTER.search(rest) is None


def _term(language: str, raw: str) -> str | None:
    """The corrected term of "X, not Y", when it is a value rather than an opinion or the
    conversation itself ("It's not big, but ...", "不是我不想去，而是...")."""
    term = raw.strip(" 　\"'“”「」")
    tail = re.split(r"[はがをにもの、]", term)[-1] if language == "ja" else term
    if not tail or _pattern(noise.NOT_A_TERM[language]).search(tail):
        return None
    return term


def _contrast(language: str, body: str) -> tuple[bool, str | None]:
    """(is a correction, the corrected term to supersede, if it names one)."""
    for source in noise.CONTRAST[language]:
        match = _pattern(source).search(body)
        if match:
            term = _term(language, match.group(1))
            return term is not None, term
    trailing = noise.TRAILING_CONTRAST.get(language)
    match = _pattern(trailing).search(body) if trailing else None
    term = _term(language, match.group(1)) if match else None
    return term is not None, term


def _states_something(language: str, text: str) -> bool:
    """After a correction marker: a value (a number, a name) or CJK words beyond the marker."""
    if language == "en":
        return re.search(r"\d|\b(?:my|our)\b|(?<=\w )(?!I\b)[A-Z][a-z]+", text) is not None
    return len(CJK_CHAR.findall(text)) >= 4


def _object_missing(language: str, kind: str, body: str, match: re.Match[str]) -> bool:
    """A trigger ending on its verb with nothing after it in its clause: "我决定了！", "I
    decided.", "我真的很喜欢，太感谢了" (Japanese puts the verb last, so it is not asked)."""
    empty = noise.EMPTY_OBJECT.get(language)
    if empty is None or not _pattern(noise.OBJECT_VERB).search(match.group()):
        return False
    return _pattern(empty).search(_rest_of_clause(language, body, match)) is not None


def _clause(language: str, body: str, at: int) -> str:
    """The clause of `body` that holds position `at` (`noise.CLAUSE`)."""
    start, end = 0, len(body)
    for cut in _pattern(noise.CLAUSE[language]).finditer(body):
        if cut.end() <= at:
            start = cut.end()
        elif cut.start() >= at:
            end = cut.start()
            break
    return body[start:end]


def _rest_of_clause(language: str, body: str, match: re.Match[str]) -> str:
    """What follows the trigger up to the end of its clause (a tag question is a clause of its
    own: "我喜欢下围棋，你呢？")."""
    rest = body[match.end() :]
    cut = _pattern(noise.CLAUSE[language]).search(rest)
    return rest if cut is None else rest[: cut.start()]


def _vetoed(language: str, kind: str, clause: str, match: re.Match[str]) -> bool:
    """What the trigger's own clause says against it: a question, a greeting or an address to
    the listener, a hedge, a feeling, someone else as the subject."""
    if _any(noise.NOISE[language], clause):
        return True
    feeling = noise.FEELING.get(language)
    if kind != "relationship" and feeling and _pattern(feeling).search(clause):
        return True
    if kind in {"relationship", "important"}:  # someone in their life; a flag's own subject
        return False
    if not _pattern(noise.OTHERS[language]).search(clause):
        return False
    if kind in noise.EVENT_KINDS:  # "It's a reminder of why I started ...": a back-story
        return True
    dummy, own = noise.DUMMY_SUBJECT.get(language), noise.OWN_SUBJECT.get(language)
    return not (
        dummy and own and _pattern(dummy).search(clause) and _pattern(own).search(match.group())
    )


def _of_the_moment(language: str, body: str) -> bool:
    """A line about now (a near time, a past episode by its day, a passing state), unless what
    it tells is a change that lasts by nature (a birth, a new job, a move, a pet adopted)."""
    return _pattern(noise.MOMENT[language]).search(body) is not None and (
        _pattern(noise.LIFE_EVENT[language]).search(body) is None
    )


def not_lasting(language: str, kind: str, body: str) -> str | None:
    """The form that says a sentence is not a lasting fact of the speaker's (`noise.NOT_LASTING`:
    hedged, temporary, wished, believed by someone else, a past plan, a check, a joke; or someone
    else as the only person in it), or None."""
    for family, forms in noise.NOT_LASTING.items():
        if kind not in noise.SPARED.get(family, ()) and _pattern(forms[language]).search(body):
            return family
    third = _pattern(noise.THIRD_PERSON[language]).search(body)
    if kind != "relationship" and third and not _pattern(noise.SPEAKER_WORD[language]).search(body):
        return "third person"
    return None


def _not_core(language: str, kind: str, body: str) -> bool:
    """Precision first: what keeps a standing trigger's line out of core (the line is working
    memory): a form of the whole sentence that says it is not lasting (`not_lasting`), a line of
    the moment, a colleague or a neighbour as its subject, a habit of late, a plan or a family
    event of someone else's (no first person in it)."""
    if kind in signals.WORKING_ONLY or kind in {"correction", "important"}:
        return False
    if not_lasting(language, kind, body):
        return True
    if _of_the_moment(language, body) or _pattern(noise.ACQUAINTANCE[language]).search(body):
        return True
    if kind == "preference" and _pattern(noise.LATELY[language]).search(body):
        return True
    first_person = noise.FIRST_PERSON.get(language)
    return (
        kind in {"plan", "relationship"}
        and first_person is not None
        and _pattern(first_person).search(body) is None
    )


def _counts(language: str, kind: str, body: str, match: re.Match[str]) -> bool:
    """Whether a trigger's match stands: the subject is the speaker (or, for a relationship,
    someone in their life), the moment is not today's, the object is not just a pronoun."""
    if _vetoed(language, kind, _clause(language, body, match.start()), match):
        return False
    if _not_core(language, kind, body):
        return False
    if kind in signals.TIME_BOUND and _pattern(noise.NEAR_TIME[language]).search(body):
        return False
    if kind in noise.PASSING_KINDS and _pattern(noise.PASSING[language]).search(body):
        return False
    if kind == "decision" and _pattern(noise.SOON[language]).search(body):
        return False
    if kind == "important":  # a flag ("这个很重要：…"): what matters is what else it says
        return _states_something(language, body[: match.start()] + " " + body[match.end() :])
    vague = noise.VAGUE_PLAN.get(language)
    if kind == "plan" and vague and _pattern(vague).search(body[match.start() :]):
        return False
    if kind == "plan" and (
        _pattern(noise.PAST[language]).search(body)
        or _pattern(noise.PLAN_PRONOUN[language]).search(body)
    ):
        return False
    after = _pattern(noise.TIME_PHRASE[language]).sub("", body[match.end() :])
    if kind != "relationship" and _pattern(noise.PRONOUN_OBJECT[language]).search(after):
        return False
    reaction = noise.REACTION_OBJECT.get(language)
    liking = _pattern(noise.LIKING_VERB).search(match.group())
    if liking and reaction and _pattern(reaction).search(after):
        return False
    if liking and _pattern(noise.LISTENER[language]).search(_rest_of_clause(language, body, match)):
        return False
    generic = noise.GENERIC_OBJECT.get(language)
    if liking and generic and _pattern(generic).search(after):
        return False
    if _object_missing(language, kind, body, match):
        return False
    if language == "ja" and _pattern(noise.PRONOUN_SUBJECT_JA).search(body):
        return False
    if kind == "correction":
        return _states_something(language, body[match.end() :])
    return True


def _reported_from(language: str, body: str) -> int:
    """Where someone else's words begin in `body` (its length when nothing is reported): a
    verb of saying whose subject is not the speaker, an instruction to say or act something
    out, make-believe or hearsay. In Japanese the reporting verb closes the quote, so the whole
    sentence is theirs."""
    starts = [
        match.start()
        for match in _pattern(noise.REPORTED[language]).finditer(body)
        if not _pattern(noise.SAID_BY_SPEAKER[language]).search(body[: match.start()])
    ]
    framed = _pattern(noise.FRAMED[language]).search(body)
    if framed is not None:
        starts.append(framed.start())
    if not starts:
        return len(body)
    return 0 if language == "ja" else min(starts)


def _own_again(language: str, body: str, reported: int) -> int:
    """Where the speaker's own words resume after reported ones: a clause of their own joined
    by "so" or "but" ("You mentioned the shelter, so I just joined a brigade")."""
    resumed = _pattern(noise.OWN_AGAIN[language]).search(body, reported)
    return len(body) if resumed is None else resumed.end()


def _set_aside(language: str, text: str) -> str:
    """`text` without its leading interjections and vocatives, and without a frame of feeling
    around a new first-person clause ("I'm so excited to tell you I ...")."""
    body = _pattern(noise.LEADING[language]).sub("", text) or text
    frame = noise.FEELING_FRAME.get(language)
    return (_pattern(frame).sub("", body) or body) if frame else body


def without_request(language: str, sentence: str) -> str:
    """The sentence without a request to note it in front ("Please remember: our staging
    database ..." -> "our staging database ..."): what is stored is the fact, not the chatter
    around it. A sentence that is nothing but the request stays whole."""
    rest = _pattern(noise.REQUEST_TO_NOTE[language]).sub("", sentence, count=1)
    return rest if rest.strip() else sentence


def classify(sentence: str) -> tuple[str, str, str | None] | None:
    """(rule family, language, corrected term) of a sentence that states a lasting fact about
    its speaker, or None."""
    language = language_of(sentence)
    text = _QUOTED_SPAN.sub('""', _TITLE.sub("《》", sentence)).replace("’", "'").strip()
    body = _set_aside(language, text)
    conditional = _pattern(noise.CONDITIONAL[language]).search(body) is not None
    if conditional or _content_free(language, body):
        return None
    near = _pattern(noise.NEAR_TIME[language]).search(body) is not None
    reported = _reported_from(language, body)
    resumed = _own_again(language, body, reported)
    corrects, term = _contrast(language, body[:reported])
    quiet = not _any(noise.NOISE[language], body)  # a correction is judged whole
    if corrects and quiet and not near and not _pattern(noise.OTHERS[language]).search(body):
        return "correction", language, term
    revising = _pattern(noise.REVISION[language]).search(text) is not None
    for kind in signals.CATEGORY_ORDER:
        for match in _compiled(language, kind).finditer(body):
            quoted = reported <= match.start() < resumed
            if quoted or not _counts(language, kind, body, match):
                continue
            if revising and quiet and kind not in {"todo", "important", "correction"}:
                return "correction", language, None
            return kind, language, None
    return None


def detect_high_signals(user_message: str) -> list[HighSignal]:
    """High-signal sentences in what the user wrote, one per sentence, deduplicated; each
    keeps the speaker label of its turn or line. A pasted transcript yields none."""
    own = own_words(user_message)
    parts = dialogue.utterances(own)
    if dialogue.is_transcript(own, parts):
        return []
    found: dict[str, HighSignal] = {}
    for part in parts:
        if part.prefix and _reported_from(language_of(part.prefix), part.prefix) < len(part.prefix):
            continue  # "Repeat after me:", "Roleplay:", "翻译一下：" open someone else's words
        for sentence in sentences(part.text):
            hit = classify(sentence)
            if hit is None:
                continue
            kind, language, term = hit
            content = part.prefix + without_request(language, sentence)
            key = content.casefold()
            if key in found:
                continue
            found[key] = HighSignal(
                category=signals.STORED_AS.get(kind, kind),
                kind=kind,
                content=content,
                importance=importance(kind, sentence),
                language=language,
                corrected_term=term,
                speaker=part.speaker,
            )
    return list(found.values())
