"""The files several client processes of one user share (the token file, ``commitments.json``
beside it) are read, changed and replaced one process at a time: two sapsam-play sessions at two
tables lose neither's entries, and neither crashes on the other's temporary file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.tokens import load_player

PROCESSES = 4
WRITES = 40

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from sapsam_client.commitment import Rows
    from sapsam_client.commitment_file import CommitmentFile
    from sapsam_client.seat import Commitment
    from sapsam_client.tokens import SavedPlayer, save_player

    folder, me, writes = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    rows = Rows.of(["As", "Ad", "2c"], ["Kc", "Kd", "3h", "4h", "5h"],
                   ["Qs", "Qh", "Qd", "9c", "9s"])
    keeper = CommitmentFile(folder / "commitments.json")
    for deal in range(1, writes + 1):
        keeper.save(f"tables/{me}/seats/0", Commitment(deal, rows, b"\\1" * 32, b"\\2" * 32))
        save_player(folder / "tokens.json", f"server-{me}-{deal}", SavedPlayer("p", "n", "t"))
    """
)


def test_processes_sharing_the_files_lose_nothing(tmp_path: Path) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(number), str(WRITES)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for number in range(PROCESSES)
    ]
    errors = [writer.communicate(timeout=120)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0] * PROCESSES, errors
    keeper = CommitmentFile(tmp_path / "commitments.json")
    for number in range(PROCESSES):
        assert sorted(keeper.load(f"tables/{number}/seats/0")) == list(range(1, WRITES + 1))
        for deal in range(1, WRITES + 1):
            assert load_player(tmp_path / "tokens.json", f"server-{number}-{deal}") is not None
    assert not list(tmp_path.glob("*.tmp"))  # no temporary file left behind
