"""Key providers: file owner/mode/link checks, secret length and entropy, env and chain providers,
envelope-wrapped key files, and the domain/study separation of sub-keys.

Every refusal must be a coded KeyProviderError that names the file or variable and never any byte of
the secret; each test below fails when its guard is removed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import secrets
import stat
import sys

import pytest

from tide_core.anonymize.keys import (
    ChainKeyProvider,
    EnvKeyProvider,
    FileKeyProvider,
    KeyRing,
    env_var_name,
    parse_secret,
    provider_from_env,
)
from tide_core.errors import KeyProviderError
from tide_core.types import KEY_DOMAINS

STUDY, KEY = "s1", "k1"


def _write_key(root, text: str | bytes, file_mode=0o600, dir_mode=0o700, study=STUDY, key=KEY, suffix=".key"):
    d = root / study
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{key}{suffix}"
    (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
    os.chmod(p, file_mode)
    os.chmod(d, dir_mode)
    return p


def _refused(provider, code: str, *secret_forms: str):
    with pytest.raises(KeyProviderError) as e:
        provider.keyring(STUDY, KEY)
    assert e.value.code == code, str(e.value)
    msg = str(e.value)
    for form in secret_forms:
        assert form.lower() not in msg.lower(), "the error quotes key material"
    return msg


# --- file modes, links, owners ------------------------------------------------------------------
def test_create_writes_mode_0600_in_a_0700_directory_and_reads_back(tmp_path):
    fp = FileKeyProvider(tmp_path / "keys")
    p = fp.create(STUDY, KEY)
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert stat.S_IMODE(p.parent.stat().st_mode) == 0o700
    ring = fp.keyring(STUDY, KEY)
    assert ring.fingerprint == fp.keyring(STUDY, KEY).fingerprint
    assert p.read_text().strip() not in repr(ring)
    with pytest.raises(KeyProviderError) as e:
        fp.create(STUDY, KEY)
    assert e.value.code == "E107"


@pytest.mark.parametrize("mode", [0o640, 0o620, 0o610, 0o604, 0o602, 0o601, 0o660, 0o644, 0o666])
def test_key_file_open_to_group_or_others_is_refused(tmp_path, mode):
    secret = secrets.token_hex(32)
    _write_key(tmp_path, secret, file_mode=mode)
    msg = _refused(FileKeyProvider(tmp_path), "E106", secret)
    assert "chmod 600" in msg


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_owner_only_key_file_is_accepted(tmp_path, mode):
    secret = secrets.token_hex(32)
    _write_key(tmp_path, secret, file_mode=mode)
    ring = FileKeyProvider(tmp_path).keyring(STUDY, KEY)
    assert ring.fingerprint == KeyRing(STUDY, KEY, bytes.fromhex(secret)).fingerprint


@pytest.mark.parametrize("mode", [0o750, 0o740, 0o710, 0o770, 0o705, 0o701, 0o755, 0o777])
def test_key_directory_open_to_group_or_others_is_refused(tmp_path, mode):
    secret = secrets.token_hex(32)
    _write_key(tmp_path, secret, dir_mode=mode)
    msg = _refused(FileKeyProvider(tmp_path), "E111", secret)
    assert "chmod 700" in msg


def test_symlinked_key_file_is_refused(tmp_path):
    secret = secrets.token_hex(32)
    real = _write_key(tmp_path / "elsewhere", secret)  # a perfectly good key file ...
    d = tmp_path / "keys" / STUDY
    d.mkdir(parents=True)
    os.chmod(d, 0o700)
    (d / f"{KEY}.key").symlink_to(real)  # ... reached through a link
    fp = FileKeyProvider(tmp_path / "keys")
    assert fp.has(STUDY, KEY)
    _refused(fp, "E112", secret)


def test_symlinked_key_directory_is_refused(tmp_path):
    secret = secrets.token_hex(32)
    _write_key(tmp_path / "elsewhere", secret)
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / STUDY).symlink_to(tmp_path / "elsewhere" / STUDY, target_is_directory=True)
    _refused(FileKeyProvider(tmp_path / "keys"), "E112", secret)


def test_dangling_symlink_is_refused_not_reported_missing(tmp_path):
    d = tmp_path / STUDY
    d.mkdir()
    os.chmod(d, 0o700)
    (d / f"{KEY}.key").symlink_to(tmp_path / "nowhere.key")
    fp = FileKeyProvider(tmp_path)
    assert fp.has(STUDY, KEY)  # so a chain does not silently fall through to another provider
    _refused(fp, "E112")


def test_key_path_that_is_a_directory_is_refused(tmp_path):
    d = tmp_path / STUDY / f"{KEY}.key"
    d.mkdir(parents=True)
    os.chmod(d.parent, 0o700)
    _refused(FileKeyProvider(tmp_path), "E112")


def _other_uid() -> int:
    return 65534 if os.geteuid() != 65534 else 65533


def _can_chown() -> bool:
    return os.geteuid() == 0


@pytest.mark.skipif(not _can_chown(), reason="giving a file to another user needs root (chown); not root here")
@pytest.mark.parametrize("target", ["file", "directory"])
def test_key_file_or_directory_owned_by_another_user_is_refused(tmp_path, target):
    secret = secrets.token_hex(32)
    p = _write_key(tmp_path, secret)
    os.chown(p if target == "file" else p.parent, _other_uid(), -1)
    msg = _refused(FileKeyProvider(tmp_path), "E113", secret)
    assert str(_other_uid()) in msg


@pytest.mark.skipif(_can_chown(), reason="as root the real chown test above covers this")
def test_owner_check_compares_with_the_effective_user(tmp_path, monkeypatch):
    """Without root no file can be given away; pretend instead to be another user (os.geteuid)."""
    secret = secrets.token_hex(32)
    _write_key(tmp_path, secret)
    fp = FileKeyProvider(tmp_path)
    fp.keyring(STUDY, KEY)  # accepted as its owner
    real = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real + 1)
    _refused(fp, "E113", secret)


# --- secret length, encoding, entropy -----------------------------------------------------------
@pytest.mark.parametrize(
    "raw,code",
    [
        (secrets.token_bytes(31).hex(), "E102"),
        ("", "E102"),
        ("not a key at all!", "E101"),
        ("0x" + secrets.token_hex(32), "E101"),
        ("00" * 32, "E114"),
        ("00" * 64, "E114"),
        ("ff" * 32, "E114"),
        ("ab" * 40, "E114"),
        ("deadbeef" * 8, "E114"),
        (bytes(range(32)).hex(), "E114"),
        (bytes(range(200, 232)).hex(), "E114"),
        ((secrets.token_bytes(16) * 2).hex(), "E114"),
        (bytes(random.Random(1).choices(b"\x00\x01\x02\x03", k=32)).hex(), "E114"),
    ],
    ids=[
        "31-bytes",
        "empty",
        "text",
        "non-hex",
        "all-zero",
        "all-zero-64",
        "all-ff",
        "repeated-byte",
        "repeated-block-4",
        "counting",
        "counting-high",
        "repeated-half",
        "four-byte-values",
    ],
)
def test_malformed_or_weak_key_files_are_coded_errors_without_key_bytes(tmp_path, raw, code):
    _write_key(tmp_path, raw + "\n")
    _refused(FileKeyProvider(tmp_path), code, *([raw] if raw else []))


def test_binary_key_file_is_a_coded_error_that_quotes_no_byte(tmp_path):
    blob = b"\xf3\x9c" + secrets.token_bytes(62)
    _write_key(tmp_path, blob)
    msg = _refused(FileKeyProvider(tmp_path), "E101", blob.hex())
    assert "\\xf3" not in msg and "0xf3" not in msg and "codec" not in msg and "byte" not in msg.split("--")[0]


def test_oversized_key_file_is_refused(tmp_path):
    _write_key(tmp_path, secrets.token_hex(40_000))
    _refused(FileKeyProvider(tmp_path), "E115")


@pytest.mark.parametrize("n", [32, 48, 64])
def test_random_secrets_of_valid_length_pass_in_hex_and_base64(n):
    import base64

    for _ in range(200):  # the entropy check must not refuse real random keys
        raw = secrets.token_bytes(n)
        assert parse_secret(raw.hex(), "x") == raw
        assert parse_secret(base64.b64encode(raw).decode(), "x") == raw
        assert parse_secret(raw.hex().encode() + b"\n", "x") == raw


# --- env and chain providers --------------------------------------------------------------------
def test_env_provider_reads_and_checks_its_variable():
    secret = secrets.token_hex(32)
    var = env_var_name("study-1", "2026.q4")
    assert var == "TIDE_KEY_STUDY_1__2026_Q4"
    prov = EnvKeyProvider({var: secret})
    assert prov.has("study-1", "2026.q4") and not prov.has("study-1", "other")
    ring = prov.keyring("study-1", "2026.q4")
    assert ring.fingerprint == KeyRing("study-1", "2026.q4", bytes.fromhex(secret)).fingerprint
    with pytest.raises(KeyProviderError) as e:
        prov.keyring("study-1", "other")
    assert e.value.code == "E104"
    for bad, code in [("11" * 32, "E114"), ("abc", "E101"), (secrets.token_hex(16), "E102"), ("é" * 64, "E101")]:
        with pytest.raises(KeyProviderError) as e:
            EnvKeyProvider({var: bad}).keyring("study-1", "2026.q4")
        assert e.value.code == code and bad not in str(e.value)


def test_chain_prefers_the_directory_then_the_environment_and_fails_closed(tmp_path):
    file_secret, env_secret = secrets.token_hex(32), secrets.token_hex(32)
    env = {env_var_name(STUDY, KEY): env_secret, env_var_name(STUDY, "k2"): env_secret}
    p = _write_key(tmp_path, file_secret)
    chain = ChainKeyProvider(FileKeyProvider(tmp_path), EnvKeyProvider(env))
    fp_file = KeyRing(STUDY, KEY, bytes.fromhex(file_secret)).fingerprint
    assert chain.keyring(STUDY, KEY).fingerprint == fp_file
    assert chain.keyring(STUDY, "k2").fingerprint == KeyRing(STUDY, "k2", bytes.fromhex(env_secret)).fingerprint
    with pytest.raises(KeyProviderError) as e:
        chain.keyring(STUDY, "k3")
    assert e.value.code == "E104"
    # an insecure file is an error, not a reason to fall back to the environment
    os.chmod(p, 0o644)
    _refused(chain, "E106", file_secret, env_secret)
    assert (STUDY, KEY) in chain.available()


# --- envelope-wrapped keys ----------------------------------------------------------------------
KEK = b"local-kms-key-encryption-key-for-tests-only"


def _toy_wrap(secret: bytes) -> bytes:
    """A toy envelope (HMAC-SHA256 keystream + tag) standing in for a KMS Encrypt call."""
    nonce = secrets.token_bytes(16)
    stream = hmac.new(KEK, b"stream" + nonce, hashlib.sha512).digest()
    body = bytes(a ^ b for a, b in zip(secret, stream, strict=False))
    return nonce + body + hmac.new(KEK, nonce + body, hashlib.sha256).digest()


def toy_unwrap(wrapped: bytes, *, study: str, key: str) -> bytes:
    nonce, body, tag = wrapped[:16], wrapped[16:-32], wrapped[-32:]
    if not hmac.compare_digest(tag, hmac.new(KEK, nonce + body, hashlib.sha256).digest()):
        raise ValueError(f"bad tag for {wrapped.hex()}")  # a careless hook quoting its input
    stream = hmac.new(KEK, b"stream" + nonce, hashlib.sha512).digest()
    return bytes(a ^ b for a, b in zip(body, stream, strict=False))


UNWRAP_SCRIPT = f"""
import hashlib, hmac, sys
KEK = {KEK!r}
w = sys.stdin.buffer.read()
nonce, body, tag = w[:16], w[16:-32], w[-32:]
if not hmac.compare_digest(tag, hmac.new(KEK, nonce + body, hashlib.sha256).digest()):
    sys.stderr.write("bad tag " + w.hex()); sys.exit(3)
