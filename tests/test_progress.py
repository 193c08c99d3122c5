"""Progress bars show while a sweep runs and leave nothing in the saved notebook."""
import nbformat
from nbclient import NotebookClient

from brrr.progress import progress


def test_terminal_bar_counts_and_can_be_disabled(capsys):
    assert list(progress(range(3), desc="sweep")) == [0, 1, 2]
    assert list(progress(range(3), enabled=False)) == [0, 1, 2]


def test_notebook_bar_is_html_and_empties_itself(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from brrr.progress import progress\n"
        "import time\n"
        "for _ in progress(range(3), desc='sweep'):\n"
        "    time.sleep(0.6)\n"
        "print('done')")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    html = [o for o in outputs if o.output_type == "display_data"]
    assert len(html) == 1, outputs                       # one display, updated in place
    assert "".join(html[0].data["text/html"]) == ""      # emptied when the sweep ended
    assert not any(k.startswith("application/vnd.jupyter.widget") for o in html for k in o.data)
    assert "widgets" not in nb.metadata                  # no widget state to save
    assert any(o.output_type == "stream" and "done" in o.text for o in outputs)
