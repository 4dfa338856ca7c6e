"""Debian's nginx running the repository's deploy/nginx.conf on loopback, in front of web
replicas on local ports: for the proxy and topology tests, and for bench.proxy_bursts."""

from __future__ import annotations

import getpass
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

NGINX_CONFIG = Path(__file__).resolve().parent.parent / "deploy" / "nginx.conf"
# deploy.yml's name and port of the web replicas (its DNS gives each replica's address for
# the one server line), and the port nginx listens on in its container.
UPSTREAM_SERVER = re.compile(r"^(\s*)server web:8000( [^;]*)?;$", re.MULTILINE)
LISTEN = "listen 80;"
STARTUP_SECONDS = 30.0
STOP_SECONDS = 30.0


def nginx_binary() -> str:
    """Debian's nginx (`make test` installs it); /usr/sbin is not on every user's PATH."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if not found:
        raise RuntimeError(
            "nginx is not installed: `make test` installs it (apt-get install nginx)"
        )
    return found


def proxy_config(config: str, web_ports: Sequence[int], proxy_port: int) -> str:
    """config with one server line per local replica, each with the file's parameters, and
    the listening address made local."""
    (server,) = UPSTREAM_SERVER.finditer(config)
    indent, parameters = server.group(1), server.group(2) or ""
    servers = "\n".join(f"{indent}server 127.0.0.1:{port}{parameters};" for port in web_ports)
    assert config.count(LISTEN) == 1
    local = config[: server.start()] + servers + config[server.end() :]
    return local.replace(LISTEN, f"listen 127.0.0.1:{proxy_port};")


def _wait_for_port(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not listen on {port}") from None
            time.sleep(0.1)


@contextmanager
def nginx(
    prefix: Path, web_ports: Sequence[int], port: int, config: str | None = None
) -> Iterator[int]:
    """nginx in the foreground, with a prefix of its own, listening on port in front of the
    replicas on web_ports, with deploy/nginx.conf (or config, the text of another); port."""
    prefix.mkdir()
    site = proxy_config(config or NGINX_CONFIG.read_text(), web_ports, port)
    (prefix / "rally.conf").write_text(site)
    temp_paths = "\n".join(
        f"    {kind}_temp_path {prefix / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # What the nginx image's own nginx.conf provides around the included file. Its workers
    # run as this user (a root master would run them as nobody, which may not write a
    # large body to the temporary folders under this test's own).
    (prefix / "nginx.conf").write_text(
        f"user {getpass.getuser()};\nworker_processes 1;\npid {prefix / 'nginx.pid'};\n"
        "events { worker_connections 512; }\n"
        f"http {{\n    access_log off;\n{temp_paths}\n    include {prefix / 'rally.conf'};\n}}\n"
    )
    command = [nginx_binary(), "-e", "stderr", "-p", str(prefix), "-c", str(prefix / "nginx.conf")]
    subprocess.run([*command, "-t"], check=True, capture_output=True)
    process = subprocess.Popen([*command, "-g", "daemon off;"])
    try:
        _wait_for_port(process, port)
        yield port
    finally:
        # nginx's fast stop: its graceful one (SIGQUIT) waits out every idle keep-alive
        # connection, 5-7 s after each test, and no test looks at how nginx stops.
        process.send_signal(signal.SIGTERM)
        process.wait(STOP_SECONDS)