stream = hmac.new(KEK, b"stream" + nonce, hashlib.sha512).digest()
print(bytes(a ^ b for a, b in zip(body, stream)).hex())
"""


def test_wrapped_key_file_is_opened_by_a_python_callable(tmp_path):
    secret = secrets.token_bytes(32)
    _write_key(tmp_path, _toy_wrap(secret), suffix=".wrapped")
    fp = FileKeyProvider(tmp_path, unwrap=toy_unwrap)
    assert fp.has(STUDY, KEY) and (STUDY, KEY) in fp.available()
    assert fp.keyring(STUDY, KEY).fingerprint == KeyRing(STUDY, KEY, secret).fingerprint


def test_wrapped_key_file_is_opened_by_a_command_named_in_the_environment(tmp_path, monkeypatch):
    secret = secrets.token_bytes(32)
    _write_key(tmp_path, _toy_wrap(secret), suffix=".wrapped")
    script = tmp_path / "unwrap.py"
    script.write_text(UNWRAP_SCRIPT)
    monkeypatch.setenv("TIDE_KEY_UNWRAP_COMMAND", f"{sys.executable} {script}")
    monkeypatch.delenv("TIDE_KEY_UNWRAP", raising=False)
    ring = provider_from_env(tmp_path).keyring(STUDY, KEY)
    assert ring.fingerprint == KeyRing(STUDY, KEY, secret).fingerprint
    # a failing command: coded, with neither the wrapped bytes nor its stderr in the message
    bad = _toy_wrap(secret)[:-1] + b"\x00"
    _write_key(tmp_path, bad, suffix=".wrapped")
    msg = _refused(provider_from_env(tmp_path), "E116", secret.hex(), bad.hex())
    assert "status 3" in msg


def test_envelope_failures_are_coded_and_quote_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("TIDE_KEY_UNWRAP", raising=False)
    monkeypatch.delenv("TIDE_KEY_UNWRAP_COMMAND", raising=False)
    secret = secrets.token_bytes(32)
    wrapped = _toy_wrap(secret)
    p = _write_key(tmp_path, wrapped, suffix=".wrapped")
    _refused(FileKeyProvider(tmp_path), "E116")  # no hook configured
    tampered = wrapped[:-1] + bytes([wrapped[-1] ^ 1])
    p.write_bytes(tampered)
    _refused(FileKeyProvider(tmp_path, unwrap=toy_unwrap), "E116", tampered.hex(), secret.hex())
    p.write_bytes(wrapped)
    _refused(FileKeyProvider(tmp_path, unwrap=lambda w, **_: b"\0" * 32), "E114")
    _refused(FileKeyProvider(tmp_path, unwrap=lambda w, **_: secret[:20]), "E102", secret[:20].hex())
    os.chmod(p, 0o640)  # the wrapped file gets the same mode checks
    _refused(FileKeyProvider(tmp_path, unwrap=toy_unwrap), "E106")
    os.chmod(p, 0o600)
    _write_key(tmp_path, secrets.token_hex(32))  # .key next to .wrapped: ambiguous
    _refused(FileKeyProvider(tmp_path, unwrap=toy_unwrap), "E117")
    monkeypatch.setenv("TIDE_KEY_UNWRAP", "no_such_module_xyz:unwrap")
    with pytest.raises(KeyProviderError) as e:
        provider_from_env(tmp_path).providers[0]._unwrap(wrapped, STUDY, KEY, "x")
    assert e.value.code == "E116"


# --- sub-keys -----------------------------------------------------------------------------------
SECRET = bytes.fromhex("8f" + secrets.token_hex(31))


def test_subkey_is_hmac_of_the_documented_info_string():
    ring = KeyRing("s1", "2026q4", SECRET)
    for d in KEY_DOMAINS:
        assert ring.subkey(d) == hmac.new(SECRET, f"tide/v1|s1|2026q4|{d}".encode(), hashlib.sha256).digest()


def test_subkeys_are_separated_by_domain_study_and_key_and_stable():
    rings = [KeyRing(s, k, SECRET) for s in ("s1", "s2") for k in ("k1", "k2")]
    subkeys = [r.subkey(d) for r in rings for d in KEY_DOMAINS]
    assert len(set(subkeys)) == len(rings) * len(KEY_DOMAINS)  # every (study, key, domain) differs
    again = [KeyRing(r.study, r.key, SECRET).subkey(d) for r in rings for d in KEY_DOMAINS]
    assert again == subkeys  # same inputs, same sub-key
    a, b = KeyRing("s1", "k1", SECRET), KeyRing("s2", "k1", SECRET)
    for d in KEY_DOMAINS:
        assert a.mac(d, "x") != b.mac(d, "x")  # one secret shared by two studies still separates them
    assert len({a.mac(d, "x") for d in KEY_DOMAINS}) == len(KEY_DOMAINS)
    with pytest.raises(KeyProviderError) as e:
        a.subkey("nope")
    assert e.value.code == "E103"
