"""Wallet secrets told by their checksums, so any sentence around them will do: Bitcoin private
keys in Wallet Import Format and extended private keys (xprv, tprv, yprv, zprv), which are
Base58Check (a double SHA-256 checksum and a version byte that says "private key"), and BIP39
recovery phrases (12 to 24 words of the English, Chinese or Japanese wordlist whose last word
carries a checksum of the others: an ordinary sentence of list words passes it only by chance,
1 time in 16 for 12 words, 1 in 256 for 24)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from functools import cache

from mnemonic import Mnemonic

from cortex_mcp.engine.redaction.rules import Rule, lazy_pattern

_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BASE58_VALUES = {char: index for index, char in enumerate(_BASE58)}
# Version bytes of a WIF key (mainnet, testnet) and of extended private keys.
_WIF_VERSIONS = {0x80, 0xEF}
_EXTENDED_PRIVATE = {
    bytes.fromhex(v) for v in ("0488ade4", "04358394", "049d7878", "044a4e28", "04b2430c")
}


def base58check(text: str) -> bytes | None:
    """The payload of a Base58Check string whose checksum holds, else None."""
    number = 0
    for char in text:
        value = _BASE58_VALUES.get(char)
        if value is None:
            return None
        number = number * 58 + value
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    raw = b"\0" * (len(text) - len(text.lstrip("1"))) + raw
    payload, checksum = raw[:-4], raw[-4:]
    if (
        len(payload) < 1
        or hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] != checksum
    ):
        return None
    return payload


def private_key(text: str) -> bool:
    """A WIF private key (33 or 34 bytes after a private-key version) or an extended one."""
    payload = base58check(text)
    if payload is None:
        return False
    if len(payload) in (33, 34) and payload[0] in _WIF_VERSIONS:
        return len(payload) == 33 or payload[-1] == 0x01
    return len(payload) == 78 and payload[:4] in _EXTENDED_PRIVATE


WALLET_KEY = Rule(
    "crypto_private_key",
    lazy_pattern(
        r"(?<![A-Za-z0-9])[1-9A-HJ-NP-Za-km-z]{50,52}(?![A-Za-z0-9])|[xtyzu]prv[1-9A-HJ-NP-Za-km-z]{107}"
    ),
    refine=lambda value: (0, len(value)) if private_key(value) else None,
)

_PHRASE_LENGTHS = (24, 21, 18, 15, 12)
# A run of twelve or more words of three to eight small letters (the English list's words), or
# of single Han characters, or of kana words, each apart from the next by spaces.
_RUN = lazy_pattern(
    r"(?<![A-Za-z])[a-z]{3,8}(?:[ \t\n]+[a-z]{3,8}){11,}(?![A-Za-z])"
    r"|(?<![\u3400-\u9fff])[\u3400-\u9fff](?:[ \u3000]+[\u3400-\u9fff]){11,}(?![\u3400-\u9fff])"
    r"|[\u3040-\u30ff]{1,8}(?:[ \u3000]+[\u3040-\u30ff]{1,8}){11,}"
)
_WORDS = lazy_pattern(r"\S+")
_LETTERS = lazy_pattern(r"[^\W\d_]+")


@cache
def _mnemonic(language: str) -> Mnemonic:
    return Mnemonic(language)


@cache
def _listed(language: str) -> frozenset[str]:
    return frozenset(unicodedata.normalize("NFKD", word) for word in _mnemonic(language).wordlist)


@cache
def _every_listed() -> frozenset[str]:
    languages = ("english", "chinese_simplified", "chinese_traditional", "japanese")
    return frozenset().union(*(_listed(language) for language in languages))


def _language(word: str) -> tuple[str, ...]:
    if word.isascii():
        return ("english",)
    if "\u3040" <= word[0] <= "\u30ff":
        return ("japanese",)
    return ("chinese_simplified", "chinese_traditional")


def _phrases(run: str) -> Iterator[tuple[int, int]]:
    """(start, end) in `run` of each valid recovery phrase, longest first at each word."""
    words = list(_WORDS.finditer(run))
    for language in _language(words[0].group()):
        listed = _listed(language)
        index = 0
        while index + 12 <= len(words):
            found = _phrase_at(words, index, listed, language)
            if found is None:
                index += 1
                continue
            yield words[index].start(), words[index + found - 1].end()
            index += found
        return


def _phrase_at(
    words: list[re.Match[str]], index: int, listed: frozenset[str], language: str
) -> int | None:
    for length in _PHRASE_LENGTHS:
        chosen = [unicodedata.normalize("NFKD", w.group()) for w in words[index : index + length]]
        if len(chosen) < length or not all(word in listed for word in chosen):
            continue
        separator = "\u3000" if language == "japanese" else " "
        if _mnemonic(language).check(separator.join(chosen)):
            return length
    return None


def _twelve_listed_words(text: str) -> bool:
    """Whether twelve words in a row are words of one of the lists (a cheap test first)."""
    words = _LETTERS.findall(text)
    if len(words) < 12:
        return False
    listed = _every_listed()
    row = 0
    for word in words:
        if not word.isascii():
            word = unicodedata.normalize("NFKD", word)
        row = row + 1 if word in listed else 0
        if row == 12:
            return True
    return False


class _RecoveryPhraseRule(Rule):
    def spans(self, text: str) -> Iterator[tuple[str, int, int]]:
        if not _twelve_listed_words(text):
            return
        for run in self.pattern.finditer(text):
            for start, end in _phrases(run.group()):
                yield "recovery_phrase", run.start() + start, run.start() + end


RECOVERY_PHRASE = _RecoveryPhraseRule("recovery_phrase", _RUN)

RULES: list[Rule] = [RECOVERY_PHRASE]
