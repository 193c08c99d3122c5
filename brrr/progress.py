"""A progress bar for long sweeps that leaves nothing behind in a saved notebook.

In a terminal this is plain ``tqdm`` on stderr. In a notebook (Jupyter, Colab,
or the book's build, which runs the chapters in a kernel too) the bar is an HTML
``<progress>`` element in one display output, updated in place through an
IPython display handle and emptied when the sweep ends. No widget is created,
so nothing needs the ipywidgets JavaScript, and the executed notebook the book
is built from stores an empty output where the bar was.
"""
from __future__ import annotations

import html

from tqdm.std import tqdm as _tqdm


def _in_kernel() -> bool:
    """True inside an IPython kernel (Jupyter, Colab, the book build), not a terminal."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class _HTMLBar(_tqdm):
    """tqdm's counting and rate estimates, drawn as HTML in one display output."""

    def __init__(self, *args, **kwargs):
        from IPython.display import HTML, display
        self._handle = display(HTML(""), display_id=True)
        kwargs.setdefault("mininterval", 0.5)
        super().__init__(*args, **kwargs)

    def display(self, msg=None, pos=None):  # noqa: D401 - tqdm's hook, called on every refresh
        from IPython.display import HTML
        if self._handle is None:
            return
        d = self.format_dict
        text = html.escape(self.format_meter(**{**d, "bar_format": "{desc}: {n_fmt}/{total_fmt} "
                                                 "[{elapsed}<{remaining}]"}))
        total = d["total"] or 1
        self._handle.update(HTML(f'<progress value="{d["n"]}" max="{total}" style="width: 16em"></progress>'
                                 f' <code style="font-size: 0.85em">{text}</code>'))

    def close(self):
        from IPython.display import HTML
        super().close()
        if getattr(self, "_handle", None) is not None:
            self._handle.update(HTML(""))   # the saved notebook keeps an empty output
            self._handle = None


def progress(iterable, desc: str = "", enabled: bool = True):
    """Wrap ``iterable`` in a progress bar (see the module docstring); ``enabled=False``: none."""
    if not enabled:
        return _tqdm(iterable, desc=desc, disable=True)
    if _in_kernel():
        return _HTMLBar(iterable, desc=desc, leave=False)
    return _tqdm(iterable, desc=desc, leave=False)
