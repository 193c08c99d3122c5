"""A Sphinx extension of the book: pages carry no saved widget state.

The book's HTML loads no widget JavaScript (see ``nb_ipywidgets_js`` in _config.yml): an
interactive widget, such as chapter 2's roofline explorer, also carries a picture of itself,
which the static page shows. myst-nb would still embed the widgets' saved state (sliders,
their layouts, the explorer's rendered figure) in the page as an inert script block. This
drops it before the page is written.
"""


def _drop_widget_state(app, pagename, templatename, context, doctree):
    pages = getattr(app.env, "nb_metadata", {})
    pages.get(pagename, {}).get("js_files", {}).pop("ipywidgets_state", None)


def setup(app):
    # Before myst-nb's own html-page-context handler (priority 500) adds the page's scripts.
    app.connect("html-page-context", _drop_widget_state, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
