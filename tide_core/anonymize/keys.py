"""Key material: providers and the per-(study, key) key ring.

A *key* is a named key version (``2026q4``) whose secret, for one study, comes from a key
provider.  Each operator family gets its own sub-key: ``HMAC-SHA256(secret, "tide/v1|study|key|domain")``.
Secrets never appear in ``repr``, logs, errors or tables; tables record ``fingerprint`` only.

Providers: :class:`FileKeyProvider` (``<root>/<study>/<key>.key``, or an envelope-wrapped
``<key>.wrapped`` opened by a local unwrap hook), :class:`EnvKeyProvider` (``TIDE_KEY_<STUDY>__<KEY>``)
and :class:`ChainKeyProvider`.  A key file is read only when it and its study directory are real
(not symbolic links), owned by the user running TIDE and closed to group and others (mask
``0o077``), the file has one hard link, and the key directory root is owned by that user (or root)
and not writable by group or others; every secret must be at least 32 bytes and not trivially
guessable (all one byte, a short repeated block, a counting sequence).

A study may also hold a *date secret* under the reserved key name ``dates`` (``<study>/dates.key``
or ``.wrapped``, made with ``tide keys new --study S --key dates``; ``TIDE_KEY_<STUDY>__DATES``):
every key ring of that study then takes its ``date`` sub-key from it, so a patient's date offset is
the same under every key version (k linked releases narrow dates no more than one) and the
fingerprint changes with it.  ``dates`` is never listed as a key version.

A key directory laid out as a Kubernetes Secret volume (``<root>/..data -> ..<timestamp>`` and
``<root>/<study> -> ..data/<study>``, the Secret's ``items:`` mapping its keys to
``<study>/<key>.key``) is read through those links: each link is resolved inside the mount, one that
leads outside it is refused (E119), and the real directories and file must be owned by root or the
user running TIDE and not writable by group or others (the kubelet writes them read-only, with the
Secret's ``defaultMode``).  ``tide keys install`` copies such a mount into a private directory
(0700 directories, 0400 files) for an init container.  Every refusal is a coded
:class:`KeyProviderError` that names the file or variable and never any byte of the secret:

=====  ==========================================================================
E101   not hex or base64 text (including binary / undecodable files)
E102   shorter than 32 bytes
E106   key file readable or writable by group or others (in a Secret volume: writable)
E111   key directory accessible to group or others, or the key directory root writable by them
E112   key file or key directory is a symbolic link, or not a regular file/directory
E113   key file or key directory owned by another user
E114   low-entropy secret (one repeated byte, a short repeated block, a counting sequence)
E115   key file unreadable or over 64 KiB
E116   envelope: no unwrap hook configured, the hook failed, or it is misconfigured
E117   both ``<key>.key`` and ``<key>.wrapped`` exist (ambiguous)
E118   key file has more than one hard link
E119   a link in a Kubernetes Secret volume leads outside the mount (absolute, or through ``..``)
=====  ==========================================================================
"""

from __future__ import annotations

import base64
import binascii
import errno
import hashlib
import hmac
import os
import re
import secrets
import shlex
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tide_core.errors import ConfigError, KeyProviderError
from tide_core.plugins import load_dotted
from tide_core.types import KEY_DOMAINS

if TYPE_CHECKING:
    from _hashlib import HASH

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
MIN_SECRET_BYTES = 32


def check_name(kind: str, value: str) -> str:
    """``value`` when it is a valid ``kind`` (study or key) name, else E100.

    Names become directory and file names and environment variable parts, so only a safe character
    set is accepted.
    """
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise KeyProviderError(
            "E100",
            f"invalid {kind} name {value!r}",
            hint="use 1-63 characters: letters, digits, '_', '.', '-', starting with a letter or digit",
        )
    return value


MAX_KEY_FILE_BYTES = 64 * 1024
#: Mode bits a key file or key directory must not have: any group or other access.
FORBIDDEN_MODE_BITS = 0o077
#: Mode bits the key directory root, and the directories and files of a Secret volume, must not
#: have: group or other write.
FORBIDDEN_WRITE_BITS = 0o022
#: The link a Kubernetes Secret (or ConfigMap, projected) volume keeps at its root, pointing at the
#: timestamped directory that holds the current files; its presence marks the layout.
SECRET_VOLUME_DATA = "..data"
#: Links followed at most while resolving one path in a Secret volume (as the kernel's ELOOP limit).
MAX_LINK_HOPS = 40
_HINT_NEW = "create one with `tide keys new --study S --key K`"
#: The reserved key name of a study's date secret (``<study>/dates.key``, ``TIDE_KEY_<STUDY>__DATES``):
#: when the provider has one, every key ring of the study takes its date offsets from it.
DATES_KEY = "dates"


