"""Compressed input (INPUT-COMPRESSED, HOSTILE-COMPRESSED, HOSTILE-TAR): every adapter reads a
gzip or zstd copy of its input as it reads the plain file, and a ToolSandbox run folder as a tar
archive (plain, gzip or zstd); faults name the compressed file.

The reference for every comparison is the same command on the plain input, run in the same test:
the scores must be identical once the file's own name is written as the plain one.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
from pathlib import Path

import pytest
import zstandard

from prefixexec.adapters import inputs
from prefixexec.adapters.inputs import COMPRESSED_FLOOR, MAX_RATIO, open_binary, plain_name
from prefixexec.cli import main

from conftest import REAL, REPO

DATA = REPO / "tests" / "data"

#: One real input per adapter that reads files (the folder format is below), with its options.
INPUTS: list[tuple[str, Path, list[str]]] = [
    ("taubench", REAL / "tau-bench-v1" / "gpt-4o-airline.json", []),
    ("taubench", REAL / "tau2" / "hotel_calle_full_10_tasks.json", []),
    ("bfcl", REAL / "bfcl-v4" / "deepseek-v3.1-terminus-FC" / "BFCL_v4_multi_turn_base_result.json", []),
    ("inspect", REAL / "inspect_ai" / "log_message_deduplication.eval", []),
    ("inspect", REAL / "inspect" / "log_formats.json", []),
    ("chat", DATA / "chat" / "transcripts.jsonl", ["--model", "m"]),
    ("records", REPO / "tests" / "golden" / "report_input.jsonl", []),
    ("otel", DATA / "traces" / "agents-otel-genai.jsonl", []),
    ("openinference", DATA / "traces" / "agents-openinference.jsonl", []),
    ("agents", DATA / "traces" / "agents-sdk.jsonl", []),
    ("langsmith", DATA / "traces" / "langgraph-langsmith.jsonl", []),
]


def compress(data: bytes, kind: str) -> bytes:
    if kind == "gz":
        return gzip.compress(data, mtime=0)
    return zstandard.ZstdCompressor(level=3).compress(data)


def score_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def copy_as(source: Path, folder: Path, kind: str) -> Path:
    """``source`` compressed into ``folder`` under its own folder names (BFCL reads the model
    from the folder) and its name plus ``.gz`` / ``.zst``."""
    inner = folder / source.parent.parent.name / source.parent.name
    inner.mkdir(parents=True, exist_ok=True)
    target = inner / f"{source.name}.{kind}"
    target.write_bytes(compress(source.read_bytes(), kind))
    return target


@pytest.mark.spec("INPUT-COMPRESSED")
@pytest.mark.parametrize("kind", ["gz", "zst"])
@pytest.mark.parametrize(
    ("adapter", "source", "options"), INPUTS, ids=[f"{a}-{s.name}" for a, s, _ in INPUTS]
)
def test_every_adapter_reads_a_compressed_copy_as_the_plain_file(
    adapter: str,
    source: Path,
    options: list[str],
    kind: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plain_dir = tmp_path / "plain"
    plain = plain_dir / source.parent.parent.name / source.parent.name / source.name
    plain.parent.mkdir(parents=True)
    plain.write_bytes(source.read_bytes())
    packed = copy_as(source, tmp_path / "packed", kind)
    argv = ["score", "--json", "--bootstrap", "200", *options]
    # Detected from the decompressed bytes and the plain name ...
    code, want, plain_err = score_json([*argv, str(plain)], capsys)
    assert code == 0, plain_err
    code, got, err = score_json([*argv, str(packed)], capsys)
    assert code == 0, err
    assert err.replace(str(packed), str(plain)) == plain_err  # the same notices (the detected adapter)
    assert adapter == "records" or f"as {adapter} (detected" in err
    # ... and the same scores, once the places are written alike.
    same = got.replace(str(packed), str(plain)).replace(str(tmp_path / "packed"), str(plain_dir))
    assert json.loads(same) == json.loads(want)
    # An explicit adapter reads it too.
    code, chosen, err = score_json([*argv, "--adapter", adapter, str(packed)], capsys)
    assert code == 0 and chosen == got, err


@pytest.mark.spec("INPUT-COMPRESSED")
@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_a_compressed_parquet_table_reads_as_the_plain_one(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "outcomes.parquet"
    records = REPO / "tests" / "golden" / "report_input.jsonl"
    assert main(["convert", str(records), "--output", str(table)]) == 0
    packed = tmp_path / f"outcomes.parquet.{kind}"
    packed.write_bytes(compress(table.read_bytes(), kind))
    capsys.readouterr()
    argv = ["score", "--json", "--bootstrap", "200"]
    code, want, plain_err = score_json([*argv, str(table)], capsys)
    assert code == 0, plain_err
    code, got, err = score_json([*argv, str(packed)], capsys)
    assert code == 0 and "as parquet (detected" in err, err
    assert json.loads(got.replace(str(packed), str(table))) == json.loads(want)


@pytest.mark.spec("INPUT-COMPRESSED")
def test_a_fault_inside_a_compressed_file_names_the_compressed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (REPO / "tests" / "golden" / "report_input.jsonl").read_bytes().split(b"\n")
    lines[2] = b'{"not": "a record"'  # line 3 is cut off
    bad = tmp_path / "records.jsonl"
    bad.write_bytes(b"\n".join(lines))
    code, out, plain_err = score_json(["score", "--adapter", "records", str(bad)], capsys)
    assert code == 2 and out == ""
    for kind in ("gz", "zst"):
        packed = tmp_path / f"records.jsonl.{kind}"
        packed.write_bytes(compress(bad.read_bytes(), kind))
        code, out, err = score_json(["score", "--adapter", "records", str(packed)], capsys)
        assert code == 2 and out == ""
        assert err == plain_err.replace(str(bad), str(packed))
        assert f"{packed}:3:" in err


@pytest.mark.spec("INPUT-COMPRESSED")
@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_a_truncated_or_corrupt_stream_is_one_error_naming_the_file(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = compress((REAL / "tau2" / "hotel_calle_full_10_tasks.json").read_bytes(), kind)
    name = "gzip" if kind == "gz" else "zstd"
    flipped = whole[:20] + b"\x00" * 64 + whole[84:]
    for label, data in (("cut", whole[: len(whole) // 2]), ("flipped", flipped)):
        path = tmp_path / f"{label}.json.{kind}"
        path.write_bytes(data)
        code, out, err = score_json(["score", "--adapter", "taubench", str(path)], capsys)
        assert code == 2 and out == "", err
        assert err.count("\n") == 1 and err.startswith(f"prefixexec: error: {path}: "), err
        assert name in err or "not valid JSON" in err, err
        assert "Traceback" not in err


@pytest.mark.spec("HOSTILE-COMPRESSED")
@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_a_compression_bomb_is_refused_before_it_fills_memory(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # zstd: 164 MiB of zeros is a few KB, a bomb by the real bound (MAX_RATIO x the compressed
    # bytes + the floor). gzip cannot pass deflate's own ratio of about 1,032 by much, so a bomb
    # by the real bound would be gigabytes: the bound is lowered to show that the same mechanism
    # stops it (ratio 500, floor 1 MiB).
    ratio, floor = MAX_RATIO, COMPRESSED_FLOOR
    if kind == "gz":
        ratio, floor = 500, 1 << 20
        monkeypatch.setattr(inputs, "MAX_RATIO", ratio)
        monkeypatch.setattr(inputs, "COMPRESSED_FLOOR", floor)
    size = floor + (100 << 20)
    path = tmp_path / f"bomb.jsonl.{kind}"
    if kind == "gz":
        with gzip.open(path, "wb", compresslevel=9) as out:
            block = b"\0" * (1 << 20)
            for _ in range(size >> 20):
                out.write(block)
    else:
        with open(path, "wb") as raw, zstandard.ZstdCompressor(level=19).stream_writer(raw) as out:
            block = b"\0" * (1 << 20)
            for _ in range(size >> 20):
                out.write(block)
    compressed = path.stat().st_size
    assert size > ratio * compressed + floor  # a bomb by the bound's own measure
    read = 0
    with pytest.raises(ValueError, match="HOSTILE-COMPRESSED") as caught, open_binary(str(path)) as handle:
        while chunk := handle.read(1 << 20):
            read += len(chunk)
    assert str(path) in str(caught.value)
    assert read <= ratio * compressed + floor


@pytest.mark.spec("INPUT-COMPRESSED")
def test_names_are_read_without_the_compression_suffix() -> None:
    assert plain_name("BFCL_v4_multi_turn_base_result.json.gz") == "BFCL_v4_multi_turn_base_result.json"
    assert plain_name("gpt-4o-airline.json.zst") == "gpt-4o-airline.json"
    assert plain_name("run.tar.gz") == "run.tar"
    assert plain_name(".gz") == ".gz" and plain_name("x.json") == "x.json"


# --- a folder format as one archive: ToolSandbox runs ---------------------------------------

RUN = DATA / "toolsandbox-real" / "agent_Unhelpful_user_cli_user_12_03_2026_02_03_19"
NESTED = DATA / "toolsandbox-real" / "agent_NousResearch"
NESTED = NESTED / "Hermes-2-Pro-Mistral-7B_user_cli_user_12_03_2026_02_02_51"


def tar_of(folder: Path, target: Path, top: str | None, kind: str) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder, arcname=top if top is not None else ".")
    data = buffer.getvalue()
    target.write_bytes(data if kind == "tar" else compress(data, kind))
    return target


@pytest.mark.spec("INPUT-COMPRESSED", "HOSTILE-TAR")
@pytest.mark.parametrize("kind", ["tar", "gz", "zst"])
@pytest.mark.parametrize("run", [RUN, NESTED], ids=["run", "nested-model-name"])
def test_a_run_folder_as_a_tar_archive_scores_as_the_folder(
    run: Path, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suffix = {"tar": ".tar", "gz": ".tar.gz", "zst": ".tar.zst"}[kind]
    # The archive holds the run folder itself (as `tar czf run.tar.gz agent_..._user_...` writes
    # it), the nested one under its model's first part.
    top = run.name if run is RUN else f"{run.parent.name}/{run.name}"
    stem = f"runs-{kind}-{len(run.parts)}"  # unique among the parametrized tests run at once
    archive = tar_of(run, tmp_path / f"{stem}{suffix}", top, kind)
    code, want, err = score_json(["score", "--json", "--bootstrap", "200", str(run)], capsys)
    assert code == 0, err
    code, got, err = score_json(["score", "--json", "--bootstrap", "200", str(archive)], capsys)
    assert code == 0, err
    assert "as toolsandbox (detected" in err
    shown = f"{archive}/{top}"
    assert json.loads(got.replace(shown, str(run))) == json.loads(want)
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"prefixexec-archive-*/{stem}"))  # removed


def run_with(archive: Path, info: tarfile.TarInfo, data: bytes | None) -> Path:
    """A gzip-compressed tar of the run as ``run/`` with one more member ``info`` (``data``: its
    content, for a file)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(RUN, arcname="run")
        if data is None:
            tar.addfile(info)
        else:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive.write_bytes(gzip.compress(buffer.getvalue()))
    return archive


