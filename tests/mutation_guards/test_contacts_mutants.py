"""Contact surrogates, checked against their definition (``tide_core/anonymize/contacts.py``).

Each expected value is recomputed from the key: phone digits after the kept prefix (``+CC``, the 1 of an
11-digit NANP number) permuted under ``"phone|<count>"`` with the NANP shape kept, extensions under
``"phone-ext"``; host labels as keyed city words (an ``s`` added when a label draws itself), ``www`` and
the TLD kept; e-mail local parts with name words as name surrogates and other runs under
``"email-local"``; URL user-info under ``"url-user"`` and path runs under ``"url-path"``.
IPv4: a keyed derangement of the whole 2^32 address space (``permutation(subkey("contact"), "ipv4")``)
over the big-endian address; IPv6: the hex digits permuted in place under ``"ipv6"``, each digit's case
kept.  Refusals are coded E450-E454 with a hint.
"""

from __future__ import annotations

import re

import pytest

from tide_core.anonymize.contacts import (
    surrogate_domain,
    surrogate_email,
    surrogate_ipv4,
    surrogate_ipv6,
    surrogate_phone,
    surrogate_url,
)
from tide_core.anonymize.identifiers import DIGITS, HEX_LOWER, HEX_UPPER, char_alphabet, permute_payload
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.names import surrogate_token
from tide_core.anonymize.small_domain import cached_subkey, permutation
from tide_core.anonymize.surrogates import case_like, load_list, norm
from tide_core.errors import AnonymizationError

KR = keyring_for_tests("guard-contacts", "k1", "guard-contacts-seed")
SUB = cached_subkey(KR, "contact")


def _ipv4(value: str) -> str:
    x = int.from_bytes(bytes(int(o) for o in value.split(".")), "big")
    y = permutation(SUB, b"ipv4", 2**32).derange(x)
    return ".".join(str(b) for b in y.to_bytes(4, "big"))


@pytest.mark.parametrize("value", ["0.0.0.0", "10.1.2.3", "192.168.0.255", "255.255.255.255", "1.2.3.4"])
def test_ipv4_is_the_keyed_derangement_of_the_address_space(value):
    assert surrogate_ipv4(KR, value) == _ipv4(value) != value
    assert surrogate_url(KR, f" {value} ") == (f" {_ipv4(value)} ", "ip.fpe")


@pytest.mark.parametrize("value", ["256.1.1.1", "1.2.3.999", "1.2.3", "a.b.c.d"])
def test_an_octet_over_255_or_no_ipv4_shape_is_e453(value):
    with pytest.raises(AnonymizationError) as e:
        surrogate_ipv4(KR, value)
    assert e.value.code == "E453" and "IPv4" in e.value.message and "quarantined" in e.value.hint


@pytest.mark.parametrize("value", ["2001:db8::ff00:42:8329", "2001:DB8::FF00:42:8329", "fe80::1:Ab"])
def test_ipv6_hex_digits_are_permuted_in_place_in_their_own_case(value):
    digits = [c for c in value if c != ":"]
    alphabets = [HEX_UPPER if c in "ABCDEF" else HEX_LOWER for c in digits]
    new = iter(permute_payload(SUB, "ipv6", alphabets, "".join(digits)))
    want = "".join(c if c == ":" else next(new) for c in value)
    assert surrogate_ipv6(KR, value) == want != value
    assert surrogate_url(KR, value) == (want, "ip.fpe")
    assert [c.isupper() for c in want if c.isalpha()] == [c in "ABCDEF" for c in want if c.isalpha()]


# Phones: the digits after the kept prefix are permuted under "phone|<count>"; a 10-digit payload whose
# area code and exchange start with 2-9 keeps that NANP shape; an extension is permuted under "phone-ext".
def _phone(main: str, keep: int, sep: str = "", ext: str = "") -> str:
    pos = [i for i, c in enumerate(main) if c.isdigit()][keep:]
    payload = "".join(main[i] for i in pos)
    alphabets = [DIGITS] * len(payload)
    if len(payload) == 10 and payload[0] in "23456789" and payload[3] in "23456789":
        alphabets[0] = alphabets[3] = "23456789"
    new = dict(zip(pos, permute_payload(SUB, f"phone|{len(payload)}", alphabets, payload), strict=True))
    out = "".join(new.get(i, c) for i, c in enumerate(main))
    return out + sep + (permute_payload(SUB, "phone-ext", [DIGITS] * len(ext), ext) if ext else "")


