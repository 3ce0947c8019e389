"""Addresses written the way the rest of the world writes them (``tide.addresses``, label LOCATION).

The regex layer reads US street lines ("5286 Whippoorwill Ln", "Austin, TX 78701").  This
recognizer reads the other common forms, each a street line or a postcode beside a town:

- street word after the name, the number last: German, Dutch and Scandinavian compounds
  ("Hauptstraße 12", "Keizersgracht 123", "Storgatan 5", "Nørregade 7"), separate street words
  ("Berliner Straße 12a"), Hungarian ("Kossuth Lajos u. 15.", "Váci út 12", "Andrássy út 60.");
- street word first, the number last: Spanish, Portuguese, Italian ("Calle Mayor 5", "Avenida
  Paulista, 1578", "Via Roma 10", "Piazza del Duomo 3"), Russian ("ул. Ленина, д. 5");
- number first, then the street word: French ("12 rue de la Paix", "5 bis avenue Victor Hugo");
- Greek script ("Ερμού 25", "Λεωφόρος Βασιλίσσης Σοφίας 12"): a Greek name and a number after a
  Greek street word, beside a postcode, or in a note written in another script;
- military mail: "PSC 1234, Box 5678", "Unit 2050 Box 4190", "CMR 480 Box 123" (one span) and
  "APO AE 09123", "FPO AP 96349" (the post office, the area and the ZIP, three spans);
- postcodes of common countries beside a town: "1051 Budapest", "75001 Paris", "00-950
  Warszawa", "114 55 Stockholm", "1012 AB Amsterdam", "D-80331 München" (postcode and town, two
  spans), and UK and Canadian postcodes alone ("SW1A 1AA", "K1A 0B1").

A town after a plain four- or five-digit number must be a known place (GeoNames, the lists of
``tide.places``) and the number must start a line or follow a comma, a tab, a bar, a colon or a
street line, so "in 2004 Paris" and "10000 Units" are left alone.  A street name is a capitalised
name that is not an everyday English word ("Brigade 3", "Gate 12", "Via email" are not streets).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.person_names import _LO, _UP, matches_before
from tide_core.recognizers.places import _fold, load_place_names
from tide_core.spans import RecognizerResult
from tide_core.text.anchored import PatternSet
from tide_core.text.word_frequency import english_frequencies

#: Greek capitals (with tonos) and small letters; Cyrillic capitals and small letters.
_GR_UP = "\u0386\u0388-\u038f\u0391-\u03a1\u03a3-\u03ab"
_GR_LO = "\u0390\u03ac-\u03ce\u1f00-\u1ffe"
_CY_UP = "\u0400-\u042f"
_CY_LO = "\u0430-\u045f"

#: A house number: "12", "12a", "12 A", "15/B", "3-5", "15." (Hungarian writes the dot).
_NUM = r"\d{1,4}(?:[ ]?[a-zA-Z](?![\w.]))?(?:[/\-]\d{1,4}[a-zA-Z]?|/[A-Za-z]|-[IVX]{1,4}(?![\w]))?"
#: A capitalised Latin name word ("Kossuth", "Nørre", "Saint-Honoré", "O'Connell").
_LWORD = rf"[{_UP}][{_LO}'\u2019]+(?:-[{_UP}]?[{_LO}'\u2019]+)*"
_LINK = r"(?:de|del|della|delle|dei|degli|di|da|do|dos|das|du|des|la|le|les|los|las|el|der|den|von|van|am|an|y|e|i)"
_LNAME = rf"{_LWORD}(?:[ \t]+(?:{_LINK}[ \t]+)*{_LWORD}){{0,3}}"

#: Street words written as the end of a compound ("Hauptstraße", "Keizersgracht", "Storgatan").
_COMPOUND_TAILS = (
    "straße|strasse|str\\.|gasse|allee|platz|damm|chaussee|ufer|weg|steig|"  # German
    "straat|gracht|laan|plein|kade|singel|dijk|steeg|markt|"  # Dutch
    "gatan|gata|vägen|väg|gränd|torget|gade|vej|veien|vegen|gaten|gate|stræde|allé|"  # Scandinavian
    "katu|tie|kuja"  # Finnish
)
_COMPOUND = re.compile(
    rf"(?<![\w.'\u2019-])(?P<street>(?P<word>[{_UP}][{_LO}]*?(?:{_COMPOUND_TAILS}))[ \t]+{_NUM}"
    rf"(?:[ \t]+(?:bis|ter|hs|huis)\b)?)(?![\w,]\d)"
)
_COMPOUND_ANCHOR = re.compile(rf"(?:{_COMPOUND_TAILS})[ \t]+\d")
#: Name words before a compound street word: "Burgemeester de Withstraat 166", "Van Baerlestraat 12".
_WORDS_BEFORE = re.compile(rf"(?:(?:{_LWORD}|{_LINK})[ \t]+){{1,3}}$")
#: A separate street word after the name: "Berliner Straße 12", "Kossuth Lajos u. 15.", "Váci út 12".
_AFTER_WORDS = (
    r"Straße|Strasse|Str\.|Weg|Gasse|Allee|Platz|Damm|Ring|Ufer|Chaussee|Straat|Laan|Plein|Gracht|Kade|"
    r"utca|u\.|út|útja|tér|tere|körút|krt\.|köz|sor|sétány|fasor|rakpart|lépcső|"
    r"Gatan|Vägen|Gade|Vej|Veien|Gate"
)
_AFTER_ANCHOR = re.compile(rf"[ \t](?:{_AFTER_WORDS})[ \t]+\d")
_NAME_THEN_WORD = re.compile(
    rf"(?<![\w.'\u2019-])(?P<street>(?P<name>{_LNAME})[ \t]+(?:{_AFTER_WORDS})[ \t]+{_NUM}\.?"
    r"(?:[ \t]+(?:[IVX]{1,4}|\d{1,2})\.[ \t]*(?:em\.|emelet)(?:[ \t]*\d{1,3}\.?)?)?)(?=[\s,;.)]|$)"  # "II. em. 3."
)
#: A street name and a number alone on a line (transliterated Greek and other names: "Egnatia 23",
#: "Leoforos Kifisias 86"), taken when the next line starts with a postcode.
_LINE_STREET = re.compile(rf"(?m)^[ \t]*(?P<street>{_LNAME}[ \t]+\d{{1,4}}[a-zA-Z]?(?:[/\-]\d{{1,4}})?)[ \t]*$")
#: A street word first: "Calle Mayor 5", "Via Roma 10", "Avenida Paulista, 1578", "Rua Augusta 1500".
_BEFORE_WORDS = (
    r"Calle|C/|Avenida|Avda\.|Av\.|Paseo|Plaza|Camino|Carrer|Carretera|Ronda|Travesía|Rua|Travessa|Largo|"
    r"Praça|Alameda|Via|Viale|Piazza|Piazzale|Corso|Vicolo|Strada|Contrada|Lungomare|Ulica|ul\.|Aleja|al\.|"
    r"Plac|pl\.|Osiedle|os\.|Avinguda|Passeig|Rambla|Im|An[ \t]+der|Auf[ \t]+der|Auf[ \t]+dem|In[ \t]+der|Zum|Zur|"
    r"Laan[ \t]+van|Hof[ \t]+van"
)
_WORD_THEN_NAME = re.compile(
    rf"(?<![\w.'\u2019-])(?P<street>(?:{_BEFORE_WORDS})[ \t]+(?:{_LINK}[ \t]+|[ld]['\u2019])*(?P<name>{_LNAME}),?"
    rf"[ \t]+(?:n\.?[º°o]?[ \t]*|nr\.?[ \t]*|no\.?[ \t]*)?{_NUM}"
    # a flat after the number: "ul. Piotrkowska 69 m. 9", "Paseo de Gràcia 62, 6º izq."
    r"(?:[ \t]+m\.[ \t]*\d{1,4}|,[ \t]*\d{1,2}[º°ª][ \t]*(?:izq|izda|dcha|dch|dra|[A-Za-z])\.?)?)(?![\w])"
)
#: A number first, then a lower-case French street word: "12 rue de la Paix", "5 bis avenue Victor Hugo".
_FRENCH = re.compile(
    rf"(?<![\w.,/-])(?P<street>\d{{1,4}}(?:[ \t]?(?:bis|ter|quater|[A-D])(?![\w]))?,?[ \t]+"
    rf"(?:rue|Rue|avenue|boulevard|bd|Bd|place|allée|Allée|impasse|chemin|Chemin|quai|Quai|route|cours|Cours|"
    rf"square|passage|Passage|faubourg|rond-point)[ \t]+(?:(?:de|du|des|de la|la|le|les)[ \t]+|[ld]['\u2019])*"
    rf"(?P<name>{_LNAME}))"
)
#: Russian and other Cyrillic street lines: "ул. Ленина, д. 5", "проспект Мира 12".
_CYRILLIC = re.compile(
    rf"(?P<street>(?:ул\.|улица|пр\.|пр-т|проспект|пер\.|переулок|наб\.|набережная|бульвар|б-р|ш\.|шоссе|пл\.|"
    rf"площадь|вул\.|вулиця)[ \t]*[{_CY_UP}][{_CY_LO}\-]+(?:[ \t]+[{_CY_UP}][{_CY_LO}\-]+){{0,2}},?[ \t]*"
    rf"(?:д\.|дом|буд\.)?[ \t]*\d{{1,4}}[{_CY_LO}]?(?:[ \t]*,?[ \t]*(?:кв\.|корп\.|стр\.)[ \t]*\d{{1,4}})*)"
)
#: Greek street lines: "Ερμού 25", "Λεωφόρος Βασιλίσσης Σοφίας 12", "οδός Αθηνάς 4".
_GREEK_WORD = rf"[{_GR_UP}][{_GR_LO}]+\.?"
_GREEK = re.compile(
    rf"(?<![\w])(?P<street>(?P<cue>(?:[Οο]δός|[Οο]δ\.|Λεωφόρος|Λεωφ\.|Λ\.|Πλατεία|Πλ\.)[ \t]+)?"
    rf"{_GREEK_WORD}(?:[ \t]+{_GREEK_WORD}){{0,3}}[ \t]+\d{{1,4}}[{_GR_LO}A-Za-z]?)(?![\w])"
)
#: Military mail: "PSC 1234, Box 5678", "Unit 2050 Box 4190", "CMR 480 Box 123".
_MILITARY_BOX = re.compile(
    r"(?<![\w])(?P<street>(?:PSC|CMR|Unit|UNIT|OMC)[ \t]+\d{1,5}[ \t]*,?[ \t]*(?:Box|BOX)[ \t]+\d{1,5}(?:-\d{1,4})?)"
    r"(?![\w])"
)
_MILITARY_PO = re.compile(
    r"(?<![\w])(?P<po>APO|FPO|DPO)[ \t]*,?[ \t]*(?P<area>AE|AP|AA)[ \t]*,?[ \t]*(?P<zip>\d{5}(?:-\d{4})?)\b"
)

#: Postcode then town.  Shaped postcodes (a hyphen, a space inside, letters, a country prefix)
#: stand on their shape; a plain four or five digits needs a known town and a boundary before it.
_TOWN = (
    rf"(?P<town>(?:[{_UP}][{_LO}'\u2019]+|[{_UP}]{{3,}}|[{_GR_UP}][{_GR_LO}]+|[{_GR_UP}]{{3,}}|"
    rf"[{_CY_UP}][{_CY_LO}]+)"
    rf"(?:(?:[ \t]+(?:am|an|im|in|de|sur|sous|la|le|del|di)[ \t]+|[ \t]+|-)(?:[{_UP}][{_LO}'\u2019]+|[{_UP}]{{3,}}|"
    rf"[{_GR_UP}][{_GR_LO}]+|[{_CY_UP}][{_CY_LO}]+)){{0,2}})"
)
_SHAPED_CODE = (
    r"(?:[A-Z]{1,2}-\d{4,5}|\d{2}-\d{3}|\d{4}-\d{3}|\d{3}[ \t]\d{2}|\d{4}[ \t]?[A-Z]{2}(?![\w]))"  # D-80331 ..., NL
)
_POSTCODE_TOWN = re.compile(
    rf"(?<![\w.,/:-])(?P<code>{_SHAPED_CODE}|\d{{4,5}})(?<![ \t])[ \t]{{1,2}}{_TOWN}(?![\w'\u2019])"
)
#: UK ("SW1A 1AA", "M1 1AE", "EC1A1BB") and Canadian ("K1A 0B1") postcodes.
_UK_CA = re.compile(
    r"(?<![\w-])(?P<code>(?:GIR ?0AA|[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}|"
    r"[ABCEGHJ-NPRSTVXY]\d[A-Z][ \t]?\d[A-Z]\d|"
    r"[A-Z]\d{2}[ \t](?=[A-Z\d]{0,3}[A-Z])(?=[A-Z\d]{0,3}\d)[A-Z\d]{4}))(?![\w-])"  # Irish Eircode "D02 X285"
)
#: What may stand right before a plain numeric postcode: a line start, a comma, a tab, a bar, a colon.
_CODE_BOUNDARY = re.compile(r"(?:^|[\n\t|:,;]|\([ \t]*|\b(?:at|to|address|Address))[ \t]*$")
#: A Greek street line is taken without a cue in a note written mostly in another script, or
#: after an address cue ("Address:", "Διεύθυνση:", "lives at").
_ADDRESS_CUE = re.compile(
    r"(?i:address|addr\.?|lives\s+at|living\s+at|resides\s+at|διεύθυνση|adresse|dirección)[ \t:=|]*$"
)
_GREEK_CODE_AFTER = re.compile(r",?[ \t]*(?:T\.?K\.?[ \t]*|Τ\.?Κ\.?[ \t]*)?\d{3}[ \t]?\d{2}(?!\d)")
#: Countries as their own people write them, and the UK's short forms after a comma: "Italia",
#: "Magyarország", "Ελλάδα", ", UK", "the Netherlands".
_ENDONYMS = (
    "Italia|España|Polska|Magyarország|Deutschland|Österreich|Schweiz|Suisse|Svizzera|Nederland|België|Belgique|"
    "Danmark|Sverige|Norge|Suomi|Éire|Česko|Česká republika|Slovensko|România|Hrvatska|Srbija|Türkiye|Brasil|"
    "México|Perú|Ελλάδα|Ελλάς|Κύπρος|България|Россия|Україна|Беларусь|Србија|the Netherlands|"
    "the Czech Republic|the Philippines|United States|United Kingdom"
)
_COUNTRY = re.compile(rf"(?<![\w-])(?P<country>{_ENDONYMS})(?![\w-])|,[ \t]*(?P<uk>UK|U\.K\.|GB|Eire)(?![\w.])")
#: A place in Greek or Cyrillic script after a place word in a Latin-script note ("near Самоков",
#: "the Regional Court in Βύρων", "from Клин"), or before a comma and a country.
_SCRIPT_PLACE = re.compile(
    r"\b(?i:near|in|from|of|at|to|outside|around)[ \t]+"
    r"(?P<place>(?:[\u0386\u0388-\u038f\u0391-\u03ab][\u03ac-\u03ce\u1f00-\u1ffe]+|[\u0400-\u042f][\u0430-\u045f]+)"
    r"(?:[\- ][\u0386\u0388-\u038f\u0391-\u03ab\u0400-\u042f][\u03ac-\u03ce\u1f00-\u1ffe\u0430-\u045f]+)?)(?![\w-])"
)
#: A Hungarian city district: "Budapest XIII. kerület".
_DISTRICT = re.compile(rf"(?<![\w-])(?P<street>{_LWORD}[ \t]+[IVXL]{{1,5}}\.[ \t]*kerület)(?![\w-])")
#: A street and number right before a comma and a postcode: "Egnatia 209, 570 94 Agía Paraskeví".
_STREET_BEFORE_CODE = re.compile(rf"(?P<street>{_LWORD}(?:[ \t]+{_LWORD}){{0,2}}[ \t]+\d{{1,4}}[a-zA-Z]?),[ \t]*$")
#: A British flat or house name before a street number: "Flat 15, 182 Acacia Avenue", "The Old
#: Rectory, 175 Marlborough Road"; and a street of "The" and a name: "7 The Coppice".
_FLAT = re.compile(
    rf"(?<![\w-])(?P<street>(?:Flat|Apartment|Apt\.?|Suite)[ \t]+\d{{1,4}}[A-Z]?|The(?:[ \t]+{_LWORD}){{1,3}})"
    rf"(?=,[ \t]*\d{{1,4}}[a-zA-Z]?[ \t]+[{_UP}])"
)
_THE_STREET = re.compile(rf"(?<![\w.,/-])(?P<street>\d{{1,4}}[a-zA-Z]?[ \t]+The[ \t]+{_LWORD})(?=[ \t]*(?:,|\n|$))")
_PATTERNS = PatternSet([_MILITARY_BOX, _MILITARY_PO, _CYRILLIC])

#: A street name that is an everyday English word is not a street ("Brigade 3", "Gate 12").
_COMMON_ZIPF = 3.5


def _zipf(word: str) -> float:
    f = english_frequencies().get(word.casefold(), 0.0)
    return math.log10(f) + 9 if f > 0 else 0.0


def _common_word(word: str) -> bool:
    return _zipf(word) >= _COMMON_ZIPF


#: Street words that are also English words: the name after (or before) them must not be made of
#: everyday words ("Boarding Gate 12", "Via Email 2", "2 place Foley").
_ENGLISH_STREET_WORDS = frozenset(
    "plaza largo corso ronda strada plac ring gate damm place route square passage cours".split()
)
#: Words after "Via" that name a channel, not a street ("Via Telehealth 2 visits").
_CHANNELS = frozenset(
    "email e-mail phone telephone fax portal video zoom telehealth mychart text sms mail post".split()
)


def _everyday_street(street: str, name: str) -> bool:
    """A match whose street word is an English word and whose name is everyday words or a channel."""
    words = re.findall(r"[^\W\d_]+\.?", street)
    street_words = {w.casefold().rstrip(".") for w in words} & _ENGLISH_STREET_WORDS
    name_words = re.findall(r"[^\W\d_]+", name)
    if any(w.casefold() in _CHANNELS for w in name_words):
        return True
    return bool(street_words) and all(_common_word(w) for w in name_words)


def _is_town(town: str) -> bool:
    return _fold(town).casefold() in load_place_names().tiers


class WorldAddressRecognizer(TideRecognizer):
    """Street lines, military mail and postcodes outside the US (label LOCATION)."""

    name = "tide.addresses"
    version = "1"
    supported_entities = ("LOCATION",)

    def __init__(self, score: float = 0.85):
        self.score = float(score)

    def config(self) -> dict[str, Any]:
        return {"score": self.score, "common_zipf": _COMMON_ZIPF}

    def load(self) -> None:
        load_place_names()
        english_frequencies()

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if entities and "LOCATION" not in entities:
            return []
        spans: list[tuple[int, int]] = []
        streets: list[tuple[int, int]] = []
        if _DIGIT.search(text):
            streets = self._streets(text)
            spans.extend(streets)
            spans.extend(self._military(text))
            spans.extend(self._postcodes(text, streets))
        if not text.isascii():
            if "kerület" in text:
                spans.extend(m.span("street") for m in _DISTRICT.finditer(text))
            spans.extend(m.span("country") if m.group("country") else m.span("uk") for m in _COUNTRY.finditer(text))
            if _mostly_latin(text):
                spans.extend(m.span("place") for m in _SCRIPT_PLACE.finditer(text))
        else:
            spans.extend(m.span("country") if m.group("country") else m.span("uk") for m in _COUNTRY.finditer(text))
        return [
            RecognizerResult("LOCATION", s, e, self.score, {"recognizer_name": self.qualified_name})
            for s, e in _disjoint(spans)
        ]

    def _streets(self, text: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for m in matches_before(_COMPOUND, text, _COMPOUND_ANCHOR, 60):
            word = m.group("word")
            if len(word) >= 6 and not _common_word(word):
                start = m.start("street")
                before = _WORDS_BEFORE.search(text, max(0, start - 60), start)
                if before is not None:
                    words = before.group(0).split()
                    while words and (_common_word(words[0]) or words[0][0].islower()):
                        words.pop(0)  # "Visited Hauptstraße 12", "de Withstraat": no leading everyday or link word
                    if words:
                        start -= len(" ".join(words)) + (len(before.group(0)) - len(before.group(0).rstrip()))
                        start = text.rfind(words[0], max(0, start - 10), m.start("street"))
                out.append((start, m.end("street")))
        for m in _LINE_STREET.finditer(text):  # "Egnatia 23" on a line of its own above a postcode line
            nxt = text[m.end() :].lstrip("\r\n")
            if _POSTCODE_TOWN.match(nxt) or _UK_CA.match(nxt):
                if not all(_common_word(w) for w in re.findall(r"[^\W\d_]+", m.group("street"))):
                    out.append(m.span("street"))
        for rx in (_NAME_THEN_WORD, _WORD_THEN_NAME, _FRENCH):
            matches = matches_before(rx, text, _AFTER_ANCHOR, 100) if rx is _NAME_THEN_WORD else rx.finditer(text)
            for m in matches:
                if _everyday_street(m.group("street"), m.group("name")):
                    continue
                s, e = m.span("street")
                out.append((s, e - 1 if text[e - 1] == "." else e))
        scan = _PATTERNS.scan(text)
        out.extend(m.span("street") for m in scan.finditer(_CYRILLIC))
        for m in _FLAT.finditer(text):
            words = m.group("street").split()[1:]
            if words[0][0].isdigit() or not all(_common_word(w) for w in words):
                out.append(m.span("street"))  # "Flat 15", "The Old Rectory"; not "The Patient, 2 ..."
        for m in _THE_STREET.finditer(text):
            if not _common_word(m.group("street").split()[-1]):
                out.append(m.span("street"))
        for m in _GREEK.finditer(text) if not text.isascii() else ():
            if (
                m.group("cue")
                or _GREEK_CODE_AFTER.match(text, m.end())
                or _ADDRESS_CUE.search(text[max(0, m.start() - 30) : m.start()])
                or _mostly_latin(text)
            ):
                out.append(m.span("street"))
        return out

    @staticmethod
    def _military(text: str) -> list[tuple[int, int]]:
        scan = _PATTERNS.scan(text)
        out = [m.span("street") for m in scan.finditer(_MILITARY_BOX)]
        for m in scan.finditer(_MILITARY_PO):
            out.extend((m.span("po"), m.span("area"), m.span("zip")))
        return out

    @staticmethod
    def _postcodes(text: str, streets: list[tuple[int, int]]) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for m in _POSTCODE_TOWN.finditer(text):
            code, town = m.group("code"), m.group("town")
            plain = code.isdigit()
            if plain:
                before = text[max(0, m.start() - 40) : m.start()]
                after_street = any(
                    0 <= m.start() - e <= 40 and not text[e : m.start()].strip(" \t,;\n") for _, e in streets
                ) or any(0 <= s - m.end() <= 3 and not text[m.end() : s].strip(" \t,") for s, _ in streets)
                if not (_is_town(town) or after_street and not _common_word(town.split()[0])):
                    continue
                if not (_CODE_BOUNDARY.search(before) or after_street):
                    continue
                if len(code) == 4 and code[:2] in ("19", "20") and not after_street and not _is_distinct_town(town):
                    continue  # "2019 Paris" in a list is more likely a year
            elif not (_is_town(town) or not _common_word(town.split()[0])):
                continue
            out.append(m.span("code"))
            out.append(m.span("town"))
            st = _STREET_BEFORE_CODE.search(text, max(0, m.start() - 60), m.start())
            if st is not None and not all(_common_word(w) for w in re.findall(r"[^\W\d_]+", st.group("street"))):
                out.append(st.span("street"))
        for m in _UK_CA.finditer(text):
            code = m.group("code")
            if " " in code or "\t" in code or any(c.isdigit() for c in code[-3:-2]):
                out.append(m.span("code"))
        return out


def _is_distinct_town(town: str) -> bool:
    return load_place_names().tiers.get(_fold(town).casefold()) == "distinctive"


def _mostly_latin(text: str) -> bool:
    """More than twice as many ASCII letters as Greek ones."""
    return len(_ASCII_LETTER.findall(text)) > 2 * len(_GREEK_LETTER.findall(text))


_ASCII_LETTER = re.compile("[A-Za-z]")
_GREEK_LETTER = re.compile("[\u0370-\u03ff\u1f00-\u1fff]")
_DIGIT = re.compile(r"\d")


def _disjoint(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest spans first, overlapping shorter ones dropped; in text order."""
    taken: list[tuple[int, int]] = []
    for s, e in sorted(set(spans), key=lambda x: (-(x[1] - x[0]), x[0])):
        if e > s and all(e <= a or s >= b for a, b in taken):
            taken.append((s, e))
    return sorted(taken)
