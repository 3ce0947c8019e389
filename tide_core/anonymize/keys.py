"""Key material: providers and the per-(study, key) key ring.

A *key* is a named key version (``2026q4``) whose secret, for one study, comes from a key
provider.  Each operator family gets its own sub-key: ``HMAC-SHA256(secret, "tide/v1|study|key|domain")``.
Secrets never appear in ``repr``, logs, errors or tables; tables record ``fingerprint`` only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tide_core.errors import KeyProviderError
from tide_core.types import KEY_DOMAINS

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
MIN_SECRET_BYTES = 32


def check_name(kind: str, value: str) -> str:
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise KeyProviderError(
            "E100",
            f"invalid {kind} name {value!r}",
            hint="use 1-63 characters: letters, digits, '_', '.', '-', starting with a letter or digit",
        )
    return value


def parse_secret(raw: str | bytes, where: str) -> bytes:
    """Secrets are hex or base64 text of at least 32 bytes."""
    if isinstance(raw, bytes):
        raw = raw.decode("ascii", errors="strict")
    text = raw.strip()
    decoded: bytes | None = None
    if re.fullmatch(r"[0-9a-fA-F]+", text) and len(text) % 2 == 0:
        decoded = bytes.fromhex(text)
    else:
        try:
            decoded = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            decoded = None
    if decoded is None:
        raise KeyProviderError(
            "E101",
            f"key secret in {where} is neither hex nor base64",
            hint="create one with `tide keys new --study S --key K`",
        )
    if len(decoded) < MIN_SECRET_BYTES:
        raise KeyProviderError(
            "E102",
            f"key secret in {where} is {len(decoded)} bytes; at least {MIN_SECRET_BYTES} are required",
            hint="create one with `tide keys new --study S --key K`",
        )
    return decoded


@dataclass(frozen=True)
class KeyRing:
    """Sub-keys for one (study, key) cell."""

    study: str
    key: str
    _secret: bytes = field(repr=False)

    def __post_init__(self) -> None:
        check_name("study", self.study)
        check_name("key", self.key)

    def __repr__(self) -> str:
        return f"KeyRing(study={self.study!r}, key={self.key!r}, fingerprint={self.fingerprint})"

    def __reduce__(self):
        # Ray may need to ship a key ring to a worker; the secret travels only inside the object store.
        return (KeyRing, (self.study, self.key, self._secret))

    def subkey(self, domain: str) -> bytes:
        if domain not in KEY_DOMAINS:
            raise KeyProviderError(
                "E103", f"unknown key domain {domain!r}", hint=f"use one of {', '.join(KEY_DOMAINS)}"
            )
        info = f"tide/v1|{self.study}|{self.key}|{domain}".encode()
        return hmac.new(self._secret, info, hashlib.sha256).digest()

    def mac(self, domain: str, *parts: str | bytes) -> bytes:
        """Keyed PRF over a domain-separated, length-prefixed tuple of parts."""
        h = hmac.new(self.subkey(domain), digestmod=hashlib.sha256)
        for part in parts:
            b = part.encode("utf-8") if isinstance(part, str) else bytes(part)
            h.update(len(b).to_bytes(4, "big"))
            h.update(b)
        return h.digest()

    def mac_int(self, domain: str, *parts: str | bytes) -> int:
        return int.from_bytes(self.mac(domain, *parts), "big")

    @property
    def fingerprint(self) -> str:
        """Public, non-reversible identifier of the key material (safe to store in tables)."""
        return hmac.new(self._secret, b"tide/v1|fingerprint", hashlib.sha256).hexdigest()[:16]


class KeyProvider(Protocol):
    def keyring(self, study: str, key: str) -> KeyRing: ...

    def has(self, study: str, key: str) -> bool: ...

    def available(self) -> list[tuple[str, str]]: ...


def env_var_name(study: str, key: str) -> str:
    """The environment variable EnvKeyProvider reads for (study, key)."""
    norm = lambda s: re.sub(r"[^A-Za-z0-9]", "_", s).upper()  # noqa: E731
    return f"TIDE_KEY_{norm(study)}__{norm(key)}"


class EnvKeyProvider:
    """Secrets in environment variables ``TIDE_KEY_<STUDY>__<KEY>`` (hex or base64)."""

    def __init__(self, environ: dict[str, str] | None = None):
        self._env = os.environ if environ is None else environ

    def has(self, study: str, key: str) -> bool:
        return env_var_name(study, key) in self._env

    def keyring(self, study: str, key: str) -> KeyRing:
        check_name("study", study)
        check_name("key", key)
        var = env_var_name(study, key)
        if var not in self._env:
            raise KeyProviderError(
                "E104",
                f"no key secret for study {study!r}, key {key!r}: {var} is not set",
                hint=f"export {var}=<64 hex characters> or use a key directory (TIDE_KEY_DIR)",
            )
        return KeyRing(study, key, parse_secret(self._env[var], var))

    def available(self) -> list[tuple[str, str]]:
        return []  # env names are normalised and cannot be mapped back reliably


class FileKeyProvider:
    """Secrets in ``<root>/<study>/<key>.key``; files must not be readable by group or others."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def path(self, study: str, key: str) -> Path:
        return self.root / check_name("study", study) / f"{check_name('key', key)}.key"

    def has(self, study: str, key: str) -> bool:
        return self.path(study, key).is_file()

    def keyring(self, study: str, key: str) -> KeyRing:
        p = self.path(study, key)
        if not p.is_file():
            raise KeyProviderError(
                "E105",
                f"no key secret for study {study!r}, key {key!r} at {p}",
                hint=f"create one with `tide keys new --study {study} --key {key} --key-dir {self.root}`",
            )
        mode = stat.S_IMODE(p.stat().st_mode)
        if mode & 0o077:
            raise KeyProviderError(
                "E106",
                f"key file {p} has permissions {oct(mode)}; group/other access is not allowed",
                hint=f"run `chmod 600 {p}`",
            )
        return KeyRing(study, key, parse_secret(p.read_text(), str(p)))

    def create(self, study: str, key: str, overwrite: bool = False) -> Path:
        p = self.path(study, key)
        if p.exists() and not overwrite:
            raise KeyProviderError(
                "E107", f"key file {p} already exists", hint="a key version is immutable; pick a new key name to rotate"
            )
        p.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(p.parent, 0o700)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32) + "\n")
        os.chmod(p, 0o600)
        return p

    def available(self) -> list[tuple[str, str]]:
        if not self.root.is_dir():
            return []
        return sorted((s.name, k.stem) for s in self.root.iterdir() if s.is_dir() for k in s.glob("*.key"))