def _low_entropy(secret: bytes) -> bool:
    """True for secrets no random generator produces.

    That is few distinct bytes (all-zero, one repeated byte), a block of up to half the length
    repeated, or a constant-step sequence (00 01 02 ...).
    """
    n = len(secret)
    if len(set(secret)) < 8:
        return True
    for period in range(1, n // 2 + 1):
        if n % period == 0 and secret == secret[:period] * (n // period):
            return True
    steps = {(secret[i + 1] - secret[i]) % 256 for i in range(n - 1)}
    return len(steps) == 1


def check_secret(secret: bytes, where: str) -> bytes:
    """Length and entropy checks every secret passes (whatever provider it came from)."""
    if len(secret) < MIN_SECRET_BYTES:
        raise KeyProviderError(
            "E102",
            f"key secret in {where} is {len(secret)} bytes; at least {MIN_SECRET_BYTES} are required",
            hint=_HINT_NEW,
        )
    if _low_entropy(secret):
        raise KeyProviderError(
            "E114",
            f"key secret in {where} has too little entropy (a repeated byte or block, or a counting sequence)",
            hint="use a random secret: "
            + _HINT_NEW
            + " (or `python -c 'import secrets; print(secrets.token_hex(32))'`)",
        )
    return secret


def parse_secret(raw: str | bytes, where: str) -> bytes:
    """Secrets are hex or base64 text of at least 32 bytes (see :func:`check_secret`)."""
    bad = KeyProviderError(
        "E101",
        f"key secret in {where} is neither hex nor base64 text",
        hint="the secret must be one line of hex or base64; " + _HINT_NEW,
    )
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("ascii", errors="strict")
        except UnicodeDecodeError:
            raise bad from None  # the codec's message would quote a byte of the file
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
        raise bad
    return check_secret(decoded, where)


_SHA256_BLOCK = 64
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))


def hmac_states(key: bytes) -> tuple[HASH, HASH]:
    """HMAC-SHA256 (RFC 2104) keyed with ``key``, as its two hash states.

    The inner one has absorbed ``key ^ ipad``, the outer one ``key ^ opad``.  ``HMAC(key, m) = outer.copy().update(
    inner.copy().update(m).digest()).digest()``, without keying a new HMAC per message.
    """
    if len(key) > _SHA256_BLOCK:
        key = hashlib.sha256(key).digest()
    block = key.ljust(_SHA256_BLOCK, b"\0")
    return hashlib.sha256(block.translate(_IPAD)), hashlib.sha256(block.translate(_OPAD))


@dataclass(frozen=True)
class KeyRing:
    """Sub-keys for one (study, key) cell."""

    study: str
    key: str
    _secret: bytes = field(repr=False)
    # the study's date secret (``<study>/dates.key``), when the provider has one: date offsets then
    # come from it and stay the same under every key version of the study (see ``subkey``)
    _date_secret: bytes | None = field(default=None, repr=False)
    # per-domain sub-keys, derived once (speed only: the output is the same HMAC); in memory
    # with the secret itself, never pickled or printed
    _mac_keys: dict[str, bytes] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)
    # per-domain HMAC-SHA256 states with the sub-key already absorbed (inner, outer): a call copies
    # them instead of keying a new HMAC, same bytes out
    _mac_states: dict[str, tuple[HASH, HASH]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        check_name("study", self.study)
        check_name("key", self.key)

    def __repr__(self) -> str:
        return f"KeyRing(study={self.study!r}, key={self.key!r}, fingerprint={self.fingerprint})"

    def __reduce__(self) -> tuple[type[KeyRing], tuple[str, str, bytes, bytes | None]]:
        # Ray may need to ship a key ring to a worker; the secret travels only inside the object store.
        return (KeyRing, (self.study, self.key, self._secret, self._date_secret))

    def subkey(self, domain: str) -> bytes:
        """The sub-key of one operator family (``domain``): ``HMAC-SHA256(secret, "tide/v1|study|key|domain")``.

        Separate sub-keys keep one family's surrogates from revealing another's; the ``date`` sub-key
        comes from the study's date secret when there is one, so date shifts do not change with the key.
        """
        if domain not in KEY_DOMAINS:
            raise KeyProviderError(
                "E103", f"unknown key domain {domain!r}", hint=f"use one of {', '.join(KEY_DOMAINS)}"
            )
        if domain == "date" and self._date_secret is not None:  # the same for every key version
            info = f"tide/v1|{self.study}|{DATES_KEY}|{domain}".encode()
            return hmac.new(self._date_secret, info, hashlib.sha256).digest()
        info = f"tide/v1|{self.study}|{self.key}|{domain}".encode()
        return hmac.new(self._secret, info, hashlib.sha256).digest()

    def _states(self, domain: str) -> tuple[HASH, HASH]:
        states = self._mac_states.get(domain)
        if states is None:
            key = self._mac_keys.get(domain)
            if key is None:  # subkey() rejects an unknown domain before anything is cached
                key = self._mac_keys[domain] = self.subkey(domain)
            states = self._mac_states[domain] = hmac_states(key)
        return states

    def mac(self, domain: str, *parts: str | bytes) -> bytes:
        """Keyed PRF over a domain-separated, length-prefixed tuple of parts (HMAC-SHA256)."""
        inner_state, outer_state = self._states(domain)
        inner = inner_state.copy()
        for part in parts:
            b = part.encode("utf-8") if isinstance(part, str) else bytes(part)
            inner.update(len(b).to_bytes(4, "big"))
            inner.update(b)
        outer = outer_state.copy()
        outer.update(inner.digest())
        return outer.digest()

    def mac_int(self, domain: str, *parts: str | bytes) -> int:
        """:meth:`mac` as a big-endian integer: the keyed index operators reduce modulo a list or domain size."""
        return int.from_bytes(self.mac(domain, *parts), "big")

    @property
    def fingerprint(self) -> str:
        """Public, non-reversible identifier of the key material (safe to store in tables).

        A study date secret changes it (the dates a key gives change with it).
        """
        message = b"tide/v1|fingerprint"
        if self._date_secret is not None:
            message += b"|dates|" + hmac.new(self._date_secret, b"tide/v1|dates", hashlib.sha256).digest()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:16]

    @property
    def study_dates(self) -> bool:
        """True when date offsets come from the study's date secret (the same under every key)."""
        return self._date_secret is not None


