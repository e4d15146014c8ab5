"""startups_env.tools.files.atomic_write: the one way every result, log, replay and checkpoint is written."""

import os

import pytest

from startups_env.tools.files import atomic_write


def test_atomic_write_leaves_no_temp_file_when_it_fails(tmp_path):
    def boom(f):
        f.write("half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        atomic_write(tmp_path / "out.json", boom, binary=False)
    assert os.listdir(tmp_path) == []
    (tmp_path / "adir").mkdir()
    with pytest.raises(OSError):  # the rename onto a directory fails
        atomic_write(tmp_path / "adir", lambda f: f.write("x"), binary=False)
    assert os.listdir(tmp_path) == ["adir"] and not os.listdir(tmp_path / "adir")
    (tmp_path / "adir").rmdir()
    atomic_write(str(tmp_path / "ok.txt"), lambda f: f.write("fine"), binary=False)
    assert os.listdir(tmp_path) == ["ok.txt"] and (tmp_path / "ok.txt").read_text() == "fine"


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "result.bin"
    atomic_write(path, lambda f: f.write(b"old"))

    def torn(f):
        f.write(b"ne")
        raise OSError("no space left")

    with pytest.raises(OSError, match="no space left"):
        atomic_write(path, torn, durable=True)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["result.bin"]


def test_files_get_the_umask_permissions_of_a_plain_open(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a.json", lambda f: f.write("{}"), binary=False)
        with open(tmp_path / "plain.json", "w") as f:
            f.write("{}")
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "a.json").st_mode & 0o777 == os.stat(tmp_path / "plain.json").st_mode & 0o777 == 0o644


def test_missing_folders_are_made_only_when_asked(tmp_path):
    deep = tmp_path / "new" / "deeper" / "out.txt"
    with pytest.raises(FileNotFoundError):
        atomic_write(deep, lambda f: f.write(b"x"))
    assert not (tmp_path / "new").exists()
    atomic_write(deep, lambda f: f.write(b"x"), make_folders=True)
    assert deep.read_bytes() == b"x"


def test_text_mode_writes_utf8(tmp_path):
    atomic_write(tmp_path / "t.txt", lambda f: f.write("Hippo Powertech \u2192 \u00e9"), binary=False)
    assert (tmp_path / "t.txt").read_bytes().decode("utf-8") == "Hippo Powertech \u2192 \u00e9"
