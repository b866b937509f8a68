"""The example scripts run against the test server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_movies_example_runs(base_url: str) -> None:
    env = dict(os.environ, NETLAYER_TEST_URL=base_url)
    result = subprocess.run([sys.executable, str(EXAMPLES / "movies.py")], env=env,
                            capture_output=True, text=True, timeout=60, cwd=str(EXAMPLES.parent.parent))
    assert result.returncode == 0, result.stderr
    assert "200: ['Dune', 'Arrival', 'Heat']" in result.stdout
    assert "movie 99: status 404" in result.stdout
