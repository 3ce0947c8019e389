"""Surface forms of the "world" OOG corpus: European and Cyrillic/Greek names, local addresses, phones,
national id shapes, case numbers, dates in words and in local languages, firms and facilities.

Every value is random and only shape-plausible (no real identifier, no real person).
"""

from __future__ import annotations

import datetime as dt
import random
import string
from dataclasses import dataclass

from benchmarks.oog.builder import Pieces
from benchmarks.oog.world_vocab import COUNTRY_NAMES, WorldVocab, script_of

LOC, DATE, ID, PHONE = "LOCATION", "DATE", "ID", "PHONE"

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October"]
MONTHS += ["November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ORDINAL_WORDS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "twenty-first",
    "twenty-second",
    "twenty-third",
    "twenty-fourth",
    "twenty-fifth",
    "twenty-sixth",
    "twenty-seventh",
    "twenty-eighth",
    "twenty-ninth",
    "thirtieth",
    "thirty-first",
]
_UNITS = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
_UNITS += ["thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

#: Month names in the local language (genitive where the language uses it in dates).
LOCAL_MONTHS = {
    "DE": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "FR": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "ES": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "IT": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "NL": "januari februari maart april mei juni juli augustus september oktober november december",
    "HU": "január február március április május június július augusztus szeptember október november december",
    "GR": "Ιανουαρίου Φεβρουαρίου Μαρτίου Απριλίου Μαΐου Ιουνίου Ιουλίου Αυγούστου Σεπτεμβρίου Οκτωβρίου "
    "Νοεμβρίου Δεκεμβρίου",
    "PL": "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia",
    "UA": "січня лютого березня квітня травня червня липня серпня вересня жовтня листопада грудня",
}

SAINTS = ["Brigid", "Columba", "Vincent", "Elisabeth", "Joseph", "Anne", "Luke", "Hedwig", "Stephen", "Rafael"]
#: Saints' names as facilities in each country spell them.
LOCAL_SAINTS = {
    "DE": ["Josef", "Marien", "Elisabeth", "Vinzenz", "Hedwig"],
    "FR": ["Luc", "Jean", "Michel", "Joseph", "Vincent"],
    "ES": ["Rafael", "Pedro", "Juan de Dios", "Jorge", "Carlos"],
    "IT": ["Giovanni", "Camillo", "Paolo", "Carlo", "Raffaele"],
    "HU": ["István", "János", "Margit", "Imre", "Rókus"],
    "PL": ["Jana Pawła II", "św. Jadwigi", "św. Łukasza", "Mikołaja Kopernika"],
}
BRANDS = ["Vantrix", "Zelmora", "Quorvia", "Brendle", "Osmark", "Kalvio", "Trusk", "Nordweave", "Pellucid", "Ardano"]
ORG_WORDS = ["Northgate", "Riverside", "Blackthorn", "Lindenhof", "Meridian", "Alder", "Kestrel", "Harbourview"]


@dataclass
class WPerson:
    first: str
    last: str
    sex: str
    cc: str
    middle: str | None = None  # an initial ("T") or a second given name
    suffix: str | None = None  # Jr, II, III
    nickname: str | None = None

    @property
    def script(self) -> str:
        return script_of(self.first + self.last)


class WorldFake:
    def __init__(self, rng: random.Random, v: WorldVocab) -> None:
        self.r = rng
        self.v = v

    # -- generic ---------------------------------------------------------------------------------
    def fill(self, pat: str, letters: str = "ABCDEFGHJKLMNPRSTUVWXYZ") -> str:
        """``#`` a digit, ``N`` a digit 1-9, ``@`` a capital letter from ``letters``."""
        out = []
        for ch in pat:
            if ch == "#":
                out.append(self.r.choice(string.digits))
            elif ch == "N":
                out.append(self.r.choice("123456789"))
            elif ch == "@":
                out.append(self.r.choice(letters))
            else:
                out.append(ch)
        return "".join(out)

    def cc(self, with_cyrillic: bool = True) -> str:
        pool = list(COUNTRY_NAMES) if with_cyrillic else [c for c in COUNTRY_NAMES if c not in ("UA", "RU", "BG")]
        return self.r.choice(pool)

    def town(self, cc: str, script: str | None = None) -> str:
        towns = self.v.towns[cc]
        if script:
            same = [t for t in towns if script_of(t) == script]
            towns = tuple(same) or towns
        return self.r.choice(towns)

    def country(self, cc: str) -> str:
        eng, native = COUNTRY_NAMES[cc]
        return native if self.r.random() < 0.25 else eng

    # -- people ----------------------------------------------------------------------------------
    def person(self, cc: str, sex: str | None = None, script: str | None = None, last: str | None = None) -> WPerson:
        r = self.r
        sex = sex or r.choice("MF")
        if cc == "US":
            first = r.choice(self.v.us_given)
            surname = last or r.choice(self.v.us_family)
            p = WPerson(first, surname, sex, cc)
            if r.random() < 0.5:
                p.middle = r.choice("ABCDEFGHJKLMNPRSTW")
            if r.random() < 0.15:
                p.suffix = r.choice(["Jr.", "Jr", "II", "III", "Sr."])
            return p
        pool = self.v.given_m[cc] if sex == "M" else self.v.given_f[cc]
        if script is None and cc in ("GR", "UA", "RU", "BG"):
            script = r.choice(["latin", "native"])
        if script == "native":
            script = "greek" if cc == "GR" else "cyrillic"
        if script:
            pool = tuple(n for n in pool if script_of(n) == script) or pool
        first = r.choice(pool)
        sc = script_of(first)
        if last is None:
            forms = [s for s in self.v.surnames[cc] if script_of(s[0]) == sc] or list(self.v.surnames[cc])
            m, f = r.choice(forms)
            last = m if sex == "M" else f
            if cc == "ES" and " " not in last and r.random() < 0.6:
                m2, _ = r.choice(forms)
                last = f"{last} {m2}"
        p = WPerson(first, last, sex, cc)
        x = r.random()
        if x < 0.12 and sc == "latin":
            p.middle = r.choice("ABCDEFGHJKLMNPRSTW")
        elif x < 0.2 and sc == "latin" and cc in ("GB", "IE", "NL", "DE"):
            p.middle = r.choice(self.v.given_m[cc] if sex == "M" else self.v.given_f[cc])
        if sc == "latin" and cc in ("GB", "IE") and r.random() < 0.05:
            p.nickname = r.choice(["Bunny", "Jock", "Mags", "Tiny", "Spud", "Dolly", "Nell", "Bertie"])
        return p

    def relative(self, p: WPerson, sex: str | None = None) -> WPerson:
        """A relative sharing ``p``'s surname (in the right gender form where the language has one)."""
        sex = sex or self.r.choice("MF")
        last = p.last
        for m, f in self.v.surnames.get(p.cc, ()):
            if p.last in (m, f):
                last = m if sex == "M" else f
        if p.cc == "US":
            return self.person("US", sex, last=last)
        return self.person(p.cc, sex, script=p.script, last=last)

    def name(self, p: WPerson, style: str | None = None) -> str:
        r = self.r
        style = style or r.choice(["full", "full", "full", "first", "last", "init_last", "upper_last_first"])
        first = p.first
        if style == "full" and p.cc == "HU" and r.random() < 0.7:
            style = "family_first"
        if style == "init_last":
            parts = first.split("-")
            return "-".join(x[0] + "." for x in parts) + " " + p.last
        if style == "first":
            return first
        if style == "last":
            return p.last
        if style == "upper_last_first":
            return f"{p.last.upper()} {first}" if all(len(c.upper()) == 1 for c in p.last) else f"{p.last} {first}"
        if style == "last_comma_first":
            return f"{p.last}, {first}"
        if style == "family_first":
            return f"{p.last} {first}"
        mid = ""
        if p.middle:
            mid = f" {p.middle}." if len(p.middle) == 1 else f" {p.middle}"
        nick = f' "{p.nickname}"' if p.nickname and r.random() < 0.6 else ""
        suf = f" {p.suffix}" if p.suffix else ""
        return f"{first}{mid}{nick} {p.last}{suf}"

    @staticmethod
    def title(p: WPerson) -> str:
        if p.cc in ("DE",):
            return "Herr " if p.sex == "M" else "Frau "
        if p.cc == "FR":
            return "M. " if p.sex == "M" else "Mme "
        return "Mr " if p.sex == "M" else "Ms "

    # -- dates -----------------------------------------------------------------------------------
    def date_en(self, d: dt.date, style: str | None = None) -> str:
        r = self.r
        styles = ["dmy", "dmy", "ord_my", "mdy", "words", "weekday_dmy", "dmy_num", "day_of", "iso", "dm"]
        style = style or r.choice(styles)
        m, w = MONTHS[d.month - 1], WEEKDAYS[d.weekday()]
        ordn = f"{d.day}{'th' if 10 <= d.day <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(d.day % 10, 'th')}"
        if style == "dmy":
            return f"{d.day} {m} {d.year}"
        if style == "ord_my":
            return f"{ordn} {m} {d.year}" if r.random() < 0.6 else f"{ordn} of {m} {d.year}"
        if style == "mdy":
            return f"{m} {d.day}, {d.year}"
        if style == "words":
            return (
                f"{ORDINAL_WORDS[d.day - 1]} of {m} {d.year}"
                if r.random() < 0.7
                else f"{ORDINAL_WORDS[d.day - 1]} of {m}"
            )
        if style == "weekday_dmy":
            return r.choice([f"{w}, {d.day} {m} {d.year}", f"{w} {d.day} {m}", f"{w} {ordn} {m}", f"{w}, {m} {d.day}"])
        if style == "dmy_num":
            return r.choice(
                [
                    f"{d.day:02d}/{d.month:02d}/{d.year}",
                    f"{d.day}.{d.month}.{d.year}",
                    f"{d.day}/{d.month}/{d.year % 100:02d}",
                ]
            )
        if style == "day_of":
            y = self.year_words(d.year) if r.random() < 0.4 else str(d.year)
            return f"{ordn if r.random() < 0.5 else ORDINAL_WORDS[d.day - 1]} day of {m}, {y}"
        if style == "iso":
            return d.isoformat()
        if style == "dm":
            return r.choice([f"{d.day} {m}", f"{m} {d.day}", f"{d.day} {m[:3]}"])
        if style == "my":
            return f"{m} {d.year}"
        raise ValueError(style)

    @staticmethod
    def year_words(y: int) -> str:
        rest = y - 2000
        if rest < 0:
            return str(y)
        if rest == 0:
            return "two thousand"
        if rest < 20:
            return f"two thousand and {_UNITS[rest]}"
        t, u = divmod(rest, 10)
        return f"two thousand and {_TENS[t]}" + (f"-{_UNITS[u]}" if u else "")

    def date_local(self, d: dt.date, cc: str) -> str:
        """A date as written in ``cc``'s language (English style for GB/IE and unknown)."""
        months = LOCAL_MONTHS.get(cc)
        if not months:
            return self.date_en(d, self.r.choice(["dmy", "dmy_num", "ord_my"]))
        m = months.split()[d.month - 1]
        numeric = self.r.random() < 0.3
        if cc == "DE":
            return f"{d.day:02d}.{d.month:02d}.{d.year}" if numeric else f"{d.day}. {m} {d.year}"
        if cc == "FR":
            return (
                f"{d.day:02d}/{d.month:02d}/{d.year}" if numeric else f"{'1er' if d.day == 1 else d.day} {m} {d.year}"
            )
        if cc == "ES":
            return f"{d.day}/{d.month}/{d.year}" if numeric else f"{d.day} de {m} de {d.year}"
        if cc == "IT":
            return f"{d.day:02d}/{d.month:02d}/{d.year}" if numeric else f"{d.day} {m} {d.year}"
        if cc == "NL":
            return f"{d.day}-{d.month}-{d.year}" if numeric else f"{d.day} {m} {d.year}"
        if cc == "HU":
            return f"{d.year}.{d.month:02d}.{d.day:02d}." if numeric else f"{d.year}. {m} {d.day}."
        if cc == "PL":
            return f"{d.day:02d}.{d.month:02d}.{d.year}" if numeric else f"{d.day} {m} {d.year}"
        return f"{d.day}.{d.month}.{d.year}" if numeric else f"{d.day} {m} {d.year}"

    # -- addresses -------------------------------------------------------------------------------
    def street_line(self, cc: str, script: str | None = None) -> str:
        r = self.r
        streets = self.v.streets[cc]
        if script:
            streets = tuple(s for s in streets if script_of(s) == script) or streets
        st = r.choice(streets)
        n = r.randint(1, 240)
        if cc in ("GB", "IE"):
            flat = r.choice(
                ["", "", "", f"Flat {r.randint(1, 24)}, ", f"Apt {r.randint(1, 40)}, ", "The Old Rectory, "]
            )
            return f"{flat}{n} {st}"
        if cc == "FR":
            return f"{n}{r.choice(['', '', ' bis', ' ter'])} {st}"
        if cc == "ES":
            sep = ", " if st.startswith("C/") else " "
            return f"{st}{sep}{n}" + r.choice(
                ["", f", {r.randint(1, 9)}º {r.choice('ABCD')}", f", {r.randint(1, 6)}º izq."]
            )
        if cc == "IT":
            return f"{st}{r.choice([' ', ', '])}{n}" + r.choice(["", "", "/B", f", int. {r.randint(1, 20)}"])
        if cc == "NL":
            return f"{st} {n}" + r.choice(["", "", "-II", " bis", f"-{r.randint(1, 3)}", " A"])
        if cc == "HU":
            return f"{st} {n}." + r.choice(["", "", f" {r.choice(['I', 'II', 'III', 'IV'])}. em. {r.randint(1, 12)}."])
        if cc == "PL":
            return f"{st} {n}" + r.choice(
                ["", f"/{r.randint(1, 90)}", f" m. {r.randint(1, 60)}", f"/{r.randint(2, 20)} m. {r.randint(1, 9)}"]
            )
        if cc == "DE":
            return f"{st} {n}" + r.choice(["", "", "a", f"-{n + 2}"])
        return f"{st} {n}"

    def postcode(self, cc: str) -> str:
        r = self.r
        if cc == "GB":
            return self.fill(r.choice(["@# #@@", "@@# #@@", "@@## #@@", "@#@ #@@", "@@#@ #@@"]))
        if cc == "IE":
            return self.fill("@## ") + self.fill("@#@#" if r.random() < 0.5 else "@@##", "ACDEFHKNPRTVWXY")
        if cc in ("DE", "FR", "ES", "IT"):
            return self.fill("N####")
        if cc == "NL":
            return self.fill("N### @@" if r.random() < 0.8 else "N###@@")
        if cc == "HU":
            return self.fill("N###")
        if cc == "GR":
            return self.fill("N## ##" if r.random() < 0.7 else "N####")
        if cc == "PL":
            return self.fill("##-###")
        return self.fill("#####")

    def address(self, cc: str, one_line: bool | None = None, country: bool | None = None) -> Pieces:
        r = self.r
        one_line = r.random() < 0.6 if one_line is None else one_line
        sep = ", " if one_line else "\n"
        script = None
        if cc == "GR":
            script = r.choice(["greek", "latin"])
        line = self.street_line(cc, script)
        town = self.town(cc, script)
        pc = self.postcode(cc)
        out: Pieces
        if cc == "GB":
            out = [(line, LOC), (sep, None), (town.upper() if r.random() < 0.3 else town, LOC), (sep, None), (pc, LOC)]
        elif cc == "IE":
            out = [(line, LOC), (sep, None), (town, LOC)]
            if r.random() < 0.5:
                county = r.choice(
                    ["Kerry", "Cork", "Mayo", "Galway", "Donegal", "Clare", "Wexford", "Wicklow", "Meath"]
                )
                out += [(sep + "Co. ", None), (county, LOC)]
            out += [(sep, None), (pc, LOC)]
        elif cc == "HU" and r.random() < 0.6:
            out = [(pc, LOC), (" ", None), (town, LOC), (", ", None), (line, LOC)]
        elif cc == "IT":
            out = [(line, LOC), (sep, None), (pc, LOC), (" ", None), (town, LOC)]
            if r.random() < 0.5:
                out += [(" (", None), (self.fill("@@"), LOC), (")", None)]
        elif cc == "GR" and r.random() < 0.3:
            out = [(line, LOC), (sep, None), ("Τ.Κ. " if script == "greek" else "T.K. ", None), (pc, LOC)]
            out += [(" ", None), (town, LOC)]
        else:
            out = [
                (line, LOC),
                (sep, None),
                (pc, LOC),
                (" ", None),
                (town.upper() if cc == "FR" and r.random() < 0.4 else town, LOC),
            ]
        if country if country is not None else r.random() < 0.3:
            out += [(sep, None), (self.country(cc), LOC)]
        return out

    def military_address(self) -> Pieces:
        r = self.r
        kind = r.choice(["APO", "APO", "FPO", "DPO"])
        region = r.choice(["AE", "AP", "AA"])
        zp = {"AE": "09", "AP": "96", "AA": "340"}[region]
        zp += self.fill("###" if region != "AA" else "##")
        if r.random() < 0.3:
            zp += "-" + self.fill("####")
        line = r.choice(
            [
                f"PSC {r.randint(100, 9999)}, Box {r.randint(1, 9999)}",
                f"Unit {r.randint(1000, 9999)} Box {r.randint(1, 9999)}",
                f"CMR {r.randint(400, 499)}, Box {r.randint(100, 9999)}",
                f"USS {r.choice(['Halberd', 'Cormorant', 'Tallgrass', 'Vigilant'])} (DDG {r.randint(50, 130)})",
            ]
        )
        sep = r.choice([", ", "\n", " "])
        return [(line, LOC), (sep, None), (kind, LOC), (" ", None), (region, LOC), (" ", None), (zp, LOC)]

    # -- phones ----------------------------------------------------------------------------------
    _PHONES = {
        "GB": (
            ["020 #### ####", "0161 ### ####", "07### ######", "01### ######", "0113 ### ####", "(01632) ######"],
            ["+44 20 #### ####", "+44 (0)7### ######", "+447#########", "0044 161 ### ####"],
        ),
        "IE": (
            ["01 ### ####", "08N ### ####", "(021) ### ####", "08N#######"],
            ["+353 8N ### ####", "+353 (0)1 ### ####"],
        ),
        "DE": (
            ["030 #######", "030/########", "0151 ########", "0151-#######", "(089) ### ## ##", "0221 ## ## ###"],
            ["+49 30 #######", "+49 (0)151 ########", "0049 89 ########", "+49 221 ######"],
        ),
        "FR": (
            ["0N ## ## ## ##", "0N.##.##.##.##", "0N########", "06 ## ## ## ##"],
            ["+33 N ## ## ## ##", "+33 (0)N ## ## ## ##", "0033 N########"],
        ),
        "ES": (["9## ### ###", "6## ## ## ##", "6########", "9## ## ## ##"], ["+34 6## ### ###", "0034 9## ## ## ##"]),
        "IT": (
            ["06 #### ####", "02-########", "3## ### ####", "3#########", "0## ######"],
            ["+39 3## ### ####", "+39 06 ########"],
        ),
        "NL": (
            ["020-#######", "06-########", "06 ## ## ## ##", "(010) ### ## ##"],
            ["+31 6 ########", "+31 (0)20 ### ####"],
        ),
        "HU": (
            ["06 1 ### ####", "06-30/###-####", "(06-20) ### ####", "06 70 ### ## ##"],
            ["+36 30 ### ####", "+36-1-###-####", "0036 70 ### ####"],
        ),
        "GR": (
            ["210 #######", "210 ### ####", "69N ### ####", "69N#######", "2310 ######"],
            ["+30 210 ### ####", "+30 69N #######"],
        ),
        "PL": (
            ["22 ### ## ##", "(22) ###-##-##", "5## ### ###", "6##-###-###", "12 ### ## ##"],
            ["+48 5## ### ###", "+48 22 ### ## ##"],
        ),
        "XX": (
            ["## ### ###", "0### ### ## ##", "(##) ###-###", "### ## ## ##"],
            ["+### ## ### ####", "00### # ### ####"],
        ),
    }

    def phone(self, cc: str, intl: bool | None = None) -> str:
        nat, world = self._PHONES.get(cc, self._PHONES["XX"])
        intl = self.r.random() < 0.35 if intl is None else intl
        return self.fill(self.r.choice(world if intl else nat))

    # -- identifiers -----------------------------------------------------------------------------
    def national_id(self, cc: str) -> tuple[str, str]:
        """(cue, value): a national identifier of ``cc``'s shape; random digits, never a real one."""
        r = self.r
        f = self.fill
        opts: dict[str, list[tuple[str, str]]] = {
            "GB": [
                ("National Insurance number", f("@@ ## ## ## @", "ABCEGHJKLMNPRSTWXYZ")),
                ("NI No.", f("@@######@", "ABCEGHJKLMNPRSTWXYZ")),
                ("NHS number", f("N## ### ####")),
            ],
            "IE": [("PPS number", f("#######@") + r.choice(["", "A", "W"])), ("PPSN", f("#######@@"))],
            "DE": [
                ("Steuer-ID", f("N# ### ### ###")),
                ("Personalausweis-Nr.", f("@########", "CFGHJKLMNPRTVWXYZ")),
                ("Sozialversicherungsnummer", f("## ###### @ ###")),
            ],
            "FR": [
                ("numéro de sécurité sociale", f(r.choice("12") + " ## ## ## ### ### ##")),
                ("NIR", f(r.choice("12") + "##############")),
            ],
            "ES": [
                ("DNI", f("########-@", "TRWAGMYFPDXBNJZSQVHLCKE")),
                ("NIE", f(r.choice("XYZ") + "#######@")),
                ("DNI", f("########@")),
            ],
            "IT": [("codice fiscale", f("@@@@@@##@##@###@")), ("carta d'identità n.", f("CA#####@@"))],
            "NL": [("BSN", f("N########")), ("burgerservicenummer", f("####.##.###"))],
            "HU": [
                ("TAJ szám", f("### ### ###")),
                ("személyi szám", f(r.choice("12") + "-######-####")),
                ("adóazonosító jel", f("8#########")),
            ],
            "GR": [
                ("AMKA", f("###########")),
                ("ΑΦΜ", f("N########")),
                ("ΑΔΤ", f("@@ ######", "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ")),
                ("identity card no.", f("@-######", "ΑΒΕΖΗΚΜΝΡΤΧ")),
            ],
            "PL": [("PESEL", f("###########")), ("dowód osobisty nr", f("@@@ ######")), ("NIP", f("###-###-##-##"))],
            "UA": [("паспорт", f("@@ ######", "АВЕКМНОРСТХ")), ("РНОКПП", f("N#########"))],
            "RU": [("паспорт", f("## ## ######")), ("СНИЛС", f("###-###-### ##"))],
            "BG": [("ЕГН", f("##########"))],
        }
        return r.choice(opts.get(cc, opts["GB"]))

    def case_number(self, cc: str) -> tuple[str, str]:
        """(cue, value): court, tribunal, police or file references with slashes."""
        r = self.r
        f = self.fill
        y2 = f"{r.randint(3, 23):02d}"
        y4 = str(r.randint(2003, 2023))
        generic = [
            ("application no.", f"N####/{y2}"),
            ("case no.", "##/N#####"),
            ("file ref.", f"0#####/{y2}"),
            ("incident number", "N#/######"),
            ("our ref:", f"@@/N###/{y2}"),
        ]
        local = {
            "GB": [("Claim No.", "@##@@###"), ("Case Number:", f"N######/{y4}"), ("crime reference", f"##/N####/{y2}")],
            "IE": [("Record No.", f"{y4}/{r.randint(10, 9999)} P"), ("Case Ref.", f"{y4}/N###")],
            "DE": [
                ("Az.", f"{r.randint(1, 40)} {r.choice(['O', 'C', 'Ca', 'K', 'Js'])} {r.randint(1, 999)}/{y2}"),
                ("Aktenzeichen", f"N## Js ####/{y2}"),
            ],
            "FR": [("RG n°", f"{y2}/N####"), ("dossier n°", f"{y4}/N##")],
            "ES": [("procedimiento n.º", f"N##/{y4}"), ("autos n.º", f"N###/{y4}")],
            "IT": [("R.G. n.", f"N###/{y4}"), ("sentenza n.", f"N##/{y4}")],
            "NL": [("zaaknummer", f"C/{r.randint(1, 19):02d}/N#####"), ("parketnummer", f"##/N#####-{y2}")],
            "HU": [
                (
                    "ügyszám:",
                    f"{r.randint(1, 40)}.{r.choice(['P', 'B', 'Pf', 'K'])}.{r.randint(20, 99)}.N##/{y4}"
                    + f"/{r.randint(1, 9)}",
                )
            ],
            "GR": [("αριθ.", f"N###/{y4}"), ("no.", f"N###/{y4}")],
            "PL": [
                (
                    "sygn. akt",
                    f"{r.choice(['I', 'II', 'III', 'IV', 'VIII'])} {r.choice(['K', 'C', 'Ca', 'RC'])} "
                    + f"{r.randint(1, 999)}/{y2}",
                )
            ],
        }
        cue, pattern = r.choice(generic + local.get(cc, []))
        return cue, f(pattern)

    def iban(self, cc: str) -> str:
        shapes = {
            "GB": "GB## @@@@ #### #### #### ##",
            "IE": "IE## @@@@ #### #### #### ##",
            "DE": "DE## #### #### #### #### ##",
            "FR": "FR## #### #### #### #### #### ###",
            "ES": "ES## #### #### #### #### ####",
            "IT": "IT## @### ##### ############",
            "NL": "NL## @@@@ #### #### ##",
            "HU": "HU## #### #### #### #### #### ####",
            "GR": "GR## #### #### #### #### #### ###",
            "PL": "PL## #### #### #### #### #### ####",
        }
        shape = shapes.get(cc, shapes["DE"])
        s = shape[:2] + self.fill(shape[2:])  # the country letters stay literal
        return s.replace(" ", "") if self.r.random() < 0.25 else s

    def plate(self, cc: str) -> str:
        shapes = {
            "GB": "@@## @@@",
            "IE": "##-@-####",
            "DE": "@-@@ ###",
            "FR": "@@-###-@@",
            "ES": "#### @@@",
            "IT": "@@ ###@@",
            "NL": "##-@@@-#",
            "HU": "@@@-###",
            "GR": "@@@-####",
            "PL": "@@ #####",
        }
        return self.fill(shapes.get(cc, "@@ ####"), "BCDFGHJKLMNPRSTVWXYZ")

    # -- organisations ---------------------------------------------------------------------------
    def firm(self, cc: str) -> str:
        r = self.r
        s = [r.choice(self.v.surnames[cc])[0] for _ in range(3)]
        if script_of("".join(s)) != "latin":
            s = [r.choice(self.v.surnames["DE"])[0] for _ in range(3)]
        legal = {
            "GB": ["Ltd", "LLP", "plc", "Solicitors"],
            "IE": ["Ltd", "DAC", "Solicitors", "& Co."],
            "DE": ["GmbH", "GmbH & Co. KG", "AG", "mbB"],
            "FR": ["SARL", "SAS", "S.A."],
            "ES": ["S.L.", "S.A."],
            "IT": ["S.r.l.", "S.p.A.", "s.n.c."],
            "NL": ["B.V.", "N.V."],
            "HU": ["Kft.", "Zrt.", "Bt."],
            "GR": ["Α.Ε.", "Ε.Π.Ε.", "S.A."],
            "PL": ["Sp. z o.o.", "S.A.", "sp.j."],
        }.get(cc, ["Ltd"])
        return r.choice(
            [
                f"{s[0]}, {s[1]} and {s[2]}",
                f"{s[0]}, {s[1]} & {s[2]}",
                f"{s[0]} & {s[1]} {r.choice(legal)}",
                f"{s[0]} {r.choice(legal)}",
                f"{s[0]} {r.choice(['Holdings', 'Group', 'Partners', 'Brothers'])}, {r.choice(legal)}",
                f"{r.choice(BRANDS)}",
                f"{r.choice(BRANDS)} {r.choice(legal)}",
                f"{r.choice(ORG_WORDS)} {r.choice(['Logistics', 'Haulage', 'Analytics', 'Bakeries', 'Timber'])} "
                + r.choice(legal),
            ]
        )

    def association(self, cc: str) -> str:
        r = self.r
        town = self.town(cc, "latin" if cc in ("GR", "UA", "RU", "BG") else None)
        return r.choice(
            [
                f"{town} Residents' Association",
                f"{town} Rowing Club",
                f"Friends of {town} Library",
                f"St {r.choice(SAINTS)}'s National School",
                f"{town} Allotment Society",
                f"{r.choice(ORG_WORDS)} Housing Co-operative",
                f"{town} Volunteer Fire Brigade",
            ]
        )

    def facility(self, cc: str) -> str:
        r = self.r
        t = self.town(cc, "latin" if cc not in ("GR",) or r.random() < 0.5 else "greek")
        saint = r.choice(LOCAL_SAINTS.get(cc, SAINTS))
        greek = script_of(t) == "greek"
        by_cc = {
            "GB": [
                f"{t} Royal Infirmary",
                f"{t} General Hosp.",
                f"St {saint}'s Hospital",
                f"{t} Community Health CTR",
                f"{t} General Hospital, {r.choice(['North', 'West', 'Riverside'])} Campus",
                f"{t} Univ. Hosp.",
            ],
            "IE": [f"St {saint}'s University Hospital", f"{t} Regional Hospital", f"{t} Primary Care Centre"],
            "DE": [f"Klinikum {t}", f"Universitätsklinikum {t}", f"St.-{saint}-Krankenhaus", f"Kreiskrankenhaus {t}"],
            "FR": [f"CHU de {t}", f"Centre hospitalier de {t}", f"Clinique Saint-{saint}"],
            "ES": [f"Hospital Universitario de {t}", f"Centro de Salud {t} Centro", f"Hospital Clínico San {saint}"],
            "IT": [f"Ospedale Civile di {t}", f"Policlinico di {t}", f"Azienda Ospedaliera San {saint}"],
            "NL": [f"{t} Medisch Centrum", f"Ziekenhuis {t}", f"{t} MC, locatie Zuid"],
            "HU": [f"{t} Megyei Kórház", f"Szent {saint} Kórház", f"{t} Városi Rendelőintézet"],
            "GR": [
                f"Γενικό Νοσοκομείο {t}" if greek else f"General Hospital of {t}",
                f"Πανεπιστημιακό Νοσοκομείο {t}" if greek else f"{t} University Hospital",
            ],
            "PL": [f"Szpital Wojewódzki w {t}", f"Szpital Miejski im. {saint} w {t}", f"Centrum Medyczne {t}"],
        }
        return r.choice(by_cc.get(cc, [f"{t} City Hospital No. {r.randint(1, 12)}", f"{t} Regional Clinical Hospital"]))

    # -- hard negatives (never PHI) --------------------------------------------------------------
    def money(self, cc: str) -> str:
        r = self.r
        n = r.choice([r.randint(2, 99) * 50, r.randint(1, 90) * 1000, r.randint(100, 9999)])
        cur = {"GB": "£", "HU": "HUF ", "PL": "PLN "}.get(cc, "€")
        return r.choice(
            [
                f"{cur}{n:,}",
                f"EUR {n:,}",
                f"{n:,} euros",
                f"{n:,}".replace(",", " ") + (" zł" if cc == "PL" else " Ft" if cc == "HU" else " €"),
                f"{cur}{n:,}.{r.randint(0, 99):02d}",
                f"{r.randint(1, 9)}.{r.randint(1, 9)} million euros",
            ]
        )

    def measure(self) -> str:
        r = self.r
        return r.choice(
            [
                f"{r.randint(1, 40)}.{r.randint(1, 9)} km",
                f"{r.randint(40, 130)} kg",
                f"1.{r.randint(50, 99)} m",
                f"{r.randint(20, 180)} m²",
                f"{r.randint(30, 180)} km/h",
                f"{r.randint(2, 60)} per cent",
                f"{r.randint(2, 60)}%",
                f"0.{r.randint(2, 9)} g/l",
                f"{r.randint(2, 40)} hectares",
            ]
        )

    def statute(self) -> str:
        r = self.r
        return r.choice(
            [
                f"Article {r.randint(2, 14)} § {r.randint(1, 4)} of the Convention",
                f"Article {r.randint(1, 3)} of Protocol No. 1",
                f"section {r.randint(1, 120)}({r.randint(1, 6)}) of the Act",
                "Regulation (EU) 2016/679",
                "Directive 2004/38/EC",
                f"Law no. {r.randint(10, 400)}/{r.randint(1995, 2015)}",
                f"Rule {r.randint(30, 60)} of the Rules of Court",
                f"paragraph {r.randint(5, 60)} above",
            ]
        )
