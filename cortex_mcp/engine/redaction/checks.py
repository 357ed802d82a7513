"""Checksums and measures that tell a real number or key from a look-alike: Luhn for card
numbers, ISO 13616 mod-97 for IBANs, ISO 7064 MOD 11-2 for Chinese resident ID numbers, the
SSA's rules for US social security numbers, and Shannon entropy for random-looking strings."""

from __future__ import annotations

import math
from collections import Counter
from datetime import date

from cortex_mcp.engine.redaction.rules import lazy_pattern

_NON_DIGIT = lazy_pattern(r"\D")


def digits_of(text: str) -> str:
    return _NON_DIGIT.sub("", text)


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def card_number(text: str) -> bool:
    """13-19 digits, an issuer prefix in use (Visa, Mastercard, Amex, Diners, JCB, Discover,
    UnionPay, Maestro) and a valid Luhn check digit."""
    digits = digits_of(text)
    if not 13 <= len(digits) <= 19 or len(set(digits)) < 2:
        return False
    return _issuer_known(digits) and luhn_valid(digits)


def _issuer_known(digits: str) -> bool:
    if digits[0] in "46":  # Visa; Discover, UnionPay, Maestro (6xxx)
        return True
    if digits[0] == "5":
        return digits[1] in "012345678"  # Mastercard 51-55, Maestro 50/56-58
    if digits[0] == "3":
        return digits[1] in "04678" or digits[:2] == "35"  # Diners, Amex, JCB
    return digits[0] == "2" and 2221 <= int(digits[:4]) <= 2720  # Mastercard 2-series


# ISO 13616 lengths by country (SWIFT IBAN registry).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_length(text: str) -> int | None:
    """How many characters of `text` (from its start, separators included) make a valid IBAN,
    or None. The country's registered length decides where the IBAN ends."""
    country = text[:2].upper()
    wanted = IBAN_LENGTHS.get(country)
    if wanted is None:
        return None
    chars: list[str] = []
    for index, char in enumerate(text):
        if char.isalnum():
            chars.append(char.upper())
            if len(chars) == wanted:
                return index + 1 if _mod97_valid("".join(chars)) else None
    return None


def _mod97_valid(iban: str) -> bool:
    if not iban[2:4].isdigit():
        return False
    moved = iban[4:] + iban[:4]
    number = "".join(str(int(char, 36)) for char in moved)
    return int(number) % 97 == 1


_CN_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
_CN_CHECK = "10X98765432"


def china_resident_id(text: str) -> bool:
    """18 characters: region, a real birth date, sequence and an ISO 7064 MOD 11-2 check."""
    value = text.upper()
    if len(value) != 18 or not value[:17].isdigit():
        return False
    try:
        date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    total = sum(int(d) * w for d, w in zip(value[:17], _CN_WEIGHTS, strict=True))
    return _CN_CHECK[total % 11] == value[17]


def us_ssn(text: str) -> bool:
    """Area 001-899 except 666, group 01-99, serial 0001-9999; not the advertised samples."""
    digits = digits_of(text)
    if len(digits) != 9 or digits in {"078051120", "219099999", "123456789"}:
        return False
    area, group, serial = int(digits[:3]), int(digits[3:5]), int(digits[5:])
    return 0 < area < 900 and area != 666 and group > 0 and serial > 0


def entropy_bits(text: str) -> float:
    """Shannon entropy per character."""
    counts = Counter(text)
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def looks_random(text: str, min_length: int = 16) -> bool:
    """A string a person did not write as a word: long, letters and digits mixed, and with
    the character spread of a generated key (hex keys sit near 3.6 bits, base64 above 4)."""
    if len(text) < min_length:
        return False
    has_digit = any(c.isdigit() for c in text)
    has_alpha = any(c.isalpha() for c in text)
    return has_digit and has_alpha and entropy_bits(text) >= 3.0
