"""Surrogate word lists and keyed choices from them (no state tables: a pure function of key + value).

Lists live in ``tide_core/data/surrogates/*.txt`` (one entry a line).  A value that is itself in a
list maps by a keyed *derangement* of that list (a bijection with no fixed point: zero collisions,
never itself); a value outside the list maps to a keyed index (a hash: collisions follow the
birthday bound for the list size) unless the caller has a larger generated space (names do).
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path

from tide_core.anonymize.keys import KeyRing
from tide_core.anonymize.small_domain import cached_subkey, permutation

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "surrogates"


def norm(value: str) -> str:
    """Case- and whitespace-insensitive lookup form ("SMITH", "smith" and "Smith" agree)."""
    return " ".join(value.replace("\u2019", "'").split()).casefold()


class SurrogateList:
    """A list of surrogate values (cities, streets, hospitals ...) with keyed choice from it.

    Entries are unique modulo case, and the lookup index maps their normalised form to the position,
    so a listed value moves by a keyed derangement inside the list (never onto itself) and any other
    value takes a keyed index.
    """

    def __init__(self, name: str, entries: tuple[str, ...]):
        self.name = name
        self.entries = entries
        self.index = {norm(e): i for i, e in enumerate(entries)}
        self._tweaks: dict[str, bytes] = {}  # context -> derangement tweak (public data)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, value: str) -> bool:
        return norm(value) in self.index

    def choose(self, keyring: KeyRing, domain: str, value: str, context: str = "") -> str:
        """Keyed surrogate for ``value``: a derangement inside the list, else a keyed index."""
        return self.choose_normed(keyring, domain, norm(value), context)

    def choose_normed(self, keyring: KeyRing, domain: str, key: str, context: str = "") -> str:
        """:meth:`choose` for a value already in lookup form (``key == norm(value)``)."""
        i = self.index.get(key)
        if i is not None:
            return self.deranged(keyring, domain, i, context)
        return self.entries[keyring.mac_int(domain, "list-hash", self.name, context, key) % len(self.entries)]

    def deranged(self, keyring: KeyRing, domain: str, i: int, context: str = "") -> str:
        """The entry the keyed derangement of this list maps entry ``i`` to."""
        tweak = self._tweaks.get(context)
        if tweak is None:
            tweak = self._tweaks[context] = f"list|{self.name}|{context}".encode()
        return self.entries[permutation(cached_subkey(keyring, domain), tweak, len(self.entries)).derange(i)]


@cache
def load_list(name: str) -> SurrogateList:
    """The bundled surrogate list ``name`` (``tide_core/data/surrogates/<name>.txt``, first column).

    Duplicates modulo case are dropped, so a derangement never maps a value onto itself in other case.
    """
    path = DATA_DIR / f"{name}.txt"
    seen: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = line.split("\t")[0].strip()
        if entry:
            seen.setdefault(norm(entry), entry)  # unique modulo case, so a derangement never
    return SurrogateList(name, tuple(seen.values()))  # maps a value onto itself in other case


@lru_cache(maxsize=256)
def with_suffix(name: str, suffix: str) -> SurrogateList | None:
    """The entries of list ``name`` ending in ``suffix`` (e.g. hospitals that are a "Clinic")."""
    tail = " " + norm(suffix)
    base = load_list(name)
    entries = tuple(e for e in base.entries if norm(e).endswith(tail))
    return SurrogateList(f"{name}/{norm(suffix)}", entries) if entries else None


def case_like(template: str, word: str) -> str:
    """Write ``word`` in the capitalisation pattern of ``template`` (UPPER, lower, else as listed)."""
    if template.isascii():  # every ASCII letter is cased: str.isupper / islower say the same, faster
        if template.isupper():
            return word.upper() if _two_letters(template) else word
        return word.lower() if template.islower() else word
    letters = [c for c in template if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if letters and all(c.islower() for c in letters):
        return word.lower()
    return word


def _two_letters(text: str) -> bool:
    """True when ``text`` holds at least two letters."""
    seen = 0
    for c in text:
        if c.isalpha():
            seen += 1
            if seen > 1:
                return True
    return False
