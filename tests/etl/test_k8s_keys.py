"""Keys as Kubernetes mounts them: a Secret volume recreated exactly on disk and read through the
documented paths (``TIDE_KEY_DIR`` at the mount, or ``tide keys install`` into a private directory).

The kubelet's layout (atomic writer): ``<mount>/..<timestamp>/`` holds the files, ``<mount>/..data``
links to it, and each top-level entry is a link ``<name> -> ..data/<name>``; with ``items:`` a key is
mapped to ``<study>/<key>.key``, so ``<study>`` is a linked directory.  Directories are 0755, files
have the Secret's ``defaultMode`` (0400 here, 0444 with Kubernetes' 0644 on a read-only mount, 0440
with an ``fsGroup``).  The key directory root and hard links are checked for every layout.
"""

from __future__ import annotations

import os
import random
import secrets
import stat
from pathlib import Path

import pytest

from tide_core.anonymize.keys import FileKeyProvider, KeyRing, install_keys, provider_from_env
from tide_core.cli.main import main
from tide_core.errors import KeyProviderError

TIMESTAMP = "..2026_12_05_10_00_00.123456789"


def secret_volume(mount: Path, items: dict[str, bytes], file_mode: int = 0o400, ts: str = TIMESTAMP) -> Path:
    """Lay ``items`` (path in the volume -> bytes) out as the kubelet does for a Secret volume."""
    mount.mkdir(parents=True)
    os.chmod(mount, 0o755)
    data = mount / ts
    data.mkdir()
    os.chmod(data, 0o755)
    for rel, content in items.items():
        f = data / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(f.parent, 0o755)
        f.write_bytes(content)
        os.chmod(f, file_mode)
    os.symlink(ts, mount / "..data")
    for top in sorted({rel.split("/")[0] for rel in items}):
        os.symlink(f"..data/{top}", mount / top)
    return mount


def _hex() -> bytes:
    return (secrets.token_hex(32) + "\n").encode()


def _ring(study: str, key: str, text: bytes) -> KeyRing:
    return KeyRing(study, key, bytes.fromhex(text.decode().strip()))


def _keyring_code(fp: FileKeyProvider, study: str, key: str) -> str:
    with pytest.raises(KeyProviderError) as e:
        fp.keyring(study, key)
    return e.value.code


def _code(fn) -> str:
    with pytest.raises(KeyProviderError) as e:
        fn()
    return e.value.code


@pytest.mark.parametrize("file_mode", [0o400, 0o444, 0o440])
def test_a_secret_volume_with_items_is_read_in_place(tmp_path, file_mode):
    k1, k2, k3 = _hex(), _hex(), _hex()
    mount = secret_volume(
        tmp_path / "keys",
        {"study-a/2026q4.key": k1, "study-a/2027q1.key": k2, "study_b/2026q4.key": k3},
        file_mode=file_mode,
    )
    # exactly the kubelet's layout: links at the top, real 0755 directories and files below
    assert os.readlink(mount / "..data") == TIMESTAMP
    assert os.readlink(mount / "study-a") == "..data/study-a"
    assert stat.S_IMODE(os.stat(mount / TIMESTAMP / "study-a").st_mode) == 0o755
    fp = FileKeyProvider(mount)
    assert fp.is_secret_volume()
    assert fp.available() == [("study-a", "2026q4"), ("study-a", "2027q1"), ("study_b", "2026q4")]
    for study, key, text in (("study-a", "2026q4", k1), ("study-a", "2027q1", k2), ("study_b", "2026q4", k3)):
        assert fp.has(study, key)
        assert fp.keyring(study, key).fingerprint == _ring(study, key, text).fingerprint
    # the default provider (TIDE_KEY_DIR at the mount, then the environment) reads the same
    assert (
        provider_from_env(mount).keyring("study_b", "2026q4").fingerprint == _ring("study_b", "2026q4", k3).fingerprint
    )
    assert not fp.has("study-a", "nope") and _code(lambda: fp.keyring("study-a", "nope")) == "E105"


def test_a_wrapped_key_in_a_secret_volume_is_unwrapped(tmp_path):
    secret = secrets.token_bytes(32)
    mount = secret_volume(tmp_path / "keys", {"s1/k1.wrapped": b"WRAPPED:" + secret[::-1]})

    def unwrap(wrapped: bytes, *, study: str, key: str) -> bytes:
        assert (study, key) == ("s1", "k1")
        return wrapped.removeprefix(b"WRAPPED:")[::-1]

    assert FileKeyProvider(mount, unwrap).keyring("s1", "k1").fingerprint == KeyRing("s1", "k1", secret).fingerprint