class KeyProvider(Protocol):
    """Where a study's key secrets come from: the seam every key source implements.

    The runner, the release and the CLI ask only for a :class:`KeyRing` and never see a secret, so a
    site can plug in its own source (a KMS, a vault) by implementing these three methods.  The
    built-in providers are :class:`FileKeyProvider`, :class:`EnvKeyProvider` and
    :class:`ChainKeyProvider`.
    """

    def keyring(self, study: str, key: str) -> KeyRing:
        """The key ring of (study, key); a coded :class:`KeyProviderError` when there is none.

        The error names the file or variable, never a byte of the secret.
        """

    def has(self, study: str, key: str) -> bool:
        """Whether this provider holds a secret for (study, key), without reading it."""

    def available(self) -> list[tuple[str, str]]:
        """The (study, key) pairs this provider can list, sorted (release discovery reads it).

        A provider that cannot enumerate its secrets returns ``[]``.
        """


def env_var_name(study: str, key: str) -> str:
    """The environment variable EnvKeyProvider reads for (study, key)."""

    def norm(s: str) -> str:
        return re.sub(r"[^A-Za-z0-9]", "_", s).upper()

    return f"TIDE_KEY_{norm(study)}__{norm(key)}"


class EnvKeyProvider:
    """Secrets in environment variables ``TIDE_KEY_<STUDY>__<KEY>`` (hex or base64)."""

    def __init__(self, environ: dict[str, str] | None = None):
        self._env = os.environ if environ is None else environ

    def has(self, study: str, key: str) -> bool:
        """Whether :func:`env_var_name` of (study, key) is set."""
        return env_var_name(study, key) in self._env

    def keyring(self, study: str, key: str) -> KeyRing:
        """The key ring from ``TIDE_KEY_<STUDY>__<KEY>``; E104 when it is unset.

        The secret passes the same length and entropy checks as a key file's, and the study's date
        secret (``TIDE_KEY_<STUDY>__DATES``) joins the ring when it is set.
        """
        check_name("study", study)
        check_name("key", key)
        var = env_var_name(study, key)
        if var not in self._env:
            raise KeyProviderError(
                "E104",
                f"no key secret for study {study!r}, key {key!r}: {var} is not set",
                hint=f"export {var}=<64 hex characters> or use a key directory (TIDE_KEY_DIR)",
            )
        secret = parse_secret(self._env[var], var)
        if key != DATES_KEY and self.has(study, DATES_KEY):
            return KeyRing(study, key, secret, self.keyring(study, DATES_KEY)._secret)
        return KeyRing(study, key, secret)

    def available(self) -> list[tuple[str, str]]:
        """Nothing: variable names are normalised (upper case, ``_``) and cannot be mapped back to names."""
        return []


