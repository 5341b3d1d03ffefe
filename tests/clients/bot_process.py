"""``sapsam-bot`` as a child process, its output read line by line as it comes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path


def bot_env(home: Path) -> dict[str, str]:
    """The environment of a bot whose config and state folders are under ``home``."""
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
    }


class BotProcess:
    """``python -m sapsam_client.bot ARGS``; stdout and stderr kept as lines."""

    def __init__(self, arguments: list[str], env: dict[str, str]) -> None:
        self.arguments = arguments
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sapsam_client.bot", *arguments],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 120) -> re.Match[str]:
        """The first line matching ``pattern``, waited for."""
        deadline = time.monotonic() + timeout
        while True:
            for line in list(self.lines):
                match = re.search(pattern, line)
                if match:
                    return match
            assert self.process.poll() is None or time.monotonic() < deadline, self.output()
            assert time.monotonic() < deadline, f"no {pattern!r} in:\n{self.output()}"
            time.sleep(0.05)

    def finish(self, timeout: float = 240) -> int:
        """The exit code, waited for."""
        code = self.process.wait(timeout)
        self._reader.join(10)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def output(self) -> str:
        return "\n".join(self.lines)
