"""The LALR table is cached in the user's cache directory, and a bad cache file is rebuilt."""

from __future__ import annotations

from pathlib import Path

import pytest

from frontend import parse


def build(monkeypatch: pytest.MonkeyPatch, cache_home: Path) -> parse.FastParser:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    return parse._parser.__wrapped__()  # not the process's parser, kept by functools.cache


def test_the_table_is_kept_and_a_corrupt_file_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "numpy-autodiff" / "grammar-lalr.cache"
    build(monkeypatch, tmp_path)
    assert table.stat().st_size > 10_000
    table.write_bytes(table.read_bytes()[:500])  # a write another process cut short
    parser = build(monkeypatch, tmp_path)
    assert table.stat().st_size > 10_000
    assert parser.parse("def f(x):\n    return x + 1\n") is not None


def test_no_cache_where_the_directory_cannot_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert parse._table_cache() is False
    assert build(monkeypatch, blocker).parse("def f(x):\n    return x\n") is not None
