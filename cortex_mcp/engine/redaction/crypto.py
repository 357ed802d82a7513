"""Wallet secrets told by their checksums, so any sentence around them will do: Bitcoin private
keys in Wallet Import Format and extended private keys (xprv, tprv, yprv, zprv), which are
Base58Check (a double SHA-256 checksum and a version byte that says "private key"), and BIP39
recovery phrases (12 to 24 words of the English, Chinese or Japanese wordlist whose last word
carries a checksum of the others: an ordinary sentence of list words passes it only by chance,
1 time in 16 for 12 words, 1 in 256 for 24), in any case, numbered or not, apart by spaces,
line breaks or commas."""

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
_LANGUAGES = ("english", "chinese_simplified", "chinese_traditional", "japanese")
_LETTERS = lazy_pattern(r"[^\W\d_](?:[^\W\d_]|[\u0300-\u036f\u3099\u309a])*")  # with kana's dakuten
_ASCII_LETTERS = lazy_pattern(r"[a-z]+")  # the same in lower-case ASCII text
# What may stand between two words of a phrase: spaces and line breaks, a comma or a dash, and
# the next word's number ("1. abandon 2. ability", "(3) able").
_GAP = lazy_pattern(r"[\s,;、，·\-]*(?:[(#]?\d{1,2}[.):]?\s*)?")


@cache
def _mnemonic(language: str) -> Mnemonic:
    return Mnemonic(language)


@cache
def _listed(language: str) -> frozenset[str]:
    return frozenset(unicodedata.normalize("NFKD", word) for word in _mnemonic(language).wordlist)


@cache
def _every_listed() -> frozenset[str]:
    return frozenset().union(*(_listed(language) for language in _LANGUAGES))


def _word(token: str) -> str:
    return token.lower() if token.isascii() else unicodedata.normalize("NFKD", token)


def _runs(text: str) -> Iterator[list[re.Match[str]]]:
    """Runs of twelve or more list words in a row, in any case, apart by a gap."""
    listed = _every_listed()
    run: list[re.Match[str]] = []
    for token in _LETTERS.finditer(text):
        joined = bool(run) and _GAP.fullmatch(text, run[-1].end(), token.start()) is not None
        if _word(token.group()) not in listed:
            if len(run) >= 12:
                yield run
            run = []
        elif joined or not run:
            run.append(token)
        else:
            if len(run) >= 12:
                yield run
            run = [token]
    if len(run) >= 12:
        yield run


def _phrase_at(words: list[str], index: int) -> int | None:
    """How many words from `index` make a valid phrase of one list, the longest first."""
    for length in _PHRASE_LENGTHS:
        chosen = words[index : index + length]
        if len(chosen) < length:
            continue
        for language in _LANGUAGES:
            if set(chosen) <= _listed(language) and _mnemonic(language).check(" ".join(chosen)):
                return length
    return None


def _twelve_listed_words(text: str) -> bool:
    """Whether twelve words in a row are words of the lists (a cheap test first)."""
    plain = text.isascii()  # then _LETTERS finds what [a-z]+ finds, three times slower
    tokens = (_ASCII_LETTERS if plain else _LETTERS).findall(text.lower())
    if len(tokens) < 12:
        return False
    listed = _every_listed()
    if plain and sum(map(listed.__contains__, tokens)) < 12:
        return False  # twelve in a row are twelve in all (counted without a Python loop)
    row = 0
    for token in tokens:
        if token in listed or (not token.isascii() and _word(token) in listed):
            row += 1
            if row == 12:
                return True
        else:
            row = 0
    return False


class _RecoveryPhraseRule(Rule):
    def spans(self, text: str) -> Iterator[tuple[str, int, int]]:
        if not _twelve_listed_words(text):
            return
        for run in _runs(text):
            words = [_word(token.group()) for token in run]
            index = 0
            while index + 12 <= len(words):
                found = _phrase_at(words, index)
                if found is None:
                    index += 1
                    continue
                yield "recovery_phrase", run[index].start(), run[index + found - 1].end()
                index += found


RECOVERY_PHRASE = _RecoveryPhraseRule("recovery_phrase", _LETTERS)

RULES: list[Rule] = [RECOVERY_PHRASE]