@pytest.mark.spec("HOSTILE-TAR")
@pytest.mark.parametrize(
    ("member", "fault"),
    [
        ("../escape.json", "outside the archive's folder"),
        ("/abs.json", "outside the archive's folder"),
        ("link", "not a file or a folder"),
        ("fifo", "not a file or a folder"),
    ],
)
def test_a_hostile_member_is_refused_naming_the_archive(
    member: str, fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    info = tarfile.TarInfo(member)
    if member == "link":
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    elif member == "fifo":
        info.type = tarfile.FIFOTYPE
    archive = run_with(tmp_path / "run.tar.gz", info, None if member in ("link", "fifo") else b"{}")
    code, out, err = score_json(["score", "--adapter", "toolsandbox", str(archive)], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"prefixexec: error: {archive}: ") and fault in err and err.count("\n") == 1, err
    assert not (tmp_path.parent / "escape.json").exists()


@pytest.mark.spec("INPUT-COMPRESSED", "HOSTILE-TAR")
def test_a_fault_inside_an_archive_names_the_member_in_the_archive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    broken = tmp_path / "run"
    shutil.copytree(RUN, broken)
    (broken / "result_summary.json").write_text("[", encoding="utf-8")
    code, out, plain_err = score_json(["score", "--adapter", "toolsandbox", str(broken)], capsys)
    assert code == 2 and out == ""
    archive = tar_of(broken, tmp_path / "broken.tgz", "run", "gz")
    code, out, err = score_json(["score", str(archive)], capsys)
    assert code == 2 and out == ""
    fault = plain_err.split("prefixexec: error: ", 1)[1]
    assert err.endswith(fault.replace(str(broken), f"{archive}/run")), err
    assert f"prefixexec: error: {archive}/run/result_summary.json: not valid JSON" in err


@pytest.mark.spec("HOSTILE-TAR")
def test_a_member_written_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = run_with(tmp_path / "twice.tgz", tarfile.TarInfo("run/result_summary.json"), b"[")
    code, out, err = score_json(["score", "--adapter", "toolsandbox", str(archive)], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"prefixexec: error: {archive}: run/result_summary.json: a member twice"), err
    assert err.count("\n") == 1
