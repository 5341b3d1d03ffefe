"""The README's "play in five minutes" snippet runs as written against a real server, with a
random bot taking the other seat."""

from __future__ import annotations

import contextlib
import io
import re
import threading
import time
from pathlib import Path

from sapsam_client import connect
from sapsam_client.rules import random_arranger
from sapsam_proto.v1 import table_pb2

README = Path(__file__).resolve().parents[2] / "README.md"


def snippet() -> str:
    section = README.read_text(encoding="utf-8").split("## Play in five minutes", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


def test_the_readme_snippet_plays_a_series(address: str) -> None:
    code = snippet()
    assert len([line for line in code.splitlines() if line.strip()]) <= 16
    failures: list[BaseException] = []

    def opponent() -> None:
        client = connect(address)
        client.register("random bot")
        try:
            while True:  # wait for the snippet's table to appear
                tables = list(client.list_tables(table_pb2.TABLE_STATUS_OPEN))
                if tables:
                    break
                time.sleep(0.05)
            client.join_table(tables[0].name).play_series(random_arranger(1))
        except BaseException as error:
            failures.append(error)

    thread = threading.Thread(target=opponent, daemon=True)
    thread.start()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.replace("127.0.0.1:50051", address), "README", "exec"), {})
    thread.join(60)
    assert failures == []
    lines = printed.getvalue().splitlines()
    assert lines[0].startswith("others join: tables/")
    standings = [line.split() for line in lines[1:]]
    assert len(standings) == 2
    assert sorted(int(place) for place, _, _ in standings)[0] == 1
    assert sum(int(total) for _, _, total in standings) == 0
