"""The generation counter of an SQLite installation without Redis (kit/generations.py, ``_FileCounter``): a file
beside the database that readers map and read without a system call, looking at its path again at most every
``REVALIDATE_S``; a writer that moves the counter of a file made less than that ago waits out the rest before it
answers, so a file made, removed and made again, or replaced while readers run cannot hide a move from them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tierpilot.kit import generations

NAME = "test:file"


@pytest.fixture
def path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The counter file of NAME (not made yet); readers look again every 0.2 s."""
    file = tmp_path / "x.db.generations" / "test-file"
    monkeypatch.setattr(generations, "local_file", lambda name, url=None: file if name == NAME else None)
    monkeypatch.setattr(generations, "REVALIDATE_S", 0.2)
    return file


def _answered(write: Callable[[], object]) -> float:
    """How long a writer took to answer."""
    began = time.monotonic()
    write()
    return time.monotonic() - began


def _waits(write: Callable[[], object]) -> list[float]:
    """The waits a writer asked for before it answered (what it decided, whatever the machine's load)."""
    asked: list[float] = []
    real = time.sleep

    def sleep(seconds: float) -> None:
        asked.append(seconds)
        real(seconds)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(generations.time, "sleep", sleep)
        write()
    return asked


def test_a_reader_sees_another_processs_move_at_once_and_makes_no_system_call_between_looks(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generations._move_file(path)
    clock = [0.0]
    reader = generations._FileCounter(path, clock=lambda: clock[0])
    first = reader.value()
    stats: list[object] = []
    real_stat = os.stat

    def counted(*args: object, **kwargs: object) -> os.stat_result:
        stats.append(args)
        return real_stat(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", counted)
    code = "import sys; from pathlib import Path; from tierpilot.kit import generations; " \
           "generations._move_file(Path(sys.argv[1]))"
    for _ in range(3):
        before = reader.value()
        subprocess.run([sys.executable, "-c", code, str(path)], check=True)
        assert reader.value() not in (before, first)  # the very next read, the clock not moved
    assert stats == []
    clock[0] += 0.2
    reader.value()
    assert len(stats) == 1  # it looked at the path again


def test_a_file_made_while_readers_run_is_seen_by_them_before_the_writer_answers(path: Path) -> None:
    reader = generations._FileCounter(path)
    assert reader.value() == 0  # no file: looked just now
    assert _answered(lambda: generations._after("", NAME)) >= 0.2  # made the file: waited for the readers
    made = reader.value()
    assert made != 0
    assert _waits(lambda: generations._after("", NAME)) == []  # the file is old enough now: no wait
    assert reader.value() not in (0, made)


def test_a_file_removed_and_made_again_while_readers_run_is_seen_by_them_before_the_writer_answers(
        path: Path) -> None:
    generations._move_file(path)
    time.sleep(0.25)
    reader = generations._FileCounter(path)
    mapped = reader.value()
    assert mapped != 0
    path.unlink()  # the reader keeps its mapping of the file removed
    assert reader.value() == mapped
    generations._after("", NAME)
    assert reader.value() not in (0, mapped)


def test_a_file_of_another_format_reads_as_0_and_is_replaced_by_the_next_move(path: Path) -> None:
    path.parent.mkdir()
    path.write_bytes(b"...")  # the byte-a-move file of before
    reader = generations._FileCounter(path)
    assert reader.value() == 0
    assert _answered(lambda: generations._after("", NAME)) >= 0.2
    assert reader.value() != 0
    assert path.stat().st_size == generations._LAYOUT.size
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # nothing left aside


def test_a_directory_where_the_file_should_be_is_not_moved_and_reads_as_0(path: Path) -> None:
    path.mkdir(parents=True)
    reader = generations._FileCounter(path)
    assert reader.value() == 0
    with pytest.raises(OSError):
        generations._move_file(path)
    assert generations.bump("", NAME) is None


def test_writers_making_the_file_at_once_all_move_the_one_file(path: Path) -> None:
    code = "import sys; from pathlib import Path; from tierpilot.kit import generations; " \
           "print(generations._move_file(Path(sys.argv[1]))[0])"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
             for _ in range(6)]
    values = {int(p.communicate()[0]) for p in procs}
    assert all(p.returncode == 0 for p in procs) and len(values) == 6
    reader = generations._FileCounter(path)
    assert reader.value() in values
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_a_dangling_link_where_the_file_should_be_is_refused_not_looped_on(path: Path) -> None:
    path.parent.mkdir()
    path.symlink_to(path.parent / "nowhere")  # open says missing, link says taken
    with pytest.raises(FileExistsError):
        generations._move_file(path)
    assert generations._FileCounter(path).value() == 0
