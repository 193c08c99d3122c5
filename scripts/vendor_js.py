"""Copy the JavaScript the offline book needs from node_modules into book/static/vendor/.

The built HTML must render math without any CDN, so the few files it loads are
committed under ``book/static/vendor/`` (served by Sphinx
through ``html_static_path``; see ``_config.yml``). This script regenerates them
from the versions pinned in ``package.json`` / ``package-lock.json``:

    npm ci --ignore-scripts
    python scripts/vendor_js.py          # copy; prints the total size
    python scripts/vendor_js.py --check  # exit 1 if book/static/vendor differs

Only the files a page actually loads are copied (about 2 MB), not the packages.
"""
import argparse
import filecmp
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE = ROOT / "node_modules"
VENDOR = ROOT / "book" / "static" / "vendor"

# (source under node_modules, destination under book/static/vendor); a source
# ending in "/" copies the directory, "*.woff*" style globs copy matching files.
FILES = [
    # MathJax 3: one combined component with every TeX extension (so nothing is
    # autoloaded from elsewhere), its CHTML fonts, and the accessibility piece
    # the menu loads by default.
    ("mathjax/es5/tex-chtml-full.js", "mathjax/tex-chtml-full.js"),
    ("mathjax/es5/output/chtml/fonts/woff-v2/", "mathjax/output/chtml/fonts/woff-v2/"),
    ("mathjax/es5/a11y/assistive-mml.js", "mathjax/a11y/assistive-mml.js"),
    ("mathjax/LICENSE", "mathjax/LICENSE"),
    # No widget manager: the static site shows a widget's picture instead (see
    # brrr.widgets.Explorer and nb_mime_priority_overrides in _config.yml).
]


def planned():
    """Pairs (source file, destination file) for everything in FILES."""
    pairs = []
    for src, dst in FILES:
        if src.endswith("/"):
            for f in sorted((NODE / src).rglob("*")):
                if f.is_file():
                    pairs.append((f, VENDOR / dst / f.relative_to(NODE / src)))
        elif "*" in src:
            parent, pattern = src.rsplit("/", 1)
            for f in sorted((NODE / parent).glob(pattern)):
                pairs.append((f, VENDOR / dst / f.name))
        else:
            pairs.append((NODE / src, VENDOR / dst))
    missing = [str(s) for s, _ in pairs if not s.is_file()]
    if missing or not pairs:
        sys.exit("missing in node_modules (run `npm ci --ignore-scripts` first): "
                 + ", ".join(missing or ["everything"]))
    return pairs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare instead of copying; exit 1 on any difference")
    args = parser.parse_args(argv)
    pairs = planned()
    if args.check:
        wanted = {d for _, d in pairs}
        present = {p for p in VENDOR.rglob("*") if p.is_file()} if VENDOR.exists() else set()
        stale = [str(d) for s, d in pairs if not d.is_file() or not filecmp.cmp(s, d, shallow=False)]
        extra = sorted(str(p) for p in present - wanted)
        if stale or extra:
            print("book/static/vendor is out of date:", *stale, *extra, sep="\n  ")
            return 1
        print("book/static/vendor matches node_modules")
        return 0
    if VENDOR.exists():
        shutil.rmtree(VENDOR)
    for src, dst in pairs:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    total = sum(d.stat().st_size for _, d in pairs)
    print(f"copied {len(pairs)} files, {total / 1e6:.1f} MB, into {VENDOR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
