"""Make every copy of the published location agree with _config.yml.

_config.yml holds the one source: ``repository.url`` (the GitHub repository),
``repository.branch`` (the release tag, ``v<version>``; Colab buttons open that tag's
notebooks) and ``html.baseurl`` (the published site). This script writes what derives from them:

    brrr/_release.py         the package version (pyproject reads it), repository, tag and site
                             (the grader downloads public tests from the tag)
    install cells            chapters, appendices, exercises and their masters
    README.md, book/*.md     install lines, clone commands, Colab links, the site and issue links
    CITATION.cff             version, repository, site

    python scripts/sync_release.py           # rewrite whatever disagrees
    python scripts/sync_release.py --check   # list what disagrees and exit 1 (tests/test_release.py)
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RELEASE_MODULE = ROOT / "brrr" / "_release.py"
TEXT_FILES = ("README.md", "CITATION.cff", "pyproject.toml", "book/*.md", "book/*.ipynb", "chapters/*.ipynb",
              "solutions/*/*.ipynb", "exercises/*/*.ipynb")
GITHUB = re.compile(r"^https://github\.com/([\w.-]+)/([\w.-]+?)/?$")
TAG = re.compile(r"^v(\d+\.\d+\.\d+(?:(?:a|b|rc|\.post|\.dev)\d+)?)$")


def distribution_name() -> str:
    """The name the package is installed by (pyproject's [project] name)."""
    match = re.search(r'^name\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    if not match:
        raise SystemExit("pyproject.toml: no [project] name")
    return match.group(1)


def release() -> dict:
    """The published location, from _config.yml, checked."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repository = config.get("repository") or {}
    url, tag = repository.get("url", ""), str(repository.get("branch", ""))
    site = (config.get("html") or {}).get("baseurl", "")
    github, version = GITHUB.match(url), TAG.match(tag)
    if not github:
        raise SystemExit(f"_config.yml: repository.url must be https://github.com/ORG/REPO, got {url!r}")
    if not version:
        raise SystemExit(f"_config.yml: repository.branch must be a release tag like v0.1.0, got {tag!r}")
    if not site.startswith("https://") or not site.endswith("/"):
        raise SystemExit(f"_config.yml: html.baseurl must be the site's https:// address ending in /, got {site!r}")
    org, repo = github.groups()
    return {"DISTRIBUTION": distribution_name(), "VERSION": version.group(1), "TAG": tag,
            "REPOSITORY": f"https://github.com/{org}/{repo}", "ORG": org, "REPO": repo, "SITE": site}


def release_module(r: dict) -> str:
    return (f'"""Where brrr is published. Written by scripts/sync_release.py from _config.yml:\n'
            f'change _config.yml and run that script, never this file."""\n'
            f'DISTRIBUTION = "{r["DISTRIBUTION"]}"   # pip install name (the PyPI name "brrr" is another project)\n'
            f'VERSION = "{r["VERSION"]}"\n'
            f'TAG = "{r["TAG"]}"\n'
            f'REPOSITORY = "{r["REPOSITORY"]}"\n'
            f'SITE = "{r["SITE"]}"\n'
            f'INSTALL = f"{{DISTRIBUTION}} @ git+{{REPOSITORY}}@{{TAG}}"   # a pip requirement for this release\n')


def previous() -> dict:
    """The values the last sync wrote (so that an old repository or site address can be replaced)."""
    if not RELEASE_MODULE.exists():
        return {}
    names = {}
    for node in ast.parse(RELEASE_MODULE.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            names[node.targets[0].id] = node.value.value
    return names


def rewrite(text: str, r: dict, old: dict) -> str:
    """``text`` with every install line, Colab link, clone command and address made current."""
    for key in ("REPOSITORY", "SITE"):
        if old.get(key) and old[key] != r[key]:
            text = text.replace(old[key], r[key])
    text = re.sub(r"\bbrrr(?:-book)?(\[[a-z,]*\])? @ git\+https://github\.com/[\w.-]+/[\w.-]+?(?:@[\w.-]+)?"
                  r"(?=[\"'\\\s`]|$)",
                  lambda m: f"{r['DISTRIBUTION']}{m.group(1) or ''} @ git+{r['REPOSITORY']}@{r['TAG']}", text)
    text = re.sub(r"https://colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/[\w.-]+/",
                  f"https://colab.research.google.com/github/{r['ORG']}/{r['REPO']}/blob/{r['TAG']}/", text)
    text = re.sub(r"git clone(?: --branch [\w.-]+)? https://github\.com/[\w.-]+/[\w.-]+?(\s+)cd [\w.-]+",
                  lambda m: f"git clone --branch {r['TAG']} {r['REPOSITORY']}{m.group(1)}cd {r['REPO']}", text)
    if text.startswith("cff-version"):
        text = re.sub(r"^version: .*$", f'version: "{r["VERSION"]}"', text, flags=re.MULTILINE)
    return text


def changes() -> dict:
    """{path: new text} for every file that disagrees with _config.yml."""
    r, old = release(), previous()
    out = {}
    module = release_module(r)
    if not RELEASE_MODULE.exists() or RELEASE_MODULE.read_text() != module:
        out[RELEASE_MODULE] = module
    for pattern in TEXT_FILES:
        for path in sorted(ROOT.glob(pattern)):
            text = path.read_text()
            new = rewrite(text, r, old)
            if new != text:
                out[path] = new
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only list the files that disagree; exit 1 if any")
    args = parser.parse_args(argv)
    todo = changes()
    for path, text in todo.items():
        print(f"{'disagrees' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
        if not args.check:
            path.write_text(text)
    if args.check and todo:
        print("run: python scripts/sync_release.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