class ChainKeyProvider:
    """Try several providers in order (directory first, then environment)."""

    def __init__(self, *providers):
        self.providers = providers

    def has(self, study: str, key: str) -> bool:
        return any(p.has(study, key) for p in self.providers)

    def keyring(self, study: str, key: str) -> KeyRing:
        for p in self.providers:
            if p.has(study, key):
                return p.keyring(study, key)
        return self.providers[-1].keyring(study, key)  # raises a clear error

    def available(self) -> list[tuple[str, str]]:
        out: set[tuple[str, str]] = set()
        for p in self.providers:
            out.update(p.available())
        return sorted(out)


def provider_from_env(key_dir: str | os.PathLike | None = None) -> ChainKeyProvider:
    """Default provider: ``key_dir`` or ``$TIDE_KEY_DIR`` (default ``./.tide/keys``), then environment variables."""
    root = key_dir or os.environ.get("TIDE_KEY_DIR") or os.path.join(".tide", "keys")
    return ChainKeyProvider(FileKeyProvider(root), EnvKeyProvider())


def keyring_for_tests(study: str, key: str, seed: str) -> KeyRing:
    """Deterministic key ring for tests and benchmarks only (never used by the pipeline)."""
    return KeyRing(study, key, hashlib.sha256(f"test-only|{seed}".encode()).digest())
