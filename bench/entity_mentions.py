"""How well the linking rules find names, aliases and alias-only phrases, and what a call costs.

    nice python bench/entity_mentions.py [--show-errors] [--repeat N]

Reads the labelled sets in tests/fixtures/entities/: per language (en, zh, ja) a dev part (read
while writing the rules), a held-out part (written first, before any rule, its lines never
printed here: `--show-errors` shows the dev part's errors only), and for English and Chinese a
natural part: lines drawn at random (fixed seed) from the LoCoMo and MemoryBank dev sets after
the rules were written and labelled once, so its mix of lines is the natural one (mostly no
names) rather than one chosen to test the rules. There is no natural Japanese source. Each line is
`{"text", "speaker"?, "mentions": [{"name", "kind", "aliases"?}], "references": [phrase]}`; the
mention given as `speaker` is not scored (the caller supplied it).

Prints per language and part: precision and recall of mentions (names compared by
`normalize_name`), the share of found names whose kind is right, precision and recall of
references and of (name, alias) pairs; then the median cost of one `find_mentions` call in µs
on a typical 30-word English turn, a Chinese and a Japanese turn, over all the lines, and on
one long text of about 100 KB (a Markdown file imported whole), with `str.split` of the same
texts as a baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex_mcp.engine.entities.mentions import find_mentions
from cortex_mcp.tokenize import normalize_name

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "entities"
LANGUAGES = ("en", "zh", "ja")
PARTS = ("dev", "heldout", "natural")
TYPICAL_TURNS = {
    "en": "Hey Maya! My sister Anna and I finally drove to Boston last weekend to see her "
    "old roommate, and we stopped at a tiny bakery on Baker Street that you would love.",
    "zh": "你好，刘琳！上周末我和我的表弟张伟一起去了杭州，还给妈妈带了一张明信片，她很喜欢。",
    "ja": "おはよう、健太！昨日は上司の田中さんと大阪へ出張して、部長さんにお土産を買いました。",
}


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def count(self, expected: set[Any], found: set[Any]) -> None:
        self.tp += len(expected & found)
        self.fp += len(found - expected)
        self.fn += len(expected - found)

    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


@dataclass
class Score:
    lines: int = 0
    mentions: Tally = field(default_factory=Tally)
    references: Tally = field(default_factory=Tally)
    aliases: Tally = field(default_factory=Tally)
    kinds_right: int = 0
    errors: list[str] = field(default_factory=list)


def load(language: str, part: str) -> list[dict[str, Any]]:
    path = FIXTURES / f"{language}_{part}.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def score(lines: list[dict[str, Any]]) -> Score:
    result = Score()
    for line in lines:
        result.lines += 1
        found = find_mentions(line["text"], speaker=line.get("speaker"))
        got = {normalize_name(m.name): m for m in found.mentions if m.rule != "speaker"}
        want = {normalize_name(m["name"]): m for m in line["mentions"]}
        result.mentions.count(set(want), set(got))
        result.kinds_right += sum(1 for k in set(want) & set(got) if got[k].kind == want[k]["kind"])
        got_refs = {normalize_name(r.phrase) for r in found.references}
        want_refs = {normalize_name(r) for r in line["references"]}
        result.references.count(want_refs, got_refs)
        got_aliases = {(k, normalize_name(a)) for k, m in got.items() for a in m.aliases}
        want_aliases = {
            (k, normalize_name(a)) for k, m in want.items() for a in m.get("aliases", [])
        }
        result.aliases.count(want_aliases, got_aliases)
        if set(want) != set(got) or want_refs != got_refs or want_aliases != got_aliases:
            result.errors.append(
                f"  {line['text']!r}\n    want {sorted(want)} refs {sorted(want_refs)} "
                f"aliases {sorted(want_aliases)}\n    got  "
                f"{[(m.name, m.kind.value, m.role.value, m.rule) for m in got.values()]} "
                f"refs {sorted(got_refs)} aliases {sorted(got_aliases)}"
            )
    return result


def median_us(call: Callable[[str], object], texts: list[str], repeat: int) -> float:
    timings = []
    for _ in range(repeat):
        for text in texts:
            began = time.perf_counter_ns()
            call(text)
            timings.append(time.perf_counter_ns() - began)
    return statistics.median(timings) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show-errors", action="store_true", help="print the dev part's errors")
    parser.add_argument("--repeat", type=int, default=200, help="timing rounds per text")
    args = parser.parse_args()

    header = "| lang | part | lines | mention P | mention R | kind right | reference P | reference R | alias P | alias R |"
    print(header)
    print("| --- " * 10 + "|")
    all_texts: list[str] = []
    for language in LANGUAGES:
        for part in PARTS:
            if not (FIXTURES / f"{language}_{part}.jsonl").exists():
                continue
            lines = load(language, part)
            all_texts += [line["text"] for line in lines]
            s = score(lines)
            kind_share = s.kinds_right / s.mentions.tp if s.mentions.tp else 1.0
            print(
                f"| {language} | {part} | {s.lines} | {s.mentions.precision():.2f} | "
                f"{s.mentions.recall():.2f} | {kind_share:.2f} | {s.references.precision():.2f} | "
                f"{s.references.recall():.2f} | {s.aliases.precision():.2f} | {s.aliases.recall():.2f} |"
            )
            if args.show_errors and part == "dev" and s.errors:
                print("\n".join(s.errors))
    print()
    print("| text | find_mentions µs (median) | str.split µs (baseline) |")
    print("| --- | --- | --- |")
    for language, text in TYPICAL_TURNS.items():
        find_mentions(text)  # warm the compiled patterns
        print(
            f"| typical {language} turn ({len(text.split()) if language == 'en' else len(text)} "
            f"{'words' if language == 'en' else 'chars'}) | {median_us(find_mentions, [text], args.repeat):.1f} | "
            f"{median_us(str.split, [text], args.repeat):.2f} |"
        )
    long_text = "\n".join(all_texts * 60)  # a long Markdown file imported whole
    long_rounds = 3 if args.repeat >= 50 else 1
    print(
        f"| one {len(long_text) // 1000} KB text (ms, not µs) | "
        f"{median_us(find_mentions, [long_text], long_rounds) / 1000:.0f} | "
        f"{median_us(str.split, [long_text], long_rounds) / 1000:.1f} |"
    )
    print(
        f"| all {len(all_texts)} labelled lines | {median_us(find_mentions, all_texts, max(1, args.repeat // 10)):.1f} | "
        f"{median_us(str.split, all_texts, max(1, args.repeat // 10)):.2f} |"
    )


if __name__ == "__main__":
    main()
