#!/usr/bin/env python
"""Build the instructor edition of the book: the public book plus the exercise masters.

The public site never contains solutions: ``_config.yml`` excludes ``solutions/``. This
script writes a temporary configuration and table of contents (under
``_build/solutions_src/``) that include every master ``solutions/<stem>/<stem>.ipynb`` (the
solutions with their public and hidden tests) as an extra part, then runs
``jupyter-book build`` into ``_build/solutions``. Do not publish that folder.

    python scripts/build_solutions_book.py           # chapters executed in quick mode (minutes)
    python scripts/build_solutions_book.py --full    # chapters executed at full size, as the public book

The chapters are always executed (their figures and the sentences about them come from
the run), and warnings are errors, as in the public build. The masters themselves are
rendered, never executed.
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "_build", "solutions_src")
OUT = os.path.join(ROOT, "_build", "solutions")
PART = "Exercise solutions (instructors only)"


def solution_files() -> list:
    """Toc entries ('solutions/<stem>/<stem>') of every master notebook, sorted."""
    entries = []
    for path in sorted(glob.glob(os.path.join(ROOT, "solutions", "*", "*.ipynb"))):
        stem = os.path.basename(os.path.dirname(path))
        if os.path.basename(path) == f"{stem}.ipynb":
            entries.append(f"solutions/{stem}/{stem}")
    return entries


def instructor_config() -> dict:
    with open(os.path.join(ROOT, "_config.yml"), encoding="utf-8") as f:
        config = yaml.safe_load(f)
    config["title"] = f"{config.get('title', 'brrr')} (instructor edition, with solutions)"
    config["exclude_patterns"] = [p for p in config.get("exclude_patterns", [])
                                  if p.strip("/").split("/")[0] != "solutions"]
    # jupyter-book resolves local extension folders against the config file's folder, and
    # this config is written under _build/: give it absolute paths.
    extensions = config.get("sphinx", {}).get("local_extensions") or {}
    for name, folder in extensions.items():
        extensions[name] = os.path.join(ROOT, folder)
    return config


def instructor_toc() -> dict:
    with open(os.path.join(ROOT, "_toc.yml"), encoding="utf-8") as f:
        toc = yaml.safe_load(f)
    parts = [p for p in toc.get("parts", []) if p.get("caption") != PART]
    listed = {c.get("file") for p in parts for c in p.get("chapters", [])}
    exercises = [f"exercises/{e.split('/')[1]}/{e.split('/')[1]}" for e in solution_files()]
    if not set(exercises) <= listed:  # the public toc lacks the exercises part: add it here
        parts.append({"caption": "Exercises", "chapters": [{"file": e} for e in exercises]})
    parts.append({"caption": PART, "chapters": [{"file": s} for s in solution_files()]})
    toc["parts"] = parts
    return toc


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true",
                   help="execute the chapters at full size, as the public build does (slow); "
                        "default: quick mode (BRRR_QUICK=1)")
    args = p.parse_args(argv)
    if not solution_files():
        raise SystemExit("no master notebooks in solutions/")
    os.makedirs(WORK, exist_ok=True)
    config_path, toc_path = os.path.join(WORK, "_config.yml"), os.path.join(WORK, "_toc.yml")
    with open(config_path, "w", encoding="utf-8") as f:
        yaml.safe_dump(instructor_config(), f, sort_keys=False)
    with open(toc_path, "w", encoding="utf-8") as f:
        yaml.safe_dump(instructor_toc(), f, sort_keys=False)
    env = dict(os.environ, **({} if args.full else {"BRRR_QUICK": "1"}))
    jb = os.path.join(os.path.dirname(sys.executable), "jupyter-book")
    # -W: warnings are errors, so the instructor edition renders as cleanly as the public one.
    command = [jb if os.path.isfile(jb) else "jupyter-book", "build", ROOT, "--config", config_path,
               "--toc", toc_path, "--path-output", OUT, "--all", "-W", "-n", "--keep-going"]
    print(" ".join(command))
    code = subprocess.call(command, env=env, cwd=ROOT)
    if code == 0:
        print(f"instructor book: {os.path.join(OUT, '_build', 'html', 'index.html')} (do not publish)")
    return code


if __name__ == "__main__":
    sys.exit(main())
