"""The offline libraries that could find Chinese and Japanese names, measured against the rules.

    pip install jieba janome   # not dependencies of cortex-mcp: only this comparison needs them
    nice python bench/entity_libraries.py

jieba (Chinese segmentation with part-of-speech tags; nr = person, ns = place) and janome (a
pure-Python Japanese morphological analyser; 固有名詞 人名/地域/組織) bundle their dictionaries, so
they work offline. For each labelled part in tests/fixtures/entities (dev, held-out, natural) it
prints the precision and recall of names (NFKC and case folded) and the median cost per line of
the library and of `find_mentions`, and the library's start-up cost. The libraries find names
only: kinship aliases, alias-only references, pets and roles would still need the rules.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import time
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cortex_mcp.engine.entities.mentions import find_mentions

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "entities"


def load(language: str, part: str) -> list[dict[str, Any]]:
    path = FIXTURES / f"{language}_{part}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def key(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


def precision_recall(lines: list[dict[str, Any]], names: Callable[[str], Iterable[str]]) -> str:
    tp = fp = fn = 0
    for line in lines:
        got = {key(n) for n in names(line["text"])}
        want = {key(m["name"]) for m in line["mentions"]}
        tp, fp, fn = tp + len(got & want), fp + len(got - want), fn + len(want - got)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return f"{precision:.2f} | {recall:.2f}"


def median_us(names: Callable[[str], object], texts: list[str], repeat: int = 5) -> float:
    timings = []
    for _ in range(repeat):
        for text in texts:
            began = time.perf_counter_ns()
            names(text)
            timings.append(time.perf_counter_ns() - began)
    return statistics.median(timings) / 1000


def rules(text: str) -> list[str]:
    return [m.name for m in find_mentions(text).mentions]


def compare(language: str, library: str, names: Callable[[str], Iterable[str]]) -> None:
    for part in ("dev", "heldout", "natural"):
        lines = load(language, part)
        if not lines:
            continue
        texts = [line["text"] for line in lines]
        print(
            f"| {language} {part} | {library} | {precision_recall(lines, names)} | "
            f"{median_us(lambda t: list(names(t)), texts):.0f} |"
        )
        print(
            f"| {language} {part} | rules | {precision_recall(lines, rules)} | "
            f"{median_us(rules, texts):.0f} |"
        )


def main() -> None:
    print("| set | finder | name P | name R | µs per line (median) |")
    print("| --- | --- | --- | --- | --- |")
    if importlib.util.find_spec("jieba"):
        began = time.perf_counter()
        import jieba
        import jieba.posseg as posseg

        jieba.setLogLevel(60)
        list(posseg.cut("我的表弟张伟在深圳工作"))  # loads the dictionary
        started = time.perf_counter() - began

        def jieba_names(text: str) -> list[str]:
            return [w for w, tag in posseg.cut(text) if tag in ("nr", "nrfg", "nrt", "ns")]

        compare("zh", f"jieba (start-up {started * 1000:.0f} ms)", jieba_names)
    else:
        print("| zh | jieba not installed | | | |")
    if importlib.util.find_spec("janome"):
        began = time.perf_counter()
        from janome.tokenizer import Tokenizer

        tokenizer = Tokenizer()
        started = time.perf_counter() - began

        def janome_names(text: str) -> list[str]:
            found = []
            for token in tokenizer.tokenize(text):
                tags = str(token.part_of_speech).split(",")
                if tags[1] == "固有名詞" and tags[2] in ("人名", "地域", "組織"):
                    found.append(str(token.surface))
            return found

        compare("ja", f"janome (start-up {started * 1000:.0f} ms)", janome_names)
    else:
        print("| ja | janome not installed | | | |")


if __name__ == "__main__":
    main()
