"""clients/gen_protocol.py: the committed bindings are current, and its check fails on drift.

Every run writes into pytest's temporary directory, a copy of the files involved; never into
the source tree.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
GENERATOR = ROOT / "clients" / "gen_protocol.py"
SCHEMA = "api/protocol.schema.json"
OUTPUTS = ("clients/python/retrylab/_protocol.py", "clients/node/src/protocol.ts")


def gen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-B", str(GENERATOR), *args], capture_output=True, text=True, timeout=60
    )


def copy_tree(tmp: Path) -> Path:
    """The schema and the committed outputs, copied under ``tmp``."""
    for rel in (SCHEMA, *OUTPUTS):
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp / rel)
    return tmp


def edit_schema(root: Path, change: Any) -> None:
    path = root / SCHEMA
    schema = json.loads(path.read_text(encoding="utf-8"))
    change(schema)
    path.write_text(json.dumps(schema, indent=2), encoding="utf-8")


def variant(schema: dict[str, Any], direction: str, kind: str) -> dict[str, Any]:
    for v in schema["$defs"][direction]["oneOf"]:
        if v.get("properties", {}).get("type", {}).get("const") == kind:
            return v
    raise KeyError(kind)


def test_the_committed_bindings_are_current() -> None:
    r = gen("--check")
    assert r.returncode == 0, r.stderr
    assert "are current with api/protocol.schema.json" in r.stdout


def test_the_check_fails_when_the_schema_gains_a_field(tmp_path: Path) -> None:
    root = copy_tree(tmp_path)
    assert gen("--check", "--root", str(root)).returncode == 0

    def add_field(schema: dict[str, Any]) -> None:
        variant(schema, "ToExec", "wake")["properties"]["late_ms"] = {"type": "integer", "format": "uint64", "minimum": 0}

    edit_schema(root, add_field)
    r = gen("--check", "--root", str(root))
    assert r.returncode == 1
    assert (
        "gen_protocol: clients/python/retrylab/_protocol.py, clients/node/src/protocol.ts differ from what "
        "api/protocol.schema.json generates" in r.stderr
    )
    assert "Run `python3 clients/gen_protocol.py` and commit the result." in r.stderr
    assert '+        "late_ms": {"required": False' in r.stderr  # the diff shows what changed
    # --check wrote nothing; a regeneration then passes the check.
    assert (root / OUTPUTS[0]).read_text() == (ROOT / OUTPUTS[0]).read_text()
    assert gen("--root", str(root)).returncode == 0
    assert gen("--check", "--root", str(root)).returncode == 0
    assert "  late_ms?: number;" in (root / OUTPUTS[1]).read_text()


def test_the_check_fails_when_a_generated_file_is_edited_by_hand(tmp_path: Path) -> None:
    root = copy_tree(tmp_path)
    path = root / OUTPUTS[1]
    path.write_text(path.read_text().replace("export const PROTOCOL_VERSION", "export const  PROTOCOL_VERSION"))
    r = gen("--check", "--root", str(root))
    assert r.returncode == 1
    assert "clients/node/src/protocol.ts differ from what api/protocol.schema.json generates" in r.stderr


def test_the_output_is_deterministic(tmp_path: Path) -> None:
    a, b = copy_tree(tmp_path / "a"), copy_tree(tmp_path / "b")
    for root in (a, b):
        for rel in OUTPUTS:
            (root / rel).unlink()
        assert gen("--root", str(root)).returncode == 0
    for rel in OUTPUTS:
        assert (a / rel).read_bytes() == (b / rel).read_bytes() == (ROOT / rel).read_bytes()


def test_a_schema_shape_it_does_not_translate_is_an_error(tmp_path: Path) -> None:
    root = copy_tree(tmp_path)

    def tag_without_const(schema: dict[str, Any]) -> None:
        del variant(schema, "FromExec", "log")["properties"]["type"]["const"]

    edit_schema(root, tag_without_const)
    r = gen("--check", "--root", str(root))
    assert r.returncode == 2
    assert "a message variant needs a `type` property with a string const" in r.stderr
    root = copy_tree(tmp_path / "again")
    edit_schema(root, lambda s: variant(s, "ToExec", "wake")["properties"]["in_reply_to"].update(allOf=[{}]))
    r = gen("--check", "--root", str(root))
    assert r.returncode == 2
    assert "unsupported keywords ['allOf']" in r.stderr


def test_the_tables_the_clients_read() -> None:
    from retrylab import _protocol

    assert _protocol.PROTOCOL_VERSION == json.loads((ROOT / SCHEMA).read_text())["x-protocol-version"]
    assert _protocol.ERROR_CODE_NAMES[_protocol.ErrorCode.MALFORMED] == "malformed"
    start = _protocol.TO_EXEC_FIELDS["start"]
    assert start["now_ms"]["required"] and start["now_ms"]["spec"]["types"] == ["integer"]
    # What the Rust side sends, no more: init carries no clock, error no in_reply_to,
    # shutdown nothing; fork names its two FIFOs.
    assert "now_ms" not in _protocol.TO_EXEC_FIELDS["init"]
    assert set(_protocol.TO_EXEC_FIELDS["error"]) == {"code", "text"}
    assert _protocol.TO_EXEC_FIELDS["shutdown"] == {}
    assert {n for n, f in _protocol.TO_EXEC_FIELDS["fork"].items() if f["required"]} == {"in", "out"}