#: An unwrap hook: gets the wrapped bytes of ``<key>.wrapped`` and returns the secret, as raw bytes
#: or as hex/base64 text.  Either a Python callable ``f(wrapped, *, study, key)`` or a command line
#: (string or argv list) that reads the wrapped bytes on stdin and prints the secret as hex/base64.
UnwrapHook = Callable[..., bytes | str] | str | list[str] | tuple[str, ...]

UNWRAP_ENV = "TIDE_KEY_UNWRAP"  # "package.module:function"
UNWRAP_COMMAND_ENV = "TIDE_KEY_UNWRAP_COMMAND"  # a command line, e.g. "kms-unwrap --key-ring tide"
UNWRAP_TIMEOUT_S = 60


def unwrap_hook_from_env(environ: dict[str, str] | None = None) -> UnwrapHook | None:
    """The unwrap hook named by ``$TIDE_KEY_UNWRAP`` (a callable) or ``$TIDE_KEY_UNWRAP_COMMAND``."""
    env = os.environ if environ is None else environ
    if env.get(UNWRAP_ENV):
        target = env[UNWRAP_ENV]
        try:
            fn = load_dotted(target) if target.partition(":")[2] else None
        except ConfigError:  # E233/E234: not importable
            fn = None
        if not callable(fn):
            raise KeyProviderError(
                "E116",
                f"{UNWRAP_ENV}={target!r} does not name an importable callable",
                hint="set it to 'package.module:function'; the function gets (wrapped, *, study, key)",
            )
        hook: Callable[..., bytes | str] = fn
        return hook
    if env.get(UNWRAP_COMMAND_ENV):
        return env[UNWRAP_COMMAND_ENV]
    return None


