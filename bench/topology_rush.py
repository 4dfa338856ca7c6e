"""The system test's rush for a minute: 32 players at once, no pause between requests,
through nginx and two `rally web` replicas against PostgreSQL (tests/test_topology.py,
after its faults and bursts). It prints the rush's appends per second and every failed
request, and fails when an error was not mended by a retry.

    python -m bench.topology_rush [--seconds 60]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="the rush's length")
    arguments = parser.parse_args()
    env = {**os.environ, "RALLY_TOPOLOGY_RUSH_SECONDS": str(arguments.seconds)}
    command = [sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:xdist"]
    command.append("tests/test_topology.py")
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
