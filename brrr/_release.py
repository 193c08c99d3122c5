"""Where brrr is published. Written by scripts/sync_release.py from _config.yml:
change _config.yml and run that script, never this file."""
DISTRIBUTION = "brrr-book"   # pip install name (the PyPI name "brrr" is another project)
VERSION = "0.1.0"
TAG = "v0.1.0"
REPOSITORY = "https://github.com/brrr-book/brrr"
SITE = "https://brrr-book.github.io/brrr/"
INSTALL = f"{DISTRIBUTION} @ git+{REPOSITORY}@{TAG}"   # a pip requirement for this release