class FileKeyProvider:
    """Secrets in ``<root>/<study>/<key>.key`` (hex/base64 text) or ``<key>.wrapped`` (envelope).

    Both the file and its study directory must be real (no symbolic link), owned by the effective
    user and closed to group and others; they are opened without following links and checked on the
    open descriptors, so a swap between check and read cannot slip a different file in.  A
    ``.wrapped`` file holds the secret encrypted under a key-management key (KMS, HSM, Vault
    transit); ``unwrap`` (or ``$TIDE_KEY_UNWRAP`` / ``$TIDE_KEY_UNWRAP_COMMAND``) turns it into the
    secret locally, so the plain secret never rests on disk.
    """

    def __init__(self, root: str | os.PathLike[str], unwrap: UnwrapHook | None = None):
        self.root = Path(root)
        self.unwrap = unwrap

    def path(self, study: str, key: str) -> Path:
        """``<root>/<study>/<key>.key``, with both names checked (E100) before they touch the file system."""
        return self.root / check_name("study", study) / f"{check_name('key', key)}.key"

    def wrapped_path(self, study: str, key: str) -> Path:
        """``<root>/<study>/<key>.wrapped``: the envelope-encrypted form an unwrap hook opens."""
        return self.path(study, key).with_suffix(".wrapped")

    def has(self, study: str, key: str) -> bool:
        """Whether a ``.key`` or ``.wrapped`` entry exists (a link counts: reading it refuses it, E112)."""
        return os.path.lexists(self.path(study, key)) or os.path.lexists(self.wrapped_path(study, key))

    def is_secret_volume(self) -> bool:
        """True when the root is laid out as a Kubernetes Secret volume (``..data`` is a link)."""
        return os.path.islink(self.root / SECRET_VOLUME_DATA)

    # -- secure reading --------------------------------------------------------------------------
    def _check_root(self) -> None:
        """Refuse a key directory root that others could write (E111, E112, E113).

        The root (followed if it is itself a link: that is the operator's configuration) must be
        a directory owned by root or the user running TIDE and not writable by group or others,
        unless it is a read-only mount (a Kubernetes Secret volume's tmpfs root).
        """
        try:
            st = os.stat(self.root)
        except OSError as exc:
            raise KeyProviderError(
                "E115", f"key directory root {self.root} cannot be read ({type(exc).__name__})", hint="check the path"
            ) from None
        if not stat.S_ISDIR(st.st_mode):
            raise KeyProviderError(
                "E112", f"key directory root {self.root} is not a directory", hint="use <root>/<study>/<key>.key"
            )
        if st.st_uid not in (0, os.geteuid()):
            raise KeyProviderError(
                "E113",
                f"key directory root {self.root} is owned by uid {st.st_uid}, not by root or the user running "
                f"TIDE (uid {os.geteuid()})",
                hint=f"`chown {os.geteuid()} {self.root}`, or use a directory this user owns",
            )
        mode = stat.S_IMODE(st.st_mode)
        if mode & FORBIDDEN_WRITE_BITS and not os.statvfs(self.root).f_flag & os.ST_RDONLY:
            raise KeyProviderError(
                "E111",
                f"key directory root {self.root} has permissions {oct(mode)}; group/other write is not allowed",
                hint=f"run `chmod go-w {self.root}` (700 is best)",
            )

    def _resolve_in_volume(self, p: Path) -> list[str]:
        """The real components (no links) of ``p`` under the root of a Secret volume.

        Every link on the way is resolved by hand and must stay inside the mount (relative, never
        above the root).
        """
        pending = list(p.relative_to(self.root).parts)
        resolved: list[str] = []
        hops = 0
        while pending:
            part = pending.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not resolved:
                    raise KeyProviderError(
                        "E119",
                        f"a link on the way to {p} leads above the Secret volume {self.root}",
                        hint="links in a key volume must stay inside it (mount the Secret as Kubernetes lays it out)",
                    )
                resolved.pop()
                continue
            here = self.root.joinpath(*resolved, part)
            try:
                st = os.lstat(here)
            except OSError as exc:
                raise KeyProviderError(
                    "E115", f"key path {here} cannot be read ({type(exc).__name__})", hint="check the Secret's items"
                ) from None
            if not stat.S_ISLNK(st.st_mode):
                resolved.append(part)
                continue
            hops += 1
            target = os.readlink(here)
            if hops > MAX_LINK_HOPS or os.path.isabs(target):
                raise KeyProviderError(
                    "E119" if os.path.isabs(target) else "E112",
                    f"the link {here} "
                    + ("is absolute: it leads outside the Secret volume" if os.path.isabs(target) else "loops"),
                    hint="links in a key volume must be relative and stay inside it",
                )
            pending = target.split("/") + pending
        return resolved

    @staticmethod
    def _check_volume_entry(st: os.stat_result, what: str, where: Path, is_dir: bool) -> None:
        if st.st_uid not in (0, os.geteuid()):
            raise KeyProviderError(
                "E113",
                f"key {what} {where} is owned by uid {st.st_uid}, not by root or the user running TIDE "
                f"(uid {os.geteuid()})",
                hint="a Secret volume is written by the kubelet as root; check the pod's securityContext",
            )
        mode = stat.S_IMODE(st.st_mode)
        if mode & FORBIDDEN_WRITE_BITS:
            raise KeyProviderError(
                "E111" if is_dir else "E106",
                f"key {what} {where} has permissions {oct(mode)}; group/other write is not allowed",
                hint="mount the Secret with defaultMode 0400 (0440 with an fsGroup)",
            )

    def _read_volume(self, p: Path) -> bytes:
        """Bytes of ``p`` in a Kubernetes Secret volume.

        Links are resolved inside the mount, then every real directory and the file are opened
        without following links and checked on the descriptors.
        """
        parts = self._resolve_in_volume(p)
        if not parts:  # the links led back to the root itself
            raise KeyProviderError("E112", f"key file {p} resolves to the volume's root", hint="use <study>/<key>.key")
        flags_dir = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
        flags_file = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            dfd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError as exc:
            raise KeyProviderError(
                "E115", f"key directory root {self.root} cannot be opened ({type(exc).__name__})", hint="check the path"
            ) from None
        try:
            where = self.root
            for part in parts[:-1]:
                where = where / part
                try:
                    nfd = os.open(part, flags_dir, dir_fd=dfd)
                except OSError as exc:
                    raise KeyProviderError(
                        "E112" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else "E115",
                        f"key directory {where} cannot be opened as a real directory ({type(exc).__name__})",
                        hint="mount the Secret as Kubernetes lays it out",
                    ) from None
                os.close(dfd)
                dfd = nfd
                self._check_volume_entry(os.fstat(dfd), "directory", where, True)
            where = where / parts[-1]
            try:
                fd = os.open(parts[-1], flags_file, dir_fd=dfd)
            except OSError as exc:
                raise KeyProviderError(
                    "E112" if exc.errno == errno.ELOOP else "E115",
                    f"key file {where} cannot be opened as a regular file ({type(exc).__name__})",
                    hint="the key must be a regular file of the Secret volume",
                ) from None
            try:
                return self._read_fd(fd, where, volume=True)
            finally:
                os.close(fd)
        finally:
            os.close(dfd)

    def _read_fd(self, fd: int, p: Path, volume: bool = False) -> bytes:
        """The checks on an open key file (type, owner and mode, hard links, size), then its bytes."""
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise KeyProviderError(
                "E112", f"key file {p} is not a regular file", hint="the key file must be a regular file"
            )
        if volume:
            self._check_volume_entry(st, "file", p, False)
        else:
            self._check_owner_and_mode(st, "file", p, False)
        if st.st_nlink > 1:
            raise KeyProviderError(
                "E118",
                f"key file {p} has {st.st_nlink} hard links; a key file must have exactly one",
                hint="copy the key to a file of its own (`cp` then `chmod 600`) and remove the other links",
            )
        if st.st_size > MAX_KEY_FILE_BYTES:
            raise KeyProviderError(
                "E115",
                f"key file {p} is {st.st_size} bytes; a key file is at most {MAX_KEY_FILE_BYTES}",
                hint="a .key file holds one line of hex or base64",
            )
        chunks, total = [], 0
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_KEY_FILE_BYTES:
                raise KeyProviderError(
                    "E115",
                    f"key file {p} is over {MAX_KEY_FILE_BYTES} bytes",
                    hint="a .key file holds one line of hex or base64",
                )
        return b"".join(chunks)

    @staticmethod
    def _check_owner_and_mode(st: os.stat_result, what: str, where: Path, is_dir: bool) -> None:
        if st.st_uid != os.geteuid():
            raise KeyProviderError(
                "E113",
                f"key {what} {where} is owned by uid {st.st_uid}, not by the user running TIDE (uid {os.geteuid()})",
                hint=f"run TIDE as the owner, or `chown {os.geteuid()} {where}` if this user should own it",
            )
        mode = stat.S_IMODE(st.st_mode)
        if mode & FORBIDDEN_MODE_BITS:
            raise KeyProviderError(
                "E111" if is_dir else "E106",
                f"key {what} {where} has permissions {oct(mode)}; group/other access is not allowed",
                hint=f"run `chmod {'700' if is_dir else '600'} {where}`",
            )

    def _read_secure(self, p: Path) -> bytes:
        """Bytes of key file ``p`` after the link, type, owner and mode checks (root, directory, file)."""
        self._check_root()
        if self.is_secret_volume():
            return self._read_volume(p)
        flags_dir = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
        flags_file = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        for what, q in (("directory", p.parent), ("file", p)):
            try:
                st = os.lstat(q)
            except OSError as exc:
                raise KeyProviderError(
                    "E115", f"key {what} {q} cannot be read ({type(exc).__name__})", hint="check the path"
                ) from None
            if stat.S_ISLNK(st.st_mode):
                raise KeyProviderError(
                    "E112",
                    f"key {what} {q} is a symbolic link; links are not followed",
                    hint=f"replace the link with the real {what} (mode {'700' if what == 'directory' else '600'})",
                )
        try:
            dfd = os.open(p.parent, flags_dir)
        except OSError as exc:
            raise KeyProviderError(
                "E112" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else "E115",
                f"key directory {p.parent} cannot be opened as a real directory ({type(exc).__name__})",
                hint="the study directory must be a real directory (not a link) with mode 700",
            ) from None
        try:
            dst = os.fstat(dfd)
            if not stat.S_ISDIR(dst.st_mode):
                raise KeyProviderError(
                    "E112", f"key directory {p.parent} is not a directory", hint="use <root>/<study>/<key>.key"
                )
            self._check_owner_and_mode(dst, "directory", p.parent, True)
            try:
                fd = os.open(p.name, flags_file, dir_fd=dfd)
            except OSError as exc:
                raise KeyProviderError(
                    "E112" if exc.errno == errno.ELOOP else "E115",
                    f"key file {p} cannot be opened as a regular file ({type(exc).__name__})",
                    hint="the key file must be a regular file (not a link) with mode 600",
                ) from None
            try:
                return self._read_fd(fd, p)
            finally:
                os.close(fd)
        finally:
            os.close(dfd)

    def _unwrap(self, wrapped: bytes, study: str, key: str, where: str) -> bytes:
        hook = self.unwrap if self.unwrap is not None else unwrap_hook_from_env()
        if hook is None:
            raise KeyProviderError(
                "E116",
                f"{where} is an envelope-wrapped key but no unwrap hook is configured",
                hint=f"set {UNWRAP_COMMAND_ENV} (a command reading the wrapped key on stdin and printing the "
                f"secret as hex) or {UNWRAP_ENV}=package.module:function",
            )
        if callable(hook):
            try:
                out = hook(wrapped, study=study, key=key)
            except Exception as exc:  # the hook's message may quote key material: report the type only
                raise KeyProviderError(
                    "E116",
                    f"the unwrap hook failed for {where} ({type(exc).__name__})",
                    hint="check the key-management service and the hook's credentials",
                ) from None
            if isinstance(out, str):
                return parse_secret(out, f"the unwrap hook's output for {where}")
            if isinstance(out, (bytes, bytearray)):
                return check_secret(bytes(out), f"the unwrap hook's output for {where}")
            raise KeyProviderError(
                "E116",
                f"the unwrap hook returned {type(out).__name__} for {where}; expected bytes or str",
                hint="return the raw secret (bytes) or its hex/base64 text (str)",
            )
        argv = shlex.split(hook) if isinstance(hook, str) else [str(a) for a in hook]
        if not argv:
            raise KeyProviderError("E116", "the unwrap command is empty", hint=f"set {UNWRAP_COMMAND_ENV}")
        try:
            proc = subprocess.run(
                argv,
                input=wrapped,
                capture_output=True,
                timeout=UNWRAP_TIMEOUT_S,
                env=dict(os.environ, TIDE_KEY_STUDY=study, TIDE_KEY_NAME=key),
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise KeyProviderError(
                "E116",
                f"the unwrap command {argv[0]!r} could not run for {where} ({type(exc).__name__})",
                hint="check the command and its timeout",
            ) from None
        if proc.returncode != 0:  # its stderr is not echoed: it may quote key material
            raise KeyProviderError(
                "E116",
                f"the unwrap command {argv[0]!r} exited with status {proc.returncode} for {where}",
                hint="run the command by hand on the wrapped file to see its own error",
            )
        return parse_secret(proc.stdout, f"the unwrap command's output for {where}")

    def keyring(self, study: str, key: str) -> KeyRing:
        """The key ring of (study, key) from its key file, read with every ownership and mode check.

        A ``.wrapped`` file is opened by the unwrap hook; both forms at once are ambiguous (E117).
        The study's date secret, when there is one, joins the ring.
        """
        p, w = self.path(study, key), self.wrapped_path(study, key)
        has_plain, has_wrapped = os.path.lexists(p), os.path.lexists(w)
        if has_plain and has_wrapped:
            raise KeyProviderError(
                "E117",
                f"both {p.name} and {w.name} exist for study {study!r}, key {key!r}",
                hint="keep exactly one of them",
            )
        if has_wrapped:
            secret = self._unwrap(self._read_secure(w), study, key, str(w))
            return self._with_dates(KeyRing(study, key, secret))
        if not has_plain:
            raise KeyProviderError(
                "E105",
                f"no key secret for study {study!r}, key {key!r} at {p}",
                hint=f"create one with `tide keys new --study {study} --key {key} --key-dir {self.root}`",
            )
        return self._with_dates(KeyRing(study, key, parse_secret(self._read_secure(p), str(p))))

    def _with_dates(self, ring: KeyRing) -> KeyRing:
        """``ring`` with the study's date secret when ``<study>/dates.key`` (or ``.wrapped``) exists.

        The date secret is read with every check a key file gets.
        """
        if ring.key == DATES_KEY or not self.has(ring.study, DATES_KEY):
            return ring
        return KeyRing(ring.study, ring.key, ring._secret, self.keyring(ring.study, DATES_KEY)._secret)

    def create(self, study: str, key: str, overwrite: bool = False) -> Path:
        """Write a new random 32-byte secret for (study, key) as a private key file and return its path.

        A key version is immutable, so an existing one is refused (E107) unless ``overwrite``; the
        study directory is created private (0700) and the file 0600.
        """
        p = self.path(study, key)
        if (os.path.lexists(p) or os.path.lexists(self.wrapped_path(study, key))) and not overwrite:
            raise KeyProviderError(
                "E107", f"key file {p} already exists", hint="a key version is immutable; pick a new key name to rotate"
            )
        if os.path.islink(p.parent) or os.path.islink(p):
            raise KeyProviderError(
                "E112", f"key directory {p.parent} or file {p} is a symbolic link", hint="use real paths"
            )
        if not os.path.lexists(self.root):
            self.root.mkdir(parents=True, mode=0o700)
            os.chmod(self.root, 0o700)  # whatever the umask: the root must not be group/other-writable
        p.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(p.parent, 0o700)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        if not overwrite:
            flags |= os.O_EXCL
        fd = os.open(p, flags, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32) + "\n")
        os.chmod(p, 0o600)
        return p

    def available(self) -> list[tuple[str, str]]:
        """The (study, key) pairs with a ``.key`` or ``.wrapped`` file under the root, sorted.

        The study's date secret (``dates``) is not a key version and is left out.
        """
        if not self.root.is_dir():
            return []
        # names starting with '.' are skipped: a Secret volume's `..data` and `..<timestamp>` entries
        return sorted(
            {
                (s.name, k.stem)
                for s in self.root.iterdir()
                if _NAME_RE.match(s.name) and s.is_dir()
                for k in s.iterdir()
                if k.suffix in (".key", ".wrapped") and _NAME_RE.match(k.stem) and k.stem != DATES_KEY
            }
        )


