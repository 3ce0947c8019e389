"""Mutation testing of one safety-critical module with mutmut, against its covering tests only.

    .venv/bin/python scripts/mutation.py tide_core/engine/anonymization.py
    .venv/bin/python scripts/mutation.py --list                 # the configured modules
    .venv/bin/python scripts/mutation.py MODULE --tests tests/test_x.py   # other covering tests
    .venv/bin/python scripts/mutation.py MODULE --show           # print every survivor's diff
    .venv/bin/python scripts/mutation.py MODULE --recheck        # re-run only the last run's survivors

mutmut (pinned in the ``dev`` extra) mutates the module's functions one small change at a time
(operators, comparisons, constants, removed calls, ...) and runs the covering tests against
each mutant; a mutant is *killed* when a test fails.  The run happens in a scratch copy
(``.mutation/<module>/``, git-ignored), never in the work tree, so other test runs are not
disturbed.  Each module lists the test files that cover it (``MODULES``): a run takes minutes,
not the full suite's ten.  Not part of CI.

The survivors are written to ``.mutation/<module>/survivors.txt`` (one diff each).  Review them:
kill each with a test, or list it as equivalent (no test can tell it apart) with the reason in
``docs/results/mutation.md``; the score there is killed / (mutants - equivalent).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutation"

#: module -> the test files that cover it (the smallest set that exercises its guarantees).
MODULES: dict[str, list[str]] = {
    "tide_core/assurance/bounds.py": [
        "tests/mutation_guards/test_bounds_mutants.py",
        "tests/assurance/test_assurance_audit.py",
    ],
    "tide_core/engine/anonymization.py": ["tests/mutation_guards/test_fail_closed_mutants.py"],
    "tide_core/anonymize/engine.py": [
        "tests/mutation_guards/test_fail_closed_mutants.py",
        "tests/anonymize/test_anonymize_engine.py",
        "tests/mutation_guards/test_anonymizer_engine_mutants.py",
    ],
    "tide_core/engine/validation.py": [
        "tests/mutation_guards/test_inputs_mutants.py",
        "tests/engine/test_validation.py",
        "tests/mutation_guards/test_validation_mutants.py",
    ],
    "tide_core/release/checks.py": ["tests/mutation_guards/test_release_checks_mutants.py"],
    # the chunk-streamed pass the blocking checks run on (checks.py delegates to it)
    # per-chunk check digests: a chunk whose inputs hash as recorded reuses its tallies
    "tide_core/release/chunk_verdicts.py": ["tests/release/test_incremental_checks.py"],
    "tide_core/release/scan.py": [
        "tests/mutation_guards/test_release_checks_mutants.py",
        "tests/release/test_release_streaming.py",
    ],
    "tide_core/anonymize/ages.py": [
        "tests/mutation_guards/test_ages_mutants.py",
        "tests/anonymize/test_anonymize_locations_contacts.py",
    ],
    # the exhaustive bijection tests of test_anonymize_identifiers.py take minutes per mutant; this file checks
    # both constructions exhaustively on small domains in seconds
    "tide_core/anonymize/small_domain.py": ["tests/mutation_guards/test_small_domain_mutants.py"],
    # test_anonymize_identifiers.py permutes whole domains (over a minute per mutant); the guard file recomputes
    # every mode from the ff3 library and the documented tweak in seconds
    "tide_core/anonymize/identifiers.py": ["tests/mutation_guards/test_identifiers_mutants.py"],
    # test_anonymize_names.py maps both 8,000-name lists per mutant; the guard file recomputes each rule
    "tide_core/anonymize/names.py": ["tests/mutation_guards/test_names_mutants.py"],
    "tide_core/anonymize/contacts.py": [
        "tests/anonymize/test_anonymize_locations_contacts.py",
        "tests/mutation_guards/test_contacts_mutants.py",
    ],
    "tide_core/anonymize/locations.py": [
        "tests/anonymize/test_anonymize_locations_contacts.py",
        "tests/mutation_guards/test_locations_mutants.py",
    ],
    # the guard files recompute each rule from the key with the list and permutation caches cleared per test
    # (test_anonymize_names.py maps both 8,000-name lists per mutant; nothing there clears the caches)
    "tide_core/anonymize/facilities.py": ["tests/mutation_guards/test_facilities_mutants.py"],
    "tide_core/anonymize/surrogates.py": ["tests/mutation_guards/test_surrogates_mutants.py"],
    # test_release_columns.py also runs recognition and anonymisation end to end (seconds per mutant)
    "tide_core/engine/release_columns.py": ["tests/mutation_guards/test_release_columns_mutants.py"],
    "tide_core/anonymize/presidio_operators.py": [
        "tests/anonymize/test_anonymize_presidio.py",
        "tests/mutation_guards/test_presidio_operators_mutants.py",
    ],
    # every read on DuckDB in memory, with rows of another study, key and note beside those asked for
    "tide_core/store/release_store.py": ["tests/mutation_guards/test_release_store_mutants.py"],
    "tide_core/store/ddl.py": ["tests/mutation_guards/test_ddl_mutants.py"],
    # on the streaming DuckDB backend and on a plain-Warehouse adapter (the in-memory fallback), in seconds;
    # test_chunked_runs.py runs whole recognition/anonymization runs per mutant
    "tide_core/engine/study_chunks.py": ["tests/mutation_guards/test_study_chunks_mutants.py"],
    "tide_core/engine/ledger.py": ["tests/engine/test_run_ledger.py"],
    "tide_core/anonymize/dates.py": [
        "tests/anonymize/test_anonymize_dates.py",
        "tests/mutation_guards/test_dates_mutants.py",
    ],
    "tide_core/anonymize/keys.py": ["tests/anonymize/test_keys.py", "tests/mutation_guards/test_keys_mutants.py"],
    "tide_core/engine/recognition.py": [
        "tests/mutation_guards/test_recognition_mutants.py",
        "tests/engine/test_recognition_engine.py",
        "tests/engine/test_propagate.py",
    ],
    # the guard file checks every column the cache writes and reads on DuckDB in memory (test_span_cache_atomic.py
    # kills writer processes: far too slow per mutant)
    "tide_core/store/span_cache.py": [
        "tests/mutation_guards/test_span_cache_mutants.py",
        "tests/io/test_span_cache.py",
    ],
    # TABLES is built at import, before a mutant is switched on: the guard file calls _spec directly
    # (test_table_registry.py imports Dagster: seconds per mutant)
    "tide_core/store/tables.py": ["tests/mutation_guards/test_tables_mutants.py"],
    # test_review_auth.py / test_review_api.py start `tide review` as a subprocess and build a warehouse per
    # test (about 127 s per pass); the guard file runs one in-process server over real sockets in seconds
    "tide_core/review/server.py": ["tests/mutation_guards/test_review_server_mutants.py"],
    # the Parquet (DuckDB) side; the BigQuery side is covered by the emulator tests, not run per mutant
    "tide_core/io/staging.py": ["tests/io/test_staging.py"],
    "tide_core/recognizers/iban.py": ["tests/recognizers/test_regex_network_and_bank_ids.py"],
    # of test_known_phi_types.py only its in-process guard class (its other tests recognize and release a study)
    "tide_core/recognizers/known_phi.py": [
        "tests/recognizers/test_recognizers_known_phi.py",
        "tests/release/test_known_phi_types.py::TestGuard",
    ],
    # the view against the Unicode database and html.entities.html5, the offset map and the view cache; not
    # the gold-corpus property tests or the `tide run` of test_normalize_unicode.py (they recognize notes)
    "tide_core/text/normalize.py": [
        "tests/recognizers/test_normalize_cache.py",
        *(
            f"tests/anonymize/test_normalize.py::{t}"
            for t in (
                "test_normal_text_is_the_identity_view",
                "test_format_characters_are_removed_and_mapped_exactly",
                "test_nfkc_digits_and_expansions",
                "test_look_alikes_fold_in_latin_tokens_only",
                "test_combining_marks_compose_across_removed_characters",
                "test_spans_past_the_view_stay_past_the_original",
                "test_random_text_map_is_exact_and_idempotent",
            )
        ),
        *(
            f"tests/anonymize/test_normalize_unicode.py::{t}"
            for t in (
                "test_every_dash_space_and_invisible_folds_as_the_unicode_database_says",
                "test_every_named_entity_decodes_as_html_unescape_does",
                "test_legacy_prefixes_and_double_escapes_decode_like_repeated_unescape",
                "test_step_config_names_every_rule_of_the_view",
                "test_map_edges_identity_and_past_the_end",
                "test_view_cache_is_bounded_by_views_and_by_characters",
                "test_a_non_ascii_latin_letter_anchors_look_alike_folding",
                "test_numeric_references_decimal_and_hex_every_case",
                "test_tags_inside_a_value_do_not_split_it",
                "test_spaced_out_digits_and_letters_are_joined_with_an_exact_map",
                "test_offset_map_is_exact_on_random_mixtures",
                "test_dates_with_any_dash_or_entity_are_shifted_as_a_whole",
                "test_every_surrogate_is_computed_from_the_normalised_value",
            )
        ),
    ],
    # the release modules: hand-made candidate rows (valid row hashes) on DuckDB in memory or in a tmp file, no
    # recognition, no model (test_release_versions/blocking/resume.py recognize a study: minutes per mutant)
    "tide_core/release/evidence.py": [
        "tests/release/test_release_evidence.py",
        "tests/mutation_guards/test_release_evidence_mutants.py",
    ],
    # both researcher stores: the warehouse itself (DuckDB in memory) and a separate .released.duckdb file
    "tide_core/release/publish.py": ["tests/mutation_guards/test_release_publish_mutants.py"],
    "tide_core/store/release_content.py": [
        "tests/mutation_guards/test_release_content_mutants.py",
        "tests/release/test_sorted_fingerprint.py",
    ],
    # the blocking checks replaced by stubs (they have their own guard file): the lifecycle's own decisions
    "tide_core/release/lifecycle.py": ["tests/mutation_guards/test_release_lifecycle_mutants.py"],
    "tide_core/engine/release_input.py": ["tests/mutation_guards/test_release_input_mutants.py"],
    # a real GuardModel with hand-set weights (test_guard_release_hold.py recognizes the demo corpus)
    "tide_core/assurance/guard_hold.py": ["tests/mutation_guards/test_phi_guard_hold.py"],
}

COPY = ("tide_core", "tide_etl", "tests", "sql")  # sql/: test_table_registry.py compares the DDL on disk


def _config(module: str, tests: list[str]) -> str:
    return (
        "\n[tool.mutmut]\n"
        f'source_paths = ["tide_core", "tide_etl"]\n'
        f"only_mutate = [{json.dumps(module)}]\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-x", "-q", "-W", "ignore"]\n'
        "use_git_change_detection = false\n"
    )


def prepare(module: str, tests: list[str]) -> Path:
    """A fresh scratch copy of the sources and tests, with mutmut configured for ``module``."""
    work = WORK / module.replace("/", "__").removesuffix(".py")
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.duckdb", "*.duckdb.wal")
    for name in COPY:
        shutil.copytree(ROOT / name, work / name, ignore=ignore)
    pyproject = (ROOT / "pyproject.toml").read_text()
    (work / "pyproject.toml").write_text(pyproject + _config(module, tests))
    return work


def results(work: Path, module: str) -> dict[str, str]:
    """mutant name -> mutmut's status (killed, survived, timeout, no tests, ...)."""
    from mutmut.stats import status_by_exit_code

    data = json.loads((work / "mutants" / (module + ".meta")).read_text())
    return {name: status_by_exit_code[code] for name, code in sorted(data["exit_code_by_key"].items())}


