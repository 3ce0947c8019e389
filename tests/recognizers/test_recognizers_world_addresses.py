"""``tide.addresses``: street lines, military mail and postcodes written outside the US."""

from __future__ import annotations

import pytest

from tide_core.config import rules_specs
from tide_core.recognizers.registry import create

ADDR = create({"name": "tide.addresses"})


def _found(text: str) -> list[str]:
    return [text[r.start : r.end] for r in ADDR.analyze(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        # Hungarian: name, street word, number with its dot; postcode then town
        ("Lakcím: Kossuth Lajos u. 15., 1051 Budapest", ["Kossuth Lajos u. 15", "1051", "Budapest"]),
        ("lives at Andrássy út 60. since 2019", ["Andrássy út 60"]),
        ("Váci utca 12/B, 2. emelet", ["Váci utca 12/B"]),
        # German, Dutch, Scandinavian: the street word ends a compound or follows the name
        ("Hauptstraße 12, 80331 München", ["Hauptstraße 12", "80331", "München"]),
        ("Berliner Straße 12a\nD-10715 Berlin", ["Berliner Straße 12a", "D-10715", "Berlin"]),
        ("Keizersgracht 123\n1015 CJ Amsterdam", ["Keizersgracht 123", "1015 CJ", "Amsterdam"]),
        ("Storgatan 5, 114 55 Stockholm", ["Storgatan 5", "114 55", "Stockholm"]),
        ("Nørregade 7, 1165 København K", ["Nørregade 7", "1165", "København"]),
        # French, Spanish, Italian, Portuguese, Polish
        ("12 rue de la Paix, 75002 Paris", ["12 rue de la Paix", "75002", "Paris"]),
        ("domicile: 5 bis avenue Victor Hugo", ["5 bis avenue Victor Hugo"]),
        ("Calle Mayor 5, 28013 Madrid", ["Calle Mayor 5", "28013", "Madrid"]),
        ("Via Roma 10, 00184 Roma", ["Via Roma 10", "00184", "Roma"]),
        ("Avenida Paulista, 1578", ["Avenida Paulista, 1578"]),
        ("ul. Marszałkowska 10, 00-950 Warszawa", ["ul. Marszałkowska 10", "00-950", "Warszawa"]),
        # Greek and Cyrillic script
        ("Ερμού 25, 105 63 Αθήνα", ["Ερμού 25", "105 63", "Αθήνα"]),
        ("Address: Λεωφόρος Βασιλίσσης Σοφίας 12", ["Λεωφόρος Βασιλίσσης Σοφίας 12"]),
        ("ул. Ленина, д. 5", ["ул. Ленина, д. 5"]),
        # military mail: the box line whole; post office, area and ZIP apart
        ("PSC 1234, Box 5678\nAPO AE 09123", ["PSC 1234, Box 5678", "APO", "AE", "09123"]),
        ("Unit 2050 Box 4190, FPO AP 96349", ["Unit 2050 Box 4190", "FPO", "AP", "96349"]),
        ("CMR 480 Box 123, DPO AE 09498-0001", ["CMR 480 Box 123", "DPO", "AE", "09498-0001"]),
        # British flats, house names and "The" streets; Irish Eircodes; countries as written locally
        ("Flat 15, 182 Acacia Avenue", ["Flat 15"]),
        ("house at The Old Rectory, 175 Marlborough Road", ["The Old Rectory"]),
        ("at Flat 16, 7 The Coppice, Brent, T9 8VY was", ["Flat 16", "7 The Coppice", "T9 8VY"]),
        ("Wexford\nL31 K1F6\nIreland", ["L31 K1F6"]),
        ("formerly of Modugno, Italia, died", ["Italia"]),
        ("CLEETHORPES, SE8X 1YG, UK", ["SE8X 1YG", "UK"]),
        # Greek and Cyrillic places after a place word; transliterated streets above a postcode line
        ("the road near Самоков, Bulgaria", ["Самоков"]),
        ("Panepistimiou 31\n82293 Glyfáda", ["Panepistimiou 31", "82293", "Glyfáda"]),
        # Dutch and German name-first forms, Hungarian floors, postcodes after "at"
        (
            "Burgemeester de Withstraat 166, 5288 TP Schijndel",
            ["Burgemeester de Withstraat 166", "5288 TP", "Schijndel"],
        ),
        ("of Im Kirschgarten 225-227, Rees", ["Im Kirschgarten 225-227"]),
        ("at 1784 Tata, Dózsa György utca 2., Hungary", ["1784", "Tata", "Dózsa György utca 2"]),
        ("flat at Rákóczi út 167. I. em. 1. He", ["Rákóczi út 167. I. em. 1"]),
        # Polish and Spanish flats, Dutch floors, Hungarian districts, a street before a postcode
        ("on ul. Piotrkowska 69 m. 9 (case", ["ul. Piotrkowska 69 m. 9"]),
        ("at Paseo de Gràcia 62, 6º izq., Madrid", ["Paseo de Gràcia 62, 6º izq"]),
        ("of Prinsengracht 191-II, Venray", ["Prinsengracht 191-II"]),
        ("sibling of Tibor (Budapest XIII. kerület).", ["Budapest XIII. kerület"]),
        ("at Tsimiski 152, 502 58 Irákleion.", ["Tsimiski 152", "502 58", "Irákleion"]),
        # UK and Canadian postcodes
        ("10 Downing Street, London SW1A 2AA", ["SW1A 2AA"]),
        ("Ottawa ON K1A 0B1", ["K1A 0B1"]),
    ],
)
def test_addresses_outside_the_us(text, expected):
    assert _found(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Brigade 3 arrived at the ward.",  # an English word ending like a street word
        "Boarding Gate 12 was closed.",  # an English street-like word after everyday words
        "Sent Via Email 2 times, Via Telehealth 2 visits",  # a channel, not a street
        "in 2004 Paris was nice",  # a year before a town, mid-sentence
        "about 25000 Madrid residents were counted",  # a count before a town, mid-sentence
        "Received 10000 Units of heparin",  # a dose
        "Parkinson disease stage 3; Spring 2020; Cushing syndrome 2",  # eponyms and seasons
        "A1C 7.2, HbA1c 6.5, Takes Lipitor 20 mg, BP 120/80, Cardiology 3",  # labs, drugs, clinics
        "will place Foley 2 days; 2 place Foley",  # "place" as an English verb
        "Department of Medicine 4 West, Ward 7",  # clinical departments
        "Κεφάλαιο 3 του βιβλίου",  # a Greek word and a number in Greek text, no cue
        "Mayo Clinic 2019 visit; 2019 Boston Marathon",
        "The Patient, 2 Days later; In The Morning, 3 Doses",  # everyday words before a number
        "Visit 2\nTotal 12\n10000 Units",  # a word and a number on a line, no postcode after
        "HbA1c 7.2, CD4 350, BMI 31",  # labs  # years after a boundary, a town that is a common word
    ],
)
def test_hard_negatives_are_not_addresses(text):
    assert _found(text) == []


def test_the_default_configuration_runs_it():
    assert {"name": "tide.addresses"} in rules_specs()
