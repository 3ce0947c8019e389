from tide_core.recognizers.registry import create


def tagged(text):
    return [(text[r.start : r.end], r.entity_type) for r in create({"name": "tide.regex"}).analyze(text)]


def test_country_after_zip_and_upper_case_countries():
    assert ("US", "LOCATION") in tagged("12 Oak St\nKeene NH 03728, US\n")
    assert ("United States", "LOCATION") in tagged("Newark, Delaware 19879, United States.")
    assert ("UKRAINE", "LOCATION") in tagged("BORN IN UKRAINE, MOVED TO OREGON")


def test_us_as_a_word_is_not_a_location():
    assert all(label != "LOCATION" for _, label in tagged("Let us know. Call US if worse. Dose 5 mg."))
