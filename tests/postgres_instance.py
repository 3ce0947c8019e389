"""A PostgreSQL server for the Dagster instance tests (tests/etl/test_dagster_postgres.py).

Where the server comes from, in this order:

1. ``TIDE_TEST_PG_URL`` (``postgresql://user:password@host:port/db``), which ``.ci/run`` exports
   after starting a server with ``python tests/postgres_instance.py start``, or the
   ``DAGSTER_PG_HOST``/``_PORT``/``_USERNAME``/``_PASSWORD``/``_DB`` variables of a server you run;
2. else a throwaway cluster of this test session (``initdb`` + ``pg_ctl`` of PostgreSQL 15, on a
   free 127.0.0.1 port, password authentication), stopped and removed afterwards;
3. else the tests are skipped with the reason -- unless ``CI_REQUIRE_POSTGRES=1``, where they fail.

PostgreSQL refuses to run as root: as root the cluster belongs to the ``postgres`` user (Debian's
package creates it) or ``nobody``, and its commands run through ``runuser``.  Each test gets a
database of its own (``pg_database``), dropped after it.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import pytest

PG_BIN = Path(os.environ.get("TIDE_PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_VARS = ("DAGSTER_PG_HOST", "DAGSTER_PG_PORT", "DAGSTER_PG_USERNAME", "DAGSTER_PG_PASSWORD", "DAGSTER_PG_DB")


@dataclass(frozen=True)
class PgServer:
    host: str
    port: int
    user: str
    password: str = field(repr=False)
    db: str  # a database to connect to for CREATE/DROP DATABASE
    source: str  # "env" (a server started outside the tests) or "cluster" (started here)

    def url(self, db: str | None = None) -> str:
        return f"postgresql://{quote(self.user)}:{quote(self.password)}@{self.host}:{self.port}/{db or self.db}"

    def env(self, db: str | None = None) -> dict[str, str]:
        """The variables infra/dagster/dagster.yaml reads its storage from."""
        values = (self.host, str(self.port), self.user, self.password, db or self.db)
        return dict(zip(PG_VARS, values, strict=True))


def server_from_env(environ: os._Environ[str] | dict[str, str] = os.environ) -> PgServer | None:
    url = environ.get("TIDE_TEST_PG_URL")
    if url:
        u = urlsplit(url)
        return PgServer(
            host=u.hostname or "127.0.0.1",
            port=u.port or 5432,
            user=unquote(u.username or "postgres"),
            password=unquote(u.password or ""),
            db=u.path.lstrip("/") or "postgres",
            source="env",
        )
    if environ.get("DAGSTER_PG_HOST"):
        return PgServer(
            host=environ["DAGSTER_PG_HOST"],
            port=int(environ.get("DAGSTER_PG_PORT") or 5432),
            user=environ.get("DAGSTER_PG_USERNAME") or "postgres",
            password=environ.get("DAGSTER_PG_PASSWORD") or "",
            db=environ.get("DAGSTER_PG_DB") or "postgres",
            source="env",
        )
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_owner(owner: pwd.struct_passwd | None, cmd: list[str]) -> list[str]:
    return ["runuser", "-u", owner.pw_name, "--", *cmd] if owner else cmd


def _owner() -> pwd.struct_passwd | None:
    """The user the cluster runs as: None (this user) unless this is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root and neither a postgres nor a nobody user exists")


def start_cluster(base: Path | None = None) -> tuple[PgServer, Path]:
    """initdb + pg_ctl start a PostgreSQL cluster in a new directory under ``base`` (a temporary
    directory by default), listening on 127.0.0.1 only, password (SCRAM) authentication."""
    if not (PG_BIN / "initdb").exists():
        raise FileNotFoundError(f"no initdb in {PG_BIN}")
    owner = _owner()
    root = Path(tempfile.mkdtemp(prefix="tide-pg-", dir=base))
    user, password = "tide", secrets.token_hex(16)
    data = root / "data"
    pwfile = root / "pwfile"
    pwfile.write_text(password + "\n")
    if owner:
        os.chmod(root, 0o700)
        for p in (root, pwfile):
            os.chown(p, owner.pw_uid, owner.pw_gid)
    subprocess.run(
        _as_owner(
            owner,
            [str(PG_BIN / "initdb"), "-D", str(data), "-U", user, f"--pwfile={pwfile}", "--auth=scram-sha-256"],
        ),
        check=True,
        capture_output=True,
        cwd=root,
    )
    pwfile.unlink()
    last = ""
    for _ in range(3):  # the free port may be taken between choosing it and the server binding it
        port = _free_port()
        opts = f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} -c fsync=off"
        started = subprocess.run(
            _as_owner(
                owner,
                [str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log"), "-o", opts, "-w", "start"],
            ),
            capture_output=True,
            text=True,
            cwd=root,
        )
        if started.returncode == 0:
            return PgServer("127.0.0.1", port, user, password, "postgres", "cluster"), root
        last = started.stdout + started.stderr
    raise RuntimeError(f"pg_ctl could not start a cluster: {last[-2000:]}")


def stop_cluster(root: Path) -> None:
    subprocess.run(
        _as_owner(_owner(), [str(PG_BIN / "pg_ctl"), "-D", str(root / "data"), "-m", "fast", "-w", "stop"]),
        capture_output=True,
        cwd=root,
    )
    shutil.rmtree(root, ignore_errors=True)


def wait_ready(server: PgServer, timeout_s: float = 30.0) -> None:
    import psycopg2

    deadline = time.time() + timeout_s
    while True:
        try:
            psycopg2.connect(server.url(), connect_timeout=5).close()
            return
        except psycopg2.OperationalError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PgServer]:
    """The server of ``TIDE_TEST_PG_URL``/``DAGSTER_PG_*``, else a throwaway cluster, else skip
    (a failure where ``CI_REQUIRE_POSTGRES=1``)."""
    server = server_from_env()
    root = None
    if server is None:
        try:
            server, root = start_cluster()
        except FileNotFoundError as exc:
            reason = f"no PostgreSQL server: set TIDE_TEST_PG_URL, or install postgresql-15 ({exc})"
            if os.environ.get("CI_REQUIRE_POSTGRES") == "1":
                pytest.fail(f"CI_REQUIRE_POSTGRES=1 but {reason}")
            pytest.skip(reason)
    try:
        wait_ready(server)
        yield server
    finally:
        if root is not None:
            stop_cluster(root)


@pytest.fixture
def pg_database(postgres_server: PgServer) -> Iterator[str]:
    """A new, empty database on the server for one test (dropped after it)."""
    import psycopg2

    name = f"tide_test_{secrets.token_hex(6)}"
    conn = psycopg2.connect(postgres_server.url())
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"')
        yield name
        with conn.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        conn.close()


def main(argv: list[str]) -> int:
    """``start [DIR]``: start a cluster (under DIR) and print the ``export`` lines for it."""
    if len(argv) < 2 or argv[1] != "start":
        print("usage: python tests/postgres_instance.py start [DIR]", file=sys.stderr)
        return 2
    server, root = start_cluster(Path(argv[2]) if len(argv) > 2 else None)
    exports = {"TIDE_TEST_PG_URL": server.url(), "TIDE_TEST_PG_DIR": str(root)}
    for name, value in exports.items():
        print(f"export {name}='{value}'")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
