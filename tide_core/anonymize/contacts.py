"""Keyed surrogates for PHONE, EMAIL and URL spans (URLs include IP addresses).

* phone: every non-digit character stays (parentheses, dashes, dots, spaces, ``+``, ``ext.``);
  the subscriber digits are FPE-permuted (FF3-1 for 7+ digits, exact small-domain bijection for
  extensions).  A ``+CC`` country code or the leading ``1`` of an 11-digit NANP number is kept,
  and a NANP number keeps a valid shape (area code and exchange start with 2-9).  The tweak
  depends on the digit count only, so ``(650) 555-1234`` and ``650.555.1234`` get the same digits;
* e-mail: the local part keeps its shape (accented letters are folded to ASCII first; name words
  become name surrogates, other letters and digits are FPE-permuted, ``.``/``_``/``-``/``+``
  kept); the domain's labels become keyed surrogate words, the top-level domain is kept;
  well-known public mail providers are kept (they identify nobody);
* URL: scheme, ``www.``, port, TLD and punctuation kept; host labels as for e-mail; path, query and
  fragment letters/digits FPE-permuted run by run (common web words such as ``html`` kept);
* IPv4: a keyed derangement of the 2^32 addresses; IPv6: hex digits FPE-permuted, colons kept.
"""

from __future__ import annotations

import re
import unicodedata

from tide_core.anonymize.identifiers import DIGITS, HEX_LOWER, HEX_UPPER, char_alphabet, permute_payload
from tide_core.anonymize.keys import KeyRing
from tide_core.anonymize.names import surrogate_token
from tide_core.anonymize.small_domain import cached_subkey, permutation
from tide_core.anonymize.surrogates import case_like, load_list, norm
from tide_core.errors import AnonymizationError

DOMAIN = "contact"
NANP_LEAD = "23456789"
PUBLIC_MAIL = frozenset(
    {
        "gmail.com",
        "yahoo.com",
        "hotmail.com",
        "outlook.com",
        "aol.com",
        "icloud.com",
        "live.com",
        "msn.com",
        "comcast.net",
        "protonmail.com",
        "me.com",
        "att.net",
    }
)
WEB_WORDS = frozenset({"html", "htm", "php", "asp", "aspx", "jsp", "index", "www", "http", "https", "pdf", "id"})
_EXT = re.compile(r"(?i)(\s*(?:,\s*)?(?:ext\.?|extension|x|#)\s*)(\d{1,6})\s*$")
_EMAIL = re.compile(r"([^@\s]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})")
_URL = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)?(?P<user>[^@/\s]+@)?(?P<host>[^/:?#\s]+)(?P<port>:\d+)?(?P<rest>[/?#].*)?"
)
_IPV4 = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})")


def _err(code: str, what: str) -> AnonymizationError:
    return AnonymizationError(
        code, what, hint="fix the span boundaries or label; the note is quarantined, not released"
    )


def _fpe_run(keyring: KeyRing, context: str, run: str) -> str:
    """Class-preserving FPE of a run of ASCII letters/digits (non-ASCII letters -> error)."""
    alphabets = []
    for c in run:
        a = char_alphabet(c)
        if a is None:
            raise _err("E452", "contact contains a non-ASCII letter or digit")
        alphabets.append(a)
    return permute_payload(cached_subkey(keyring, DOMAIN), context, alphabets, run)


def surrogate_phone(keyring: KeyRing, value: str) -> str:
    """Keyed surrogate of a PHONE span: the same punctuation, new subscriber digits.

    The country code (or the NANP leading ``1``) and an extension separator are kept; a NANP number
    stays dialable-looking (area code and exchange start with 2-9).  E450 when the span has fewer than
    3 digits, since a permutation of so few digits would hide almost nothing.
    """
    main, ext_sep, ext = value, "", ""
    m = _EXT.search(value)
    if m and any(c.isdigit() for c in value[: m.start()]):
        main, ext_sep, ext = value[: m.start()], m.group(1), m.group(2)
    positions = [i for i, c in enumerate(main) if c.isdigit()]
    if len(positions) < 3:
        raise _err("E450", "phone span has fewer than 3 digits")
    keep = 0
    stripped = main.lstrip()
    if stripped.startswith("+"):
        first = re.match(r"\+\s*(\d+)", stripped)
        group = first.group(1) if first else ""
        keep = len(group) if len(group) <= 3 else (1 if group.startswith("1") and len(positions) == 11 else 2)
    elif len(positions) == 11 and main[positions[0]] == "1":
        keep = 1
    payload = "".join(main[i] for i in positions[keep:])
    alphabets = [DIGITS] * len(payload)
    if len(payload) == 10 and payload[0] in NANP_LEAD and payload[3] in NANP_LEAD:
        alphabets[0] = alphabets[3] = NANP_LEAD
    new = permute_payload(cached_subkey(keyring, DOMAIN), f"phone|{len(payload)}", alphabets, payload)
    out = list(main)
    for pos, ch in zip(positions[keep:], new, strict=True):
        out[pos] = ch
    if ext:
        ext = permute_payload(cached_subkey(keyring, DOMAIN), "phone-ext", [DIGITS] * len(ext), ext)
    return "".join(out) + ext_sep + ext


def _host_label(keyring: KeyRing, label: str) -> str:
    if not label:
        return label
    word = load_list("cities").choose(keyring, DOMAIN, label, "host")
    word = re.sub(r"[^a-z0-9]", "", word.lower())
    if word == label.lower():
        word += "s"
    return word.upper() if label.isupper() else word