@pytest.mark.parametrize(
    ("value", "keep"),
    [
        ("(650) 555-1234", 0),  # NANP shape kept
        ("(150) 555-1234", 0),  # area code starts with 1: no NANP alphabets
        ("(650) 515-1234", 0),  # exchange starts with 5, its second digit 1: NANP
        ("(650) 155-1234", 0),  # exchange starts with 1: not NANP
        ("555-7234", 0),  # 7 digits: never NANP
        ("123", 0),  # the fewest digits a phone may have
        ("1-650-555-1234", 1),  # the leading 1 of an 11-digit number is kept
        ("2-650-555-1234", 0),  # 11 digits not starting with 1: nothing kept
        ("+1 650 555 1234", 1),
        ("+16505551234", 1),  # run-on +1 and 10 digits: the 1 kept
        ("+49301234567", 2),  # run-on, 11 digits, not +1: two kept
        ("+4930123456", 2),
        ("+4930 123456", 2),  # a 4-digit first group: two kept
        ("+353 1 234 5678", 3),  # a 3-digit country code is kept whole
        ("  +44 20 7946 0958", 2),  # leading blanks before the +
        ("+(650) 555-1234", 0),  # a + without digits after it keeps nothing
    ],
)
def test_phone_digits_after_the_kept_prefix_are_permuted_under_their_count(value, keep):
    want = _phone(value, keep)
    assert surrogate_phone(KR, value) == want != value
    assert [c for c in want if not c.isdigit()] == [c for c in value if not c.isdigit()]


@pytest.mark.parametrize(("value", "main", "sep", "ext"), [("555-1234 ext. 42", "555-1234", " ext. ", "42")])
def test_a_phone_extension_is_permuted_on_its_own(value, main, sep, ext):
    assert surrogate_phone(KR, value) == _phone(main, 0, sep, ext)


def test_a_phone_with_fewer_than_three_digits_is_e450():
    with pytest.raises(AnonymizationError) as e:
        surrogate_phone(KR, "12")
    assert e.value.code == "E450" and "quarantined" in e.value.hint


# Host labels: the keyed city word for (label, "host"), letters and digits only, an "s" added when it
# would equal the label, upper case for an upper-case label; "www" and the top-level domain kept.
def _label(kr, label: str) -> str:
    word = re.sub(r"[^a-z0-9]", "", load_list("cities").choose(kr, "contact", label, "host").lower())
    word += "s" if word == label.lower() else ""
    return word.upper() if label.isupper() else word


def test_host_labels_are_keyed_city_words_and_the_tld_is_kept():
    assert surrogate_domain(KR, "mail.example.org") == f"{_label(KR, 'mail')}.{_label(KR, 'example')}.org"
    assert surrogate_domain(KR, "www.EXAMPLE.org") == f"www.{_label(KR, 'EXAMPLE')}.org"
    assert _label(KR, "EXAMPLE").isupper() and _label(KR, "EXAMPLE").lower() == _label(KR, "example")
    assert surrogate_domain(KR, "intranet") == _label(KR, "intranet")
    assert surrogate_domain(KR, "gmail.com") == "gmail.com"


def test_a_host_label_that_draws_itself_gets_an_s():
    kr = keyring_for_tests("guard-contacts", "k1", "guard-contacts-seed-3")  # draws "newtorres" for it
    assert re.sub(r"[^a-z]", "", load_list("cities").choose(kr, "contact", "newtorres", "host").lower()) == "newtorres"
    assert surrogate_domain(kr, "newtorres.org") == "newtorress.org"
    assert surrogate_domain(kr, "NEWTORRES.org") == "NEWTORRESS.org"


