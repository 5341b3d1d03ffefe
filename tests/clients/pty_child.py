"""A command on a pseudo-terminal of its own, driven with pexpect, started without ``fork()``.

The tests that drive a terminal run the server (grpc.aio) and SDK clients in the test process.
``pexpect.spawn`` forks that process: gRPC's fork handlers start its event-engine poller again in
the forked child, and when ptyprocess then closes every inherited descriptor before ``exec``, the
poller's ``epoll_wait`` fails with EBADF, logs it on the pty (already the child's stderr) and
aborts the child (SIGABRT) before the command ever runs. With this test's server in the process,
on the loaded two-core machine, 4 of 150 ``pexpect.spawn`` children died so, twice; of 150 started
as here, none. ``subprocess`` starts the child with ``vfork`` and ``exec`` from C: no fork handler
and no copy of gRPC's threads runs in it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import subprocess
import termios
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pexpect import fdpexpect


@dataclass
class PtyChild:
    """The command's process and the pexpect end of its terminal."""

    process: subprocess.Popen[bytes]
    terminal: fdpexpect.fdspawn

    def exit_code(self, timeout: float = 30.0) -> int:
        """Wait for the command to exit; its exit status."""
        return self.process.wait(timeout)


@contextlib.contextmanager
def pty_child(
    command: Sequence[str],
    env: dict[str, str],
    dimensions: tuple[int, int] = (24, 80),
    timeout: float = 60.0,
) -> Iterator[PtyChild]:
    """Run ``command`` with a new pty of ``dimensions`` (rows, columns) as its stdin, stdout and
    stderr, in a session of its own; the process is killed if still running at the end."""
    controller, terminal_end = os.openpty()
    rows, columns = dimensions
    fcntl.ioctl(terminal_end, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    try:
        process = subprocess.Popen(
            list(command),
            stdin=terminal_end,
            stdout=terminal_end,
            stderr=terminal_end,
            env=env,
            start_new_session=True,
        )
    except BaseException:
        os.close(controller)
        raise
    finally:
        os.close(terminal_end)  # the child's copies alone keep it open: its exit reads as EOF
    child = PtyChild(process, fdpexpect.fdspawn(controller, encoding="utf-8", timeout=timeout))
    try:
        yield child
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        child.terminal.close()  # the controlling end (a second close does nothing)