@pytest.mark.parametrize(
    "escape",
    [
        "study_link_up",  # <study> -> ../outside/<study>
        "study_link_absolute",  # <study> -> /abs/outside/<study>
        "data_link_up",  # ..data -> ../outside
        "file_link_up",  # the key file inside the timestamped directory links out of the mount
    ],
)
def test_a_link_that_leaves_the_mount_is_refused(tmp_path, escape):
    outside = tmp_path / "outside"
    (outside / "s1").mkdir(parents=True)
    (outside / "s1" / "k1.key").write_bytes(_hex())  # a valid key: only the escape check refuses it
    os.chmod(outside / "s1" / "k1.key", 0o400)
    mount = secret_volume(tmp_path / "keys", {"s1/k1.key": _hex(), "s2/k1.key": _hex()})
    if escape == "study_link_up":
        os.unlink(mount / "s1")
        os.symlink("../outside/s1", mount / "s1")
    elif escape == "study_link_absolute":
        os.unlink(mount / "s1")
        os.symlink(str(outside / "s1"), mount / "s1")
    elif escape == "data_link_up":
        os.unlink(mount / "..data")
        os.symlink("../outside", mount / "..data")
    else:
        real = mount / TIMESTAMP / "s1" / "k1.key"
        os.unlink(real)
        os.symlink("../../../outside/s1/k1.key", real)
    fp = FileKeyProvider(mount)
    assert fp.has("s1", "k1")  # the path exists through the links ...
    assert _code(lambda: fp.keyring("s1", "k1")) == "E119"  # ... but is never read
    if escape != "data_link_up":
        assert fp.keyring("s2", "k1")  # the rest of the volume still reads


def test_has_and_keyring_always_agree(tmp_path):
    """Over random Secret volumes and defects: whenever has() says yes, keyring() returns the key or
    raises a coded KeyProviderError, and a volume laid out as Kubernetes does always reads (never the
    E112 'link not followed' refusal of a key that has() reports)."""
    rng = random.Random(20261205)
    defects = [None, "group_write_file", "other_write_dir", "hard_link", "escape", "dangling", "loop", "to_root"]
    expected = {
        None: None,
        "group_write_file": "E106",
        "other_write_dir": "E111",
        "hard_link": "E118",
        "escape": "E119",
        "dangling": "E115",
        "loop": "E112",
        "to_root": "E112",
    }
    seen = set()
    for case in range(80):
        studies = [f"s{i}" for i in range(rng.randint(1, 3))]
        items = {f"{s}/k{j}.key": _hex() for s in studies for j in range(rng.randint(1, 3))}
        mount = secret_volume(tmp_path / f"v{case}", items, file_mode=rng.choice([0o400, 0o440, 0o444]))
        target = rng.choice(sorted(items))
        study, key = target.split("/")[0], target.split("/")[1].removesuffix(".key")
        real = mount / TIMESTAMP / target
        defect = rng.choice(defects)
        seen.add(defect)
        if defect == "group_write_file":
            os.chmod(real, 0o420)
        elif defect == "other_write_dir":
            os.chmod(real.parent, 0o757)
        elif defect == "hard_link":
            os.link(real, tmp_path / f"v{case}.copy")
        elif defect == "escape":
            os.unlink(real)
            os.symlink("../../../../etc/hostname", real)
        elif defect == "dangling":
            os.unlink(real)
            os.symlink("gone.key", real)
        elif defect == "loop":
            os.unlink(real)
            os.symlink(real.name, real)
        elif defect == "to_root":  # a link back to the mount's root: a directory, not a key
            os.unlink(real)
            os.symlink("../..", real)
        fp = FileKeyProvider(mount)
        for rel in items:
            s, k = rel.split("/")[0], rel.split("/")[1].removesuffix(".key")
            hit = (s, k) == (study, key) or (defect == "other_write_dir" and s == study)
            if defect is None or not hit:
                assert fp.has(s, k) and fp.keyring(s, k).fingerprint == _ring(s, k, items[rel]).fingerprint
        if defect is not None:  # has() still says yes (the name exists): keyring() refuses with a code
            assert fp.has(study, key)
            assert _keyring_code(fp, study, key) == expected[defect], (case, defect)
        assert not fp.has(study, "absent") and _keyring_code(fp, study, "absent") == "E105"
    assert seen == set(defects)