def surrogate_domain(keyring: KeyRing, domain: str) -> str:
    """Keyed surrogate of a host name: each label a surrogate word, ``www`` and the TLD kept.

    Public mail providers are returned unchanged: they are shared by millions and identify nobody,
    while rewriting them would make released addresses look invented.
    """
    if domain.lower() in PUBLIC_MAIL:
        return domain
    labels = domain.split(".")
    if len(labels) < 2:
        return _host_label(keyring, domain)
    out = [lab if lab.lower() == "www" else _host_label(keyring, lab) for lab in labels[:-1]]
    return ".".join(out + [labels[-1]])


def _ascii_fold(text: str) -> str:
    """Accented Latin letters to their base letter ("garzón" -> "garzon"); other characters kept."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("ß", "ss")


def _local_part(keyring: KeyRing, local: str) -> str:
    local = _ascii_fold(local)  # the surrogate is ASCII; a letter it cannot fold quarantines the note
    out = []
    for piece in re.split(r"([^A-Za-z0-9]+)", local):
        if not piece or not piece[0].isalnum():
            out.append(piece)
            continue
        for run in re.findall(r"[A-Za-z]+|\d+", piece):
            if (
                run.isalpha()
                and len(run) > 1
                and (norm(run) in load_list("first_names").index or norm(run) in load_list("last_names").index)
            ):
                sur = re.sub(r"[^A-Za-z]", "", surrogate_token(keyring, run))
                out.append(case_like(run, sur) if not run.islower() else sur.lower())
            else:
                out.append(_fpe_run(keyring, "email-local", run))
        if re.search(r"[^A-Za-z0-9]", piece):
            raise _err("E452", "e-mail local part contains unsupported characters")
    return "".join(out)


def surrogate_email(keyring: KeyRing, value: str) -> str:
    """Keyed surrogate of an EMAIL span: local part and domain replaced, its shape kept.

    Surrounding white space and a ``mailto:`` prefix are kept; E451 when the span is not an address.
    """
    core = value.strip()
    lead, trail = value[: len(value) - len(value.lstrip())], value[len(value.rstrip()) :]
    prefix = ""
    if core.lower().startswith("mailto:"):
        prefix, core = core[:7], core[7:]
    m = _EMAIL.fullmatch(core)
    if not m:
        raise _err("E451", "EMAIL span is not an e-mail address")
    return lead + prefix + _local_part(keyring, m.group(1)) + "@" + surrogate_domain(keyring, m.group(2)) + trail


def surrogate_ipv4(keyring: KeyRing, value: str) -> str:
    """Keyed derangement of the 2^32 IPv4 addresses, so no address maps onto itself.

    E453 when the span is not a dotted-quad address.
    """
    m = _IPV4.fullmatch(value)
    octets = [int(g) for g in m.groups()] if m else []
    if not octets or any(o > 255 for o in octets):
        raise _err("E453", "not an IPv4 address")
    x = int.from_bytes(bytes(octets), "big")
    y = permutation(cached_subkey(keyring, DOMAIN), b"ipv4", 2**32).derange(x)
    return ".".join(str(b) for b in y.to_bytes(4, "big"))


def surrogate_ipv6(keyring: KeyRing, value: str) -> str:
    """Keyed surrogate of an IPv6 address: hex digits FPE-permuted (case kept), colons kept."""
    positions = [i for i, c in enumerate(value) if c != ":"]
    alphabets = [HEX_UPPER if c in "ABCDEF" else HEX_LOWER for c in (value[i] for i in positions)]
    payload = "".join(
        value[i].lower() if a is HEX_LOWER else value[i] for i, a in zip(positions, alphabets, strict=True)
    )
    new = permute_payload(cached_subkey(keyring, DOMAIN), "ipv6", alphabets, payload)
    out = list(value)
    for pos, ch in zip(positions, new, strict=True):
        out[pos] = ch
    return "".join(out)


def surrogate_url(keyring: KeyRing, value: str) -> tuple[str, str]:
    """(surrogate, operator) for a URL span: web address or IP address."""
    core = value.strip()
    lead, trail = value[: len(value) - len(value.lstrip())], value[len(value.rstrip()) :]
    if _IPV4.fullmatch(core):
        return lead + surrogate_ipv4(keyring, core) + trail, "ip.fpe"
    if core.count(":") >= 2 and re.fullmatch(r"[0-9A-Fa-f:]+", core):
        return lead + surrogate_ipv6(keyring, core) + trail, "ip.fpe"
    m = _URL.fullmatch(core)
    if not m or "." not in m.group("host") and not m.group("scheme"):
        raise _err("E454", "URL span is not a web address or IP address")
    host = m.group("host")
    new_host = surrogate_ipv4(keyring, host) if _IPV4.fullmatch(host) else surrogate_domain(keyring, host)
    user = m.group("user") or ""
    if user:
        user = "".join(
            _fpe_run(keyring, "url-user", r) if r[0].isalnum() else r
            for r in re.findall(r"[A-Za-z0-9]+|[^A-Za-z0-9]+", user)
        )
    rest = m.group("rest") or ""
    rest = "".join(
        r if (not r[0].isascii() or not r[0].isalnum() or r.lower() in WEB_WORDS) else _fpe_run(keyring, "url-path", r)
        for r in re.findall(r"[A-Za-z0-9]+|[^A-Za-z0-9]+", rest)
    )
    return lead + (m.group("scheme") or "") + user + new_host + (m.group("port") or "") + rest + trail, "url.surrogate"