def show(work: Path, name: str, module: str) -> str:
    """The diff of one mutant, computed in this process (one ``mutmut show`` per survivor took seconds)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    here = os.getcwd()
    try:
        os.chdir(work)  # mutmut reads ``mutants/<module>`` relative to the working directory
        return get_diff_for_mutant(name, path=module)
    except Exception:  # fall back to mutmut's own command
        out = subprocess.run(
            [str(Path(sys.executable).parent / "mutmut"), "show", name], cwd=work, capture_output=True, text=True
        )
        return out.stdout.strip() or out.stderr.strip()
    finally:
        os.chdir(here)


def recheck(work: Path, module: str, tests: list[str], survivors: list[str]) -> list[str]:
    """Run the *current* covering tests against each survivor of the last run; return those still alive.

    Tests written after a run are copied into its scratch copy and each survivor is switched on
    through mutmut's ``MUTANT_UNDER_TEST`` (minutes for a few dozen survivors, not a full rerun).
    """
    for t in tests:
        shutil.copy2(ROOT / t, work / "mutants" / t)
    alive = []
    for name in survivors:
        env = {**os.environ, "MUTANT_UNDER_TEST": name}
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-W", "ignore", *tests]
        try:
            run = subprocess.run(cmd, cwd=work / "mutants", env=env, capture_output=True, timeout=600)
            killed = run.returncode != 0
        except subprocess.TimeoutExpired:
            killed = True  # a hang is detected, as in mutmut's own run
        print(f"{'killed' if killed else 'ALIVE '}  {name}", flush=True)
        if not killed:
            alive.append(name)
    return alive


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("module", nargs="?", help="e.g. tide_core/engine/anonymization.py")
    p.add_argument("--tests", nargs="+", help="covering test files (default: MODULES[module])")
    p.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2), help="mutants run in parallel")
    p.add_argument("--show", action="store_true", help="print the diff of every surviving mutant")
    p.add_argument("--list", action="store_true", help="list the configured modules and their tests")
    p.add_argument("--report", action="store_true", help="do not run: report the last run's results again")
    p.add_argument("--recheck", action="store_true", help="run the current covering tests on the last run's survivors")
    args = p.parse_args(argv)
    if args.list or not args.module:
        for m, t in MODULES.items():
            print(f"{m}: {' '.join(t)}")
        return 0
    module = args.module
    tests = args.tests or MODULES.get(module)
    if not tests:
        p.error(f"no covering tests configured for {module}; pass --tests")
    if not (ROOT / module).is_file():
        p.error(f"{module} not found")
    t0 = time.time()
    if args.report or args.recheck:
        work = WORK / module.replace("/", "__").removesuffix(".py")
        run = subprocess.CompletedProcess([], 0, "", "")
    else:
        work = prepare(module, tests)
        mutmut = str(Path(sys.executable).parent / "mutmut")
        cmd = [mutmut, "run", "--max-children", str(args.jobs)]
        run = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        (work / "mutmut.log").write_text(run.stdout + run.stderr)
    if not (work / "mutants" / (module + ".meta")).exists():
        print(run.stdout[-3000:] + run.stderr[-3000:])
        print(f"mutmut did not produce results for {module} (log: {work / 'mutmut.log'})")
        return 2
    got = results(work, module)
    counts = Counter(got.values())
    if counts["not checked"] == len(got):
        print(run.stdout[-3000:] + run.stderr[-3000:])
        print(f"no mutant of {module} was run: do the covering tests pass? (log: {work / 'mutmut.log'})")
        return 2
    detected = ("killed", "timeout")  # a mutant that hangs the tests is caught by their timeout
    survivors = [n for n, s in got.items() if s not in detected]
    if args.recheck:
        alive = recheck(work, module, tests, survivors)
        print(f"recheck: {len(survivors) - len(alive)} of {len(survivors)} survivors now killed; {len(alive)} alive")
        print(f"score:   {(len(got) - len(alive)) / len(got):.1%} before excluding equivalent mutants")
        return 0
    with open(work / "survivors.txt", "w") as f:
        for name in survivors:
            f.write(f"### {name} ({got[name]})\n{show(work, name, module)}\n\n")
    total, killed = len(got), counts["killed"] + counts["timeout"]
    print(f"module:  {module}")
    print(f"tests:   {' '.join(tests)}")
    print(f"mutants: {total}  " + "  ".join(f"{s}: {n}" for s, n in sorted(counts.items())))
    print(f"score:   {killed / total:.1%} before excluding equivalent mutants  ({time.time() - t0:.0f} s)")
    print(f"survivors: {work / 'survivors.txt'}")
    if args.show:
        print((work / "survivors.txt").read_text())
    return 0 if run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
