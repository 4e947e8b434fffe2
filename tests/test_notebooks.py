"""The notebooks in ``notebooks/`` run top to bottom without errors.

Each is executed with nbclient on a kernel that runs this interpreter (a
kernel spec written to a temporary ``JUPYTER_PATH``, so a ``python3`` spec
elsewhere on the machine cannot pick another Python).  The throughput
notebook gets a tiny bench run through ``REDUCEMEAN_BENCH_ARGS``.

The notebooks are stored without outputs; that is checked too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
KERNEL = "reducemean-tests"
#: Small inputs that still walk every plotted code path (``--tiny`` is the bench's test mode).
TINY_BENCH = "--quick --tiny --cases large,float32,small"


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    spec = tmp_path / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "reducemean tests",
        "language": "python",
    }))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    monkeypatch.setenv("REDUCEMEAN_BENCH_ARGS", TINY_BENCH)
    return KERNEL


def _execute(name, kernel):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        kernel_name=kernel,
        timeout=240,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    return nb


def _stream_text(nb):
    return "".join(
        out.get("text", "")
        for cell in nb.cells if cell.cell_type == "code"
        for out in cell.get("outputs", []) if out.get("output_type") == "stream"
    )


@pytest.mark.parametrize("name", ["quickstart.ipynb", "throughput.ipynb"])
def test_stored_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.mark.timeout(300)
def test_quickstart_runs(kernel):
    nb = _execute("quickstart.ipynb", kernel)
    text = _stream_text(nb)
    # the accuracy cases print numpy's result and reducemean's; reducemean's is exact
    assert "np.ones((2*10**7, 2), np.float32).mean(axis=0)" in text
    assert "reducemean [1. 1.] ...  relative error 0.0%" in text
    assert "skipped:" not in text  # the dask and onnx extras are installed for the tests


@pytest.mark.timeout(300)
def test_throughput_runs(kernel):
    nb = _execute("throughput.ipynb", kernel)
    text = _stream_text(nb)
    assert "reducemean.bench" in text and "--json" in text
    images = [
        out for cell in nb.cells if cell.cell_type == "code"
        for out in cell.get("outputs", []) if "image/png" in out.get("data", {})
    ]
    assert len(images) >= 1  # the GB/s chart
