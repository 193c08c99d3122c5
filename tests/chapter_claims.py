"""What the chapters say, read back from executed notebooks: each generated cell's facts and claims,
which :class:`brrr.claims.Said` (and :class:`brrr.book.Answer`) keep in their outputs' metadata."""
from __future__ import annotations

import json
from pathlib import Path


def cells(notebook) -> list:
    """``[{'key': source, 'facts': {...}, 'claims': [...], 'error': bool, 'texts': [...]}]`` for every
    code cell of the executed notebook at ``notebook``, in order."""
    nb = json.loads(Path(notebook).read_text())
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        facts, claims, texts, error = {}, [], [], False
        for output in cell.get("outputs", []):
            error |= output.get("output_type") == "error"
            for mime, meta in (output.get("metadata") or {}).items():
                said = (meta or {}).get("brrr") if isinstance(meta, dict) else None
                if said:
                    facts.update(said.get("facts", {}))
                    claims.extend(said.get("claims", []))
                    texts.append(said.get("markdown") or "".join(output.get("data", {}).get(mime, "")))
        out.append({"key": "".join(cell["source"]).strip(), "facts": facts, "claims": claims,
                    "error": error, "texts": texts})
    return out


def categorical(facts: dict) -> dict:
    """The facts that are outcomes, not measured numbers: strings, booleans, whole numbers, and
    lists or dicts of them (a float is a measurement; its claims check it)."""
    def keep(v):
        if isinstance(v, (str, bool, int)) and not isinstance(v, float):
            return True
        if isinstance(v, list):
            return all(keep(x) for x in v)
        if isinstance(v, dict):
            return all(keep(x) for x in v.values())
        return False
    return {k: v for k, v in facts.items() if keep(v)}


def golden_diff(chapter: str, sets_dir, golden_dir) -> dict:
    """The changes a chapter's replays make to the golden outcomes, in the form of
    ``tests/data/golden/changes/<NN>.json`` with every reason left to fill in: ``python
    tests/chapter_claims.py 02`` prints it (after the harness has replayed the chapter)."""
    out = {"cells": {}, "facts": {}}
    for label in ("nvidia-h200", "amd-epyc-2-threads"):
        golden = json.loads((Path(golden_dir) / f"{label}.json").read_text())
        name = next(n for n in golden if n.startswith(chapter))
        now = {c["key"]: categorical(c["facts"]) for c in cells(Path(sets_dir) / label / f"{name}.ipynb")}
        for cell in golden[name]:
            if cell["key"] not in now:
                out["cells"][cell["key"]] = {"now": "WHICH CELL (or null)", "why": "WHY"}
                continue
            for fact, value in cell["facts"].items():
                if now[cell["key"]].get(fact) != value:
                    out["facts"][f"{label} :: {cell['key']} :: {fact}"] = \
                        f"WHY: was {value!r}, now {now[cell['key']].get(fact)!r}"
    return out


if __name__ == "__main__":
    import sys
    root = Path(__file__).resolve().parents[1]
    print(json.dumps(golden_diff(sys.argv[1], root / "_build" / "sets", root / "tests" / "data" / "golden"),
                     indent=1, ensure_ascii=False))