def _private_dir(d: Path) -> None:
    """Create ``d`` (mode 0700) or accept an existing real directory this user owns, made 0700."""
    if not os.path.lexists(d):
        d.mkdir(parents=True, mode=0o700)
    st = os.lstat(d)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise KeyProviderError(
            "E112", f"key directory {d} is a symbolic link or not a directory", hint="install into a real directory"
        )
    if st.st_uid != os.geteuid():
        raise KeyProviderError(
            "E113",
            f"key directory {d} is owned by uid {st.st_uid}, not by the user installing the keys (uid {os.geteuid()})",
            hint="install into a new sub-directory of the emptyDir, e.g. --to /var/run/tide/keys",
        )
    os.chmod(d, 0o700)


def install_keys(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """Copy every ``<study>/<key>.key`` / ``.wrapped`` under ``source`` into ``target``.

    ``source`` is a key directory or a mounted Kubernetes Secret volume, read with all of
    :class:`FileKeyProvider`'s checks; ``target`` gets directories 0700 and files 0400, owned by
    the running user; ``.key`` secrets are validated first.

    For an init container that fills a private ``emptyDir`` the main container reads with
    ``TIDE_KEY_DIR``.  Re-running it is safe: a key already installed with the same bytes is kept; one
    with other bytes is refused (E107, key versions are immutable).  Returns the installed (study, key)
    pairs; never prints or returns any byte of a secret.
    """
    src, dst = FileKeyProvider(source), FileKeyProvider(target)
    pairs = src.available()
    pairs += [(s, DATES_KEY) for s in sorted({s for s, _ in pairs}) if src.has(s, DATES_KEY)]  # study date secrets
    if not pairs:
        raise KeyProviderError(
            "E105",
            f"no <study>/<key>.key or .wrapped files under {src.root}",
            hint="a Secret's keys cannot contain '/': map each to <study>/<key>.key with `items:` (docs/deployment.md)",
        )
    _private_dir(dst.root)
    for study, key in pairs:
        plain, wrapped = src.path(study, key), src.wrapped_path(study, key)
        if os.path.lexists(plain) and os.path.lexists(wrapped):
            raise KeyProviderError(
                "E117", f"both {plain.name} and {wrapped.name} exist for study {study!r}, key {key!r}", hint="keep one"
            )
        origin = wrapped if os.path.lexists(wrapped) else plain
        data = src._read_secure(origin)
        if origin is plain:  # refuse a bad secret now, in the init container, not at the first run
            data = (parse_secret(data, str(plain)).hex() + "\n").encode()
        out = dst.root / study / origin.name
        _private_dir(out.parent)
        if os.path.lexists(out):
            if dst._read_secure(out) != data:
                raise KeyProviderError(
                    "E107",
                    f"key file {out} already exists with other contents",
                    hint="a key version is immutable; pick a new key name to rotate",
                )
            continue
        tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o400)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o400)
            os.link(tmp, out)  # fails if `out` appeared meanwhile: never overwrites
        finally:
            os.unlink(tmp)
    return pairs