def test_keys_install_copies_a_secret_volume_into_a_private_directory(tmp_path, capsys):
    k1, k2 = _hex(), _hex()
    wrapped = b"opaque-kms-envelope"
    mount = secret_volume(tmp_path / "secret", {"s1/k1.key": k1, "s1/k2.wrapped": wrapped, "s2/k1.key": k2})
    dst = tmp_path / "run" / "keys"
    assert main(["keys", "install", "--from", str(mount), "--to", str(dst)]) == 0
    out = capsys.readouterr().out
    assert "installed 3 key(s)" in out and "s1\tk2" in out
    for text in (k1, k2):  # names only, never a secret
        assert text.decode().strip() not in out
    assert stat.S_IMODE(os.lstat(dst).st_mode) == 0o700
    for d in (dst / "s1", dst / "s2"):
        st = os.lstat(d)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
    files = sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*") if p.is_file())
    assert files == ["s1/k1.key", "s1/k2.wrapped", "s2/k1.key"]  # no temporary file left behind
    for f in files:
        st = os.lstat(dst / f)
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o400 and st.st_nlink == 1
    assert (dst / "s1" / "k2.wrapped").read_bytes() == wrapped
    strict = FileKeyProvider(dst)  # the main container reads with the strict checks
    assert not strict.is_secret_volume()
    assert strict.keyring("s1", "k1").fingerprint == _ring("s1", "k1", k1).fingerprint
    assert strict.keyring("s2", "k1").fingerprint == _ring("s2", "k1", k2).fingerprint
    # a restarted pod re-runs the init container: same bytes are kept, other bytes are refused
    assert install_keys(mount, dst) == [("s1", "k1"), ("s1", "k2"), ("s2", "k1")]
    other = secret_volume(tmp_path / "secret2", {"s1/k1.key": _hex()})
    assert _code(lambda: install_keys(other, dst)) == "E107"
    assert strict.keyring("s1", "k1").fingerprint == _ring("s1", "k1", k1).fingerprint


def test_keys_install_refuses_bad_sources(tmp_path, capsys):
    # a Secret without items: flat keys never form <study>/<key>.key
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "..2026_12_05").mkdir()
    (flat / "..2026_12_05" / "s1-k1.key").write_bytes(_hex())
    os.symlink("..2026_12_05", flat / "..data")
    os.symlink("..data/s1-k1.key", flat / "s1-k1.key")
    assert main(["keys", "install", "--from", str(flat), "--to", str(tmp_path / "d1")]) == 2
    assert "[E105]" in capsys.readouterr().err and not (tmp_path / "d1").exists()
    # a weak secret is refused in the init container, before any pod reads it
    weak = secret_volume(tmp_path / "weak", {"s1/k1.key": b"00" * 32 + b"\n"})
    assert _code(lambda: install_keys(weak, tmp_path / "d2")) == "E114"
    # an escaping link is refused by install as by the provider
    esc = secret_volume(tmp_path / "esc", {"s1/k1.key": _hex()})
    os.unlink(esc / "s1")
    os.symlink(str(tmp_path / "weak" / TIMESTAMP / "s1"), esc / "s1")
    assert _code(lambda: install_keys(esc, tmp_path / "d3")) == "E119"


# --- the key directory root and hard links (any layout) -----------------------------------------
@pytest.mark.parametrize("root_mode", [0o777, 0o775, 0o757, 0o1777])
def test_a_group_or_other_writable_key_root_is_refused(tmp_path, root_mode):
    fp = FileKeyProvider(tmp_path / "keys")
    fp.create("s1", "k1")
    assert stat.S_IMODE(os.stat(fp.root).st_mode) == 0o700  # create() makes the root private
    assert fp.keyring("s1", "k1")
    os.chmod(fp.root, root_mode)
    assert _code(lambda: fp.keyring("s1", "k1")) == "E111"
    os.chmod(fp.root, 0o755)  # readable by others is fine: the study directory and file are closed
    assert fp.keyring("s1", "k1")
    # the same for a Secret volume root that is writable (a real Secret mount is read-only)
    mount = secret_volume(tmp_path / "vol", {"s1/k1.key": _hex()})
    os.chmod(mount, root_mode)
    assert _code(lambda: FileKeyProvider(mount).keyring("s1", "k1")) == "E111"


def test_a_hard_linked_key_file_is_refused(tmp_path):
    fp = FileKeyProvider(tmp_path / "keys")
    p = fp.create("s1", "k1")
    assert fp.keyring("s1", "k1")
    os.link(p, tmp_path / "elsewhere.key")  # another name for the same secret, outside the key dir
    assert os.stat(p).st_nlink == 2
    assert _code(lambda: fp.keyring("s1", "k1")) == "E118"
    os.unlink(tmp_path / "elsewhere.key")
    assert fp.keyring("s1", "k1")
    mount = secret_volume(tmp_path / "vol", {"s1/k1.key": _hex()})
    os.link(mount / TIMESTAMP / "s1" / "k1.key", tmp_path / "vol-copy.key")
    assert _code(lambda: FileKeyProvider(mount).keyring("s1", "k1")) == "E118"


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_secret_volume_file_owned_by_another_user_is_refused(tmp_path):
    mount = secret_volume(tmp_path / "vol", {"s1/k1.key": _hex()})
    os.chown(mount / TIMESTAMP / "s1" / "k1.key", 4242, 4242)
    assert _code(lambda: FileKeyProvider(mount).keyring("s1", "k1")) == "E113"
    os.chown(mount / TIMESTAMP / "s1" / "k1.key", 0, 0)
    os.chown(mount, 4242, 4242)
    assert _code(lambda: FileKeyProvider(mount).keyring("s1", "k1")) == "E113"
