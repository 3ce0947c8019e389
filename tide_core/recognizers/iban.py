"""International bank account numbers (IBAN, ISO 13616): the shape and the mod-97 check digits.

An IBAN is two letters (the country), two check digits and up to 30 letters or digits (the
national account number, the BBAN), often printed in groups of four ("GB82 WEST 1234 5698 7654 32").
Its check digits make ``int(BBAN + country + check)`` (letters as 10..35) leave 1 when divided
by 97, so a real IBAN is told from a look-alike without any list of banks; the regex layer takes
a checked IBAN anywhere, and an unchecked one only after a bank word ("IBAN", "wire", "account").
"""

from __future__ import annotations

import re

#: Four-character groups separated by single spaces, or written solid; the last group may be short.
#: Only the first group of the account part (a bank code: "WEST", "ABNA") may be letters alone; a
#: later group needs a digit, so the words after an IBAN ("... 7034 from", "... 32 via") stay out.
_AL = "(?i:[A-Z0-9])"
_DIGIT_GROUP = "(?=(?i:[A-Z]){0,3}\\d)"
IBAN_REGEX = (
    r"(?<![\w/-])(?P<phi>(?i:[A-Z]{2})\d{2}[ ]?" + _AL + "{4}(?:[ ]?" + _DIGIT_GROUP + _AL + "{4}){1,6}"
    r"(?:[ ]?" + _DIGIT_GROUP + _AL + r"{1,3})?)(?![\w-])"
)
#: The check digits and the first group, which every IBAN has two characters in; the whole IBAN
#: (at most 34 characters and 8 group spaces) lies within (2, 36) characters around it.
IBAN_ANCHOR = r"\d\d[ ]?(?i:[A-Z0-9]){4}"
IBAN_ANCHOR_WINDOW = (2, 36)
MIN_LENGTH, MAX_LENGTH = 15, 34  # Norway's 15 characters to Saint Lucia's 32; ISO allows 34

_SEPARATORS = re.compile(r"[ ]")


def compact(value: str) -> str:
    """The IBAN without its group spaces, in upper case."""
    return _SEPARATORS.sub("", value).upper()


def iban_shape(value: str) -> bool:
    """Length within ISO 13616's bounds and an account part that is mostly digits (every country's
    BBAN is), so that a run of words ("pt12 days each time") is not taken for one."""
    iban = compact(value)
    if not MIN_LENGTH <= len(iban) <= MAX_LENGTH or not iban[:2].isalpha() or not iban[2:4].isdigit():
        return False
    bban = iban[4:]
    return sum(c.isdigit() for c in bban) * 2 >= len(bban)


def iban_checksum_ok(value: str) -> bool:
    """ISO 7064 mod 97-10 over the rearranged IBAN: 1 for a well-formed IBAN."""
    iban = compact(value)
    if not iban.isascii() or not iban.isalnum():
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1
