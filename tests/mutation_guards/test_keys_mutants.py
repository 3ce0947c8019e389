"""Mutation-guided tests of tide_core/anonymize/keys.py (see docs/results/mutation.md).

Each refusal must keep its code, name the file, variable or name it is about (never a byte of the
secret) and carry a hint; the boundaries of the entropy and size rules, the MAC encoding, the
default provider chain and the unwrap command's environment are pinned against the documented rules.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sys
from pathlib import Path

import pytest

import tide_core.anonymize.keys as keys
from tide_core.anonymize.keys import (
    MAX_KEY_FILE_BYTES,
    ChainKeyProvider,
    EnvKeyProvider,
    FileKeyProvider,
    KeyRing,
    check_secret,
    env_var_name,
    parse_secret,
    provider_from_env,
    unwrap_hook_from_env,
)
from tide_core.errors import KeyProviderError
from tide_core.types import KEY_DOMAINS

STUDY, KEY = "s1", "k1"


def _key_file(root: Path, text: str | bytes, study=STUDY, key=KEY, suffix=".key") -> Path:
    d = root / study
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    p = d / f"{key}{suffix}"
    (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
    os.chmod(p, 0o600)
    return p


def _coded(call, code: str, *names: str, secret: str = "") -> KeyProviderError:
    """The call raises ``code``, its message names each of ``names``, it has a hint, it quotes no secret."""
    with pytest.raises(KeyProviderError) as e:
        call()
    err = e.value
    assert err.code == code, str(err)
    assert isinstance(err.message, str) and err.message
    for name in names:
        assert name in err.message, (name, err.message)
    assert isinstance(err.hint, str) and err.hint, f"{code} has no hint"
    if secret:
        assert secret.lower() not in str(err).lower()
    return err


# --- names --------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["", "../k", "a b", "-lead", "x" * 64, "é"])
def test_bad_study_and_key_names_are_refused_everywhere(bad, tmp_path):
    secret = bytes.fromhex(secrets.token_hex(32))
    _coded(lambda: KeyRing(bad, KEY, secret), "E100", "invalid study name")
    _coded(lambda: KeyRing(STUDY, bad, secret), "E100", "invalid key name")
    _coded(lambda: FileKeyProvider(tmp_path).path(bad, KEY), "E100", "invalid study name")
    _coded(lambda: FileKeyProvider(tmp_path).path(STUDY, bad), "E100", "invalid key name")
    _coded(lambda: EnvKeyProvider({}).keyring(bad, KEY), "E100", "invalid study name")
    _coded(lambda: EnvKeyProvider({}).keyring(STUDY, bad), "E100", "invalid key name")
    # the same calls with a good name (the one property that differs) are accepted
    assert KeyRing("s-1.a_b", "k" * 63, secret).study == "s-1.a_b"
    assert FileKeyProvider(tmp_path).path(STUDY, KEY) == tmp_path / STUDY / f"{KEY}.key"


def test_env_var_name_keeps_letters_and_digits_upper_cased():
    assert env_var_name("MyStudy", "Key2") == "TIDE_KEY_MYSTUDY__KEY2"
    assert env_var_name("my-study", "k.1") == "TIDE_KEY_MY_STUDY__K_1"


# --- secrets ------------------------------------------------------------------------------------
def test_entropy_boundaries():
    # exactly 8 distinct values, no repeated block, no constant step: accepted
    ok8 = bytes([3, 1, 4, 1, 5, 2, 6, 5, 3, 5, 0, 2, 7, 1, 0, 2, 0, 1, 0, 2, 0, 4, 5, 1, 0, 4, 5, 2, 3, 5, 3, 6])
    assert len(set(ok8)) == 8
    assert check_secret(ok8, "w") == ok8
    seven = bytes(b if b != 7 else 6 for b in ok8)  # the same with one value merged: 7 distinct
    assert len(set(seven)) == 7
    _coded(lambda: check_secret(seven, "w7"), "E114", "w7")


def test_counting_sequences_are_refused_even_across_the_byte_wrap():
    wrap = bytes((240 + i) % 256 for i in range(32))  # f0 f1 ... ff 00 01 ... 0f
    _coded(lambda: check_secret(wrap, "wrap"), "E114", "wrap")
    down = bytes((5 - 3 * i) % 256 for i in range(32))
    _coded(lambda: check_secret(down, "down"), "E114", "down")
    # the same counting sequence with its last byte changed is not a constant step any more
    almost = bytes(range(40, 71)) + bytes([200])
    assert check_secret(almost, "w") == almost


def test_short_and_malformed_secrets_name_where_they_came_from():
    _coded(lambda: parse_secret(secrets.token_hex(31), "file-A"), "E102", "file-A", "31 bytes")
    _coded(lambda: parse_secret("not a key!", "file-B"), "E101", "file-B")
    _coded(lambda: parse_secret(b"\xff\xfe" + secrets.token_hex(32).encode(), "file-C"), "E101", "file-C")


def test_upper_case_hex_is_the_same_secret_as_lower_case():
    h = secrets.token_hex(32)
    assert parse_secret(h.upper(), "w") == parse_secret(h, "w") == bytes.fromhex(h)
    assert parse_secret(h.encode(), "w") == bytes.fromhex(h)  # bytes as read from a file


# --- MACs ---------------------------------------------------------------------------------------
def test_mac_is_hmac_over_length_prefixed_parts_and_bytes_equal_their_utf8_text():
    ring = KeyRing(STUDY, KEY, bytes.fromhex(secrets.token_hex(32)))
    parts = ("a", "bé", "")
    expect = hmac.new(ring.subkey("id"), digestmod=hashlib.sha256)
    for p in parts:
        b = p.encode("utf-8")
        expect.update(len(b).to_bytes(4, "big") + b)
    assert ring.mac("id", *parts) == expect.digest()
    assert ring.mac("id", b"a", "b\xc3\xa9".encode("latin-1").decode("utf-8"), b"") == expect.digest()
    assert ring.mac("id", bytearray(b"a"), "bé", "") == expect.digest()
    assert ring.mac_int("id", *parts) == int.from_bytes(expect.digest(), "big")
    assert ring.mac_int("date", "x") != ring.mac_int("id", "x")
    _coded(lambda: ring.subkey("nope"), "E103", "'nope'")
    err = _coded(lambda: ring.mac("nope", "x"), "E103", "'nope'")
    assert all(d in err.hint for d in KEY_DOMAINS)


# --- file provider ------------------------------------------------------------------------------
def test_file_refusals_name_the_file_and_say_what_to_do(tmp_path):
    secret = secrets.token_hex(32)
    fp = FileKeyProvider(tmp_path)
    p = fp.path(STUDY, KEY)
    err = _coded(lambda: fp.keyring(STUDY, KEY), "E105", str(p), f"'{STUDY}'", f"'{KEY}'")
    assert "tide keys new" in err.hint
    _key_file(tmp_path, secret)
    os.chmod(p, 0o640)
    assert "chmod 600" in _coded(lambda: fp.keyring(STUDY, KEY), "E106", str(p), "0o640", secret=secret).hint
    os.chmod(p, 0o600)
    os.chmod(p.parent, 0o750)
    assert "chmod 700" in _coded(lambda: fp.keyring(STUDY, KEY), "E111", str(p.parent), secret=secret).hint
    os.chmod(p.parent, 0o700)
    _coded(lambda: fp.create(STUDY, KEY), "E107", str(p))
    _coded(lambda: fp.keyring(STUDY, KEY) and parse_secret("zz", str(p)), "E101", str(p))
    p.write_text(secrets.token_hex(20))
    _coded(lambda: fp.keyring(STUDY, KEY), "E102", str(p))


def test_links_and_non_regular_files_are_named_in_the_refusal(tmp_path):
    secret = secrets.token_hex(32)
    real = _key_file(tmp_path / "real", secret)
    d = tmp_path / "keys" / STUDY
    d.mkdir(parents=True)
    os.chmod(d, 0o700)
    link = d / f"{KEY}.key"
    link.symlink_to(real)
    fp = FileKeyProvider(tmp_path / "keys")
    err = _coded(lambda: fp.keyring(STUDY, KEY), "E112", str(link), "file", secret=secret)
    assert "600" in err.hint
    link.unlink()
    link.mkdir()
    _coded(lambda: fp.keyring(STUDY, KEY), "E112", str(link))
    link.rmdir()
    os.mkfifo(link, 0o600)  # a FIFO must be refused, not block the reader
    _coded(lambda: fp.keyring(STUDY, KEY), "E112", str(link))
    link.unlink()
    # a linked study directory: the message says "directory", the hint gives mode 700
    (tmp_path / "keys2").mkdir()
    (tmp_path / "keys2" / STUDY).symlink_to(real.parent, target_is_directory=True)
    err = _coded(lambda: FileKeyProvider(tmp_path / "keys2").keyring(STUDY, KEY), "E112", "directory", secret=secret)
    assert "700" in err.hint


def test_a_link_swapped_in_after_the_check_is_not_followed(tmp_path, monkeypatch):
    """O_NOFOLLOW: pretend the lstat check saw a regular file (a swap between check and open)."""
    secret = secrets.token_hex(32)
    real = _key_file(tmp_path / "real", secret)
    d = tmp_path / "keys" / STUDY
    d.mkdir(parents=True)
    os.chmod(d, 0o700)
    link, dlink = d / f"{KEY}.key", tmp_path / "keys2" / STUDY
    link.symlink_to(real)
    (tmp_path / "keys2").mkdir()
    dlink.symlink_to(real.parent, target_is_directory=True)
    regular, real_lstat = os.lstat(real), os.lstat
    monkeypatch.setattr(
        keys.os, "lstat", lambda q, *a, **k: regular if str(q) in (str(link), str(dlink)) else real_lstat(q, *a, **k)
    )
    # the message names the file and the kind of OS error (ELOOP), never the target's content
    _coded(lambda: FileKeyProvider(tmp_path / "keys").keyring(STUDY, KEY), "E112", str(link), "(OSError)")
    # the same for the study directory
    _coded(lambda: FileKeyProvider(tmp_path / "keys2").keyring(STUDY, KEY), "E112", "directory", "(NotADirectoryError)")


def test_size_limit_is_inclusive(tmp_path):
    h = secrets.token_hex(32)
    p = _key_file(tmp_path, h + "\n" * (MAX_KEY_FILE_BYTES - len(h)))
    assert p.stat().st_size == MAX_KEY_FILE_BYTES
    fp = FileKeyProvider(tmp_path)
    assert fp.keyring(STUDY, KEY).fingerprint == KeyRing(STUDY, KEY, bytes.fromhex(h)).fingerprint
    p.write_text(h + "\n" * (MAX_KEY_FILE_BYTES - len(h) + 1))
    _coded(lambda: fp.keyring(STUDY, KEY), "E115", str(p), str(MAX_KEY_FILE_BYTES), secret=h)


def test_both_plain_and_wrapped_files_is_ambiguous(tmp_path):
    _key_file(tmp_path, secrets.token_hex(32))
    _key_file(tmp_path, b"wrapped", suffix=".wrapped")
    _coded(lambda: FileKeyProvider(tmp_path).keyring(STUDY, KEY), "E117", f"{KEY}.key", f"{KEY}.wrapped")


def test_create_adds_keys_to_an_existing_study_and_overwrites_only_when_asked(tmp_path):
    fp = FileKeyProvider(tmp_path)
    p1, p2 = fp.create(STUDY, "k1"), fp.create(STUDY, "k2")  # the second reuses the study directory
    assert p1.parent == p2.parent
    text = p1.read_text()
    assert len(text) == 65 and text.endswith("\n") and len(bytes.fromhex(text.strip())) == 32
    before = fp.keyring(STUDY, "k1").fingerprint
    assert fp.create(STUDY, "k1", overwrite=True) == p1
    assert fp.keyring(STUDY, "k1").fingerprint != before  # a new secret
    assert oct(p1.stat().st_mode & 0o777) == "0o600"


def test_create_refuses_a_linked_study_directory(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / STUDY).symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    fp = FileKeyProvider(tmp_path / "keys")
    _coded(lambda: fp.create(STUDY, KEY), "E112", STUDY)
    assert list((tmp_path / "elsewhere").iterdir()) == []


# --- envelope -----------------------------------------------------------------------------------
def test_unwrap_hook_gets_study_and_key_and_errors_name_the_wrapped_file(tmp_path, monkeypatch):
    monkeypatch.delenv("TIDE_KEY_UNWRAP", raising=False)
    monkeypatch.delenv("TIDE_KEY_UNWRAP_COMMAND", raising=False)
    secret = bytes.fromhex(secrets.token_hex(32))
    w = _key_file(tmp_path, b"sealed", suffix=".wrapped")
    seen = {}

    def hook(wrapped, *, study, key):
        seen.update(wrapped=wrapped, study=study, key=key)
        return secret.hex()

    assert (
        FileKeyProvider(tmp_path, unwrap=hook).keyring(STUDY, KEY).fingerprint
        == KeyRing(STUDY, KEY, secret).fingerprint
    )
    assert seen == {"wrapped": b"sealed", "study": STUDY, "key": KEY}
    err = _coded(lambda: FileKeyProvider(tmp_path).keyring(STUDY, KEY), "E116", str(w))
    assert "TIDE_KEY_UNWRAP_COMMAND" in err.hint

    def broken(wrapped, **_):
        raise LookupError(wrapped.hex())

    _coded(lambda: FileKeyProvider(tmp_path, unwrap=broken).keyring(STUDY, KEY), "E116", str(w), "LookupError")
    _coded(lambda: FileKeyProvider(tmp_path, unwrap=lambda w, **_: 42).keyring(STUDY, KEY), "E116", str(w), "int")
    _coded(lambda: FileKeyProvider(tmp_path, unwrap=lambda w, **_: "zz").keyring(STUDY, KEY), "E101", str(w))
    _coded(lambda: FileKeyProvider(tmp_path, unwrap=lambda w, **_: secret[:8]).keyring(STUDY, KEY), "E102", str(w))
    assert FileKeyProvider(tmp_path, unwrap=lambda w, **_: bytearray(secret)).keyring(STUDY, KEY).study == STUDY
    for empty in ("", [], "   "):
        err = _coded(lambda e=empty: FileKeyProvider(tmp_path, unwrap=e).keyring(STUDY, KEY), "E116", "empty")
        assert "TIDE_KEY_UNWRAP_COMMAND" in err.hint


def test_unwrap_command_gets_the_environment_study_and_key(tmp_path, monkeypatch):
    secret = secrets.token_hex(32)
    _key_file(tmp_path, b"sealed", suffix=".wrapped")
    monkeypatch.setenv("TIDE_GUARD_SECRET", secret)
    script = (
        "import os, sys; sys.stdin.buffer.read(); "
        f"assert os.environ['TIDE_KEY_STUDY'] == {STUDY!r} and os.environ['TIDE_KEY_NAME'] == {KEY!r}; "
        "print(os.environ['TIDE_GUARD_SECRET'])"
    )
    for hook in ([sys.executable, "-c", script], f"{sys.executable} -c {script!r}"):
        ring = FileKeyProvider(tmp_path, unwrap=hook).keyring(STUDY, KEY)
        assert ring.fingerprint == KeyRing(STUDY, KEY, bytes.fromhex(secret)).fingerprint, hook
    failing = [sys.executable, "-c", "import sys; sys.exit(3)"]
    _coded(lambda: FileKeyProvider(tmp_path, unwrap=failing).keyring(STUDY, KEY), "E116", repr(sys.executable), "3")
    missing = ["/nonexistent/unwrap-tool", "--x"]
    err = _coded(
        lambda: FileKeyProvider(tmp_path, unwrap=missing).keyring(STUDY, KEY), "E116", "'/nonexistent/unwrap-tool'"
    )
    assert "FileNotFoundError" in err.message


def test_a_hanging_unwrap_command_is_stopped(tmp_path, monkeypatch):
    _key_file(tmp_path, b"sealed", suffix=".wrapped")
    monkeypatch.setattr(keys, "UNWRAP_TIMEOUT_S", 1)
    slow = [sys.executable, "-c", f"import time; time.sleep(4); print({secrets.token_hex(32)!r})"]
    err = _coded(lambda: FileKeyProvider(tmp_path, unwrap=slow).keyring(STUDY, KEY), "E116", "TimeoutExpired")
    assert repr(sys.executable) in err.message


def test_unwrap_hook_from_env_reads_the_given_environment_only(monkeypatch):
    monkeypatch.delenv("TIDE_KEY_UNWRAP", raising=False)
    monkeypatch.delenv("TIDE_KEY_UNWRAP_COMMAND", raising=False)
    assert unwrap_hook_from_env({"TIDE_KEY_UNWRAP": "hashlib:sha256"}) is hashlib.sha256
    assert unwrap_hook_from_env({"TIDE_KEY_UNWRAP_COMMAND": "kms-unwrap --x"}) == "kms-unwrap --x"
    assert unwrap_hook_from_env({}) is None
    monkeypatch.setenv("TIDE_KEY_UNWRAP", "hashlib:sha256")
    assert unwrap_hook_from_env() is hashlib.sha256  # default: os.environ
    for bad in ("hashlib", "hashlib:no_such_fn", "no_such_module_xyz:f", "hashlib:__name__"):
        err = _coded(lambda b=bad: unwrap_hook_from_env({"TIDE_KEY_UNWRAP": b}), "E116", f"TIDE_KEY_UNWRAP={bad!r}")
        assert "package.module:function" in err.hint


# --- env and chain providers --------------------------------------------------------------------
def test_env_provider_defaults_to_the_process_environment(monkeypatch):
    secret = secrets.token_hex(32)
    var = env_var_name(STUDY, KEY)
    monkeypatch.setenv(var, secret)
    assert EnvKeyProvider().keyring(STUDY, KEY).fingerprint == KeyRing(STUDY, KEY, bytes.fromhex(secret)).fingerprint
    monkeypatch.delenv(var)
    err = _coded(lambda: EnvKeyProvider().keyring(STUDY, KEY), "E104", var, f"'{STUDY}'", f"'{KEY}'")
    assert var in err.hint
    _coded(lambda: EnvKeyProvider({var: "short"}).keyring(STUDY, KEY), "E101", var)
    _coded(lambda: EnvKeyProvider({var: secrets.token_hex(20)}).keyring(STUDY, KEY), "E102", var)


def test_chain_has_and_reports_the_last_providers_error(tmp_path):
    env = {env_var_name(STUDY, "k2"): secrets.token_hex(32)}
    chain = ChainKeyProvider(FileKeyProvider(tmp_path / "a"), FileKeyProvider(tmp_path / "b"), EnvKeyProvider(env))
    assert chain.has(STUDY, "k2") and not chain.has(STUDY, KEY) and not chain.has("s2", "k2")
    _key_file(tmp_path / "b", secrets.token_hex(32))
    assert chain.has(STUDY, KEY)
    _coded(lambda: chain.keyring(STUDY, "k3"), "E104", env_var_name(STUDY, "k3"))  # the environment's, not b's


def test_provider_from_env_roots_and_order(tmp_path, monkeypatch):
    monkeypatch.delenv("TIDE_KEY_DIR", raising=False)
    chain = provider_from_env()
    assert chain.providers[0].root == Path(".tide") / "keys"
    assert isinstance(chain.providers[1], EnvKeyProvider) and len(chain.providers) == 2
    monkeypatch.setenv("TIDE_KEY_DIR", str(tmp_path / "envdir"))
    assert provider_from_env().providers[0].root == tmp_path / "envdir"
    assert provider_from_env(tmp_path / "arg").providers[0].root == tmp_path / "arg"

    def hook(w, **_):
        return b""

    assert provider_from_env(tmp_path, unwrap=hook).providers[0].unwrap is hook
    var = env_var_name(STUDY, KEY)
    monkeypatch.setenv(var, secrets.token_hex(32))
    assert provider_from_env(tmp_path).keyring(STUDY, KEY).study == STUDY  # falls through to the environment


# --- after the second run -----------------------------------------------------------------------
def test_keyring_for_tests_is_the_documented_deterministic_ring():
    ring = keys.keyring_for_tests("s9", "k9", "seed")
    assert (ring.study, ring.key) == ("s9", "k9")
    assert ring.fingerprint == KeyRing("s9", "k9", hashlib.sha256(b"test-only|seed").digest()).fingerprint


def test_owner_refusal_says_how_to_fix_it(tmp_path, monkeypatch):
    p = _key_file(tmp_path, secrets.token_hex(32))
    me = os.geteuid()
    monkeypatch.setattr(keys.os, "geteuid", lambda: me + 1)
    err = _coded(lambda: FileKeyProvider(tmp_path).keyring(STUDY, KEY), "E113", f"key directory {p.parent}")
    assert f"chown {me + 1} {p.parent}" in err.hint


def test_mode_refusals_say_file_or_directory(tmp_path):
    p = _key_file(tmp_path, secrets.token_hex(32))
    os.chmod(p, 0o604)
    _coded(lambda: FileKeyProvider(tmp_path).keyring(STUDY, KEY), "E106", f"key file {p} has permissions")
    os.chmod(p, 0o600)
    os.chmod(p.parent, 0o701)
    _coded(lambda: FileKeyProvider(tmp_path).keyring(STUDY, KEY), "E111", f"key directory {p.parent} has permissions")


def test_a_key_file_that_vanished_after_the_existence_check_is_coded(tmp_path):
    p = _key_file(tmp_path, secrets.token_hex(32))
    gone = p.parent / "gone.key"
    _coded(lambda: FileKeyProvider(tmp_path)._read_secure(gone), "E115", f"key file {gone}", "FileNotFoundError")


def test_create_does_not_write_through_a_link_swapped_in_after_the_check(tmp_path, monkeypatch):
    fp = FileKeyProvider(tmp_path / "keys")
    fp.create(STUDY, "k0")  # the study directory exists
    target = tmp_path / "target.txt"
    target.write_text("untouched")
    p = fp.path(STUDY, KEY)
    p.symlink_to(target)
    monkeypatch.setattr(keys.os.path, "islink", lambda q: False)  # the check saw no link (a race)
    with pytest.raises(OSError):
        fp.create(STUDY, KEY, overwrite=True)
    assert target.read_text() == "untouched"


def test_unwrap_command_output_errors_name_the_wrapped_file(tmp_path):
    w = _key_file(tmp_path, b"sealed", suffix=".wrapped")
    bad = [sys.executable, "-c", "print('zz')"]
    _coded(lambda: FileKeyProvider(tmp_path, unwrap=bad).keyring(STUDY, KEY), "E101", str(w))


def test_unknown_domain_hint_lists_the_domains():
    ring = keys.keyring_for_tests("s9", "k9", "seed")
    assert f"use one of {', '.join(KEY_DOMAINS)}" == _coded(lambda: ring.subkey("nope"), "E103", "nope").hint


@pytest.mark.parametrize("length", [0, 1, 31, 32, 63, 64, 65, 128, 200])
def test_hmac_states_give_rfc_2104_hmac_sha256_for_keys_of_every_length(length: int) -> None:
    # KeyRing only keys them with 32-byte sub-keys; the function itself must be HMAC for any key
    # (RFC 2104: a key longer than the 64-byte block is hashed first, a shorter one zero-padded)
    key = bytes((7 * i + length) % 256 for i in range(length))
    for msg in (b"", b"x", b"tide" * 40):
        inner_state, outer_state = keys.hmac_states(key)
        inner = inner_state.copy()
        inner.update(msg)
        outer = outer_state.copy()
        outer.update(inner.digest())
        assert outer.digest() == hmac.new(key, msg, hashlib.sha256).digest()
