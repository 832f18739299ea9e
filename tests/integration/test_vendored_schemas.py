"""The official JSON schemas vendored in ``tests/data/schemas/`` match their provenance record.

``provenance.json`` names, for each file, the upstream repository, path and commit, the sha256
and the license. Every hash is recomputed here, so a vendored copy cannot change (or a new one
appear) without its record changing in the same commit. The 2026-07-28 schema is further pinned
to the exact file ``mcpwire.types`` was built against. The tests read these copies only: no
tracked file points at a folder beside the checkout.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import validator_for

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "tests" / "data" / "schemas"
PROVENANCE: dict[str, Any] = json.loads((SCHEMAS / "provenance.json").read_text())
ENTRIES: list[dict[str, Any]] = PROVENANCE["schemas"]
EXTENSIONS: list[dict[str, Any]] = PROVENANCE["extensions"]  # extensions' own schemas, from their repositories
UPSTREAM = "https://github.com/modelcontextprotocol/modelcontextprotocol"

# The file the wire types and the schema tests were written against (tests/wire/test_types_schema.py).
PINNED_VERSION = "2026-07-28"
PINNED_COMMIT = "5f5440bb26a62e2cf3440b92da5a667efa03b267"
PINNED_SHA256 = "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_vendored_file_has_a_record() -> None:
    recorded = {e["file"] for e in ENTRIES} | {PROVENANCE["licenseFile"]["file"], "provenance.json"}
    recorded |= {e["file"] for e in EXTENSIONS} | {e["licenseFile"]["file"] for e in EXTENSIONS}
    present = {p.name for p in SCHEMAS.iterdir()}
    assert present == recorded
    assert len({e["protocolVersion"] for e in ENTRIES}) == len(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["protocolVersion"] for e in ENTRIES])
def test_schema_matches_its_record(entry: dict[str, Any]) -> None:
    version = entry["protocolVersion"]
    assert entry["file"] == f"schema-{version}.json"
    assert entry["repository"] == UPSTREAM
    assert entry["path"] == f"schema/{version}/schema.json"
    assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"])
    assert entry["license"] and (SCHEMAS / entry["licenseFile"]).is_file()
    path = SCHEMAS / entry["file"]
    assert _sha256(path) == entry["sha256"], f"{entry['file']} differs from the file recorded in provenance.json"
    # A JSON Schema document valid against the meta-schema it declares (draft-07 or 2020-12).
    schema = json.loads(path.read_bytes())
    validator_for(schema, default=None).check_schema(schema)  # type: ignore[arg-type]


@pytest.mark.parametrize("entry", EXTENSIONS, ids=[e["extension"] for e in EXTENSIONS])
def test_extension_schema_and_license_match_their_record(entry: dict[str, Any]) -> None:
    assert entry["repository"].startswith("https://github.com/modelcontextprotocol/")
    assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]) and entry["license"]
    assert _sha256(SCHEMAS / entry["file"]) == entry["sha256"], f"{entry['file']} differs from its record"
    license_file = entry["licenseFile"]
    assert license_file["path"] == "LICENSE" and _sha256(SCHEMAS / license_file["file"]) == license_file["sha256"]
    schema = json.loads((SCHEMAS / entry["file"]).read_bytes())
    validator_for(schema, default=None).check_schema(schema)  # type: ignore[arg-type]


def test_license_matches_its_record() -> None:
    record = PROVENANCE["licenseFile"]
    assert record["repository"] == UPSTREAM and record["path"] == "LICENSE"
    assert re.fullmatch(r"[0-9a-f]{40}", record["commit"])
    assert _sha256(SCHEMAS / record["file"]) == record["sha256"]


def test_the_implemented_revision_is_the_pinned_file() -> None:
    [entry] = [e for e in ENTRIES if e["protocolVersion"] == PINNED_VERSION]
    assert (entry["commit"], entry["sha256"]) == (PINNED_COMMIT, PINNED_SHA256)


def test_nothing_reads_beside_the_checkout() -> None:
    """The schemas once came from a reference folder next to the repository; nothing may."""
    outside = re.compile(r"\.\./shared\b|[\"']shared[\"']\s*/\s*[\"']reference[\"']|MCPWIRE_SCHEMA")
    roots = [REPO / d for d in ("mcpwire", "adapters", "tests", "fuzz", "conformance", "scripts", "docs", "examples", ".ci")]
    files = [p for p in REPO.iterdir() if p.is_file()]
    files += [p for root in roots if root.is_dir() for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    found = []
    for path in files:
        if path.suffix not in {".py", ".md", ".toml", ".yml", ".in", ""} or path == Path(__file__).resolve():
            continue
        text = path.read_text(errors="replace")
        found += [f"{path.relative_to(REPO)}: {m.group(0)}" for m in outside.finditer(text)]
    assert found == []
