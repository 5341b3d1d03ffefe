"""The write stamps' own rules (sapsam.store.write_stamps), on a file of the test's own."""

from __future__ import annotations

from pathlib import Path

from sapsam.store.write_stamps import WriteStamps, slot_of


def test_a_bump_changes_the_slot_every_process_reads(tmp_path: Path) -> None:
    path = tmp_path / "stamps"
    writer, reader = WriteStamps(path), WriteStamps(path)
    assert writer.shared and reader.shared
    before = reader.current("table-a")
    assert writer.bump("table-a") == before + 1
    assert reader.current("table-a") == before + 1
    assert slot_of("table-a") == slot_of("table-a")


def test_an_own_copy_is_current_only_when_no_other_write_came_between(tmp_path: Path) -> None:
    path = tmp_path / "stamps"
    mine, other = WriteStamps(path), WriteStamps(path)
    before = mine.current("table-a")
    mine.bump("table-a")
    assert mine.after_own_write("table-a", before) == before + 1
    before = mine.current("table-a")
    mine.bump("table-a")
    other.bump("table-a")
    assert mine.after_own_write("table-a", before) is None


def test_without_the_file_no_stamp_is_ever_current(tmp_path: Path) -> None:
    stamps = WriteStamps(tmp_path / "missing" / "stamps")
    assert not stamps.shared
    assert stamps.current("table-a") != stamps.current("table-a")
    before = stamps.current("table-a")
    stamps.bump("table-a")
    assert stamps.after_own_write("table-a", before) is None