# E-mail local parts: name words (first or last name lists, 2+ letters) become name surrogates in the
# word's case, other runs are permuted under "email-local"; accents and ß are folded first.
def _local(local: str) -> str:
    out = []
    for run in re.findall(r"[A-Za-z]+|[0-9]+|[^A-Za-z0-9]+", local):
        listed = norm(run) in load_list("first_names").index or norm(run) in load_list("last_names").index
        if run.isalpha() and len(run) > 1 and listed:
            sur = re.sub(r"[^A-Za-z]", "", surrogate_token(KR, run))
            out.append(sur.lower() if run.islower() else case_like(run, sur))
        elif run[0].isalnum():
            out.append(permute_payload(SUB, "email-local", [char_alphabet(c) for c in run], run))
        else:
            out.append(run)
    return "".join(out)


@pytest.mark.parametrize(
    ("value", "local"),
    [
        ("john.smith42@example.org", "john.smith42"),  # john: first names only
        ("John.Smith@example.org", "John.Smith"),  # title case kept
        ("ed.li@example.org", "ed.li"),  # two-letter names
        ("carmona@example.org", "carmona"),  # its surrogate has an apostrophe, dropped in the local part
        ("x7k.q@example.org", "x7k.q"),
        ("weiß@example.org", "weiss"),
        ("strauß-mo@example.org", "strauss-mo"),
    ],
)
def test_email_local_part_names_and_other_runs(value, local):
    domain = surrogate_domain(KR, "example.org")
    assert surrogate_email(KR, value) == f"{_local(local)}@{domain}"
    assert surrogate_email(KR, f" mailto:{value} ") == f" mailto:{_local(local)}@{domain} "


def test_carmona_draws_a_surrogate_with_an_apostrophe():
    assert "'" in surrogate_token(KR, "carmona")


@pytest.mark.parametrize(("value", "code"), [("a\u0663@example.org", "E452"), ("not-an-email", "E451")])
def test_a_non_ascii_digit_in_a_local_part_is_e452_and_no_address_e451(value, code):
    with pytest.raises(AnonymizationError) as e:
        surrogate_email(KR, value)
    assert e.value.code == code and "quarantined" in e.value.hint


# URLs: scheme, port, punctuation and web words kept; user-info runs permuted under "url-user",
# path runs under "url-path"; a bare word without scheme or dot, or a hex word without colons, is E454.
def _runs(context: str, text: str) -> str:
    return "".join(
        permute_payload(SUB, context, [char_alphabet(c) for c in r], r)
        if r[0].isalnum() and r.lower() not in ("html", "id")
        else r
        for r in re.findall(r"[A-Za-z0-9]+|[^A-Za-z0-9]+", text)
    )


def test_url_user_host_and_path_are_replaced_part_by_part():
    host = surrogate_domain(KR, "portal.example.org")
    value = "https://JSmith:pw42@portal.example.org:8443/Patient/AB12/index.html?id=77#Top"
    want = f"https://{_runs('url-user', 'JSmith:pw42@')}{host}:8443{_runs('url-path', '/Patient/AB12/')}index.html"
    want += _runs("url-path", "?") + "id=" + _runs("url-path", "77#Top")
    assert surrogate_url(KR, value) == (want, "url.surrogate")
    assert surrogate_url(KR, " portal.example.org ") == (f" {host} ", "url.surrogate")
    assert surrogate_url(KR, "http://intranet/x") == (
        f"http://{_label(KR, 'intranet')}/{_runs('url-path', 'x')}",
        "url.surrogate",
    )


@pytest.mark.parametrize("value", ["fe80::1", "FE80::A"])
def test_two_colons_of_hex_digits_are_an_ipv6_address(value):
    assert surrogate_url(KR, value) == (surrogate_ipv6(KR, value), "ip.fpe")


@pytest.mark.parametrize("value", ["deadbeef", "intranet"])
def test_a_bare_word_without_scheme_or_dot_is_e454(value):
    with pytest.raises(AnonymizationError) as e:
        surrogate_url(KR, value)
    assert e.value.code == "E454" and "quarantined" in e.value.hint


def test_an_ipv4_host_in_a_url_gets_the_ipv4_derangement():
    want = f"http://{_ipv4('10.1.2.3')}:8080/{_runs('url-path', 'x')}"
    assert surrogate_url(KR, "http://10.1.2.3:8080/x") == (want, "url.surrogate")