class ChainKeyProvider:
    """Try several providers in order (directory first, then environment)."""

    def __init__(self, *providers: KeyProvider) -> None:
        self.providers = providers

    def has(self, study: str, key: str) -> bool:
        """Whether any provider of the chain holds (study, key)."""
        return any(p.has(study, key) for p in self.providers)

    def keyring(self, study: str, key: str) -> KeyRing:
        """The key ring from the first provider that has (study, key); else the last one's coded error."""
        for p in self.providers:
            if p.has(study, key):
                return p.keyring(study, key)
        return self.providers[-1].keyring(study, key)  # raises a clear error

    def available(self) -> list[tuple[str, str]]:
        """The union of every provider's pairs, sorted."""
        out: set[tuple[str, str]] = set()
        for p in self.providers:
            out.update(p.available())
        return sorted(out)


def provider_from_env(
    key_dir: str | os.PathLike[str] | None = None, unwrap: UnwrapHook | None = None
) -> ChainKeyProvider:
    """Default provider: ``key_dir`` or ``$TIDE_KEY_DIR`` (default ``./.tide/keys``), then environment variables.

    ``.wrapped`` key files are opened with ``unwrap``, else the hook ``$TIDE_KEY_UNWRAP`` /
    ``$TIDE_KEY_UNWRAP_COMMAND`` names (looked up when such a file is read).
    """
    root = key_dir or os.environ.get("TIDE_KEY_DIR") or os.path.join(".tide", "keys")
    return ChainKeyProvider(FileKeyProvider(root, unwrap), EnvKeyProvider())


def keyring_for_tests(study: str, key: str, seed: str) -> KeyRing:
    """Deterministic key ring for tests and benchmarks only (never used by the pipeline)."""
    return KeyRing(study, key, hashlib.sha256(f"test-only|{seed}".encode()).digest())
