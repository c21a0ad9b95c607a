"""The book runs offline: any attempt to reach the network fails, in the tests and in the notebooks.

tests/conftest.py turns on the guard of tests/network_guard for the pytest process and, through
`BOOK_BLOCK_NETWORK=1` and `PYTHONPATH`, for every Python process the tests start (notebook kernels,
the site build). The loopback stays open: nbval talks to its kernels and the browser checks to the
site over 127.0.0.1. Hugging Face libraries are told to stay offline (`HF_HUB_OFFLINE=1`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import book_network_guard
import nbformat
import pytest
from book_network_guard import NetworkBlockedError
from nbclient import NotebookClient

# A public address (Cloudflare's DNS) and a name: both must be refused before any packet leaves.
REMOTE_ADDRESS = ("1.1.1.1", 443)
REMOTE_URL = "https://huggingface.co/api/models/bert-base-uncased"

ATTEMPTS = f"""
import socket, urllib.request
for attempt in (
    lambda: socket.create_connection({REMOTE_ADDRESS!r}, timeout=5),
    lambda: urllib.request.urlopen({REMOTE_URL!r}, timeout=5),
    lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53)),
):
    try:
        attempt()
    except Exception as error:
        print(type(error).__name__)
    else:
        print("CONNECTED")
"""


def test_the_guard_is_on_in_the_tests_and_for_their_subprocesses():
    assert book_network_guard.is_installed()
    assert os.environ["BOOK_BLOCK_NETWORK"] == "1"
    assert str(book_network_guard.GUARD_DIR) in os.environ["PYTHONPATH"].split(os.pathsep)
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_a_connection_to_the_internet_fails_in_the_test_process():
    with pytest.raises(NetworkBlockedError, match="1.1.1.1"):
        socket.create_connection(REMOTE_ADDRESS, timeout=5)
    with pytest.raises(NetworkBlockedError, match="huggingface.co"):
        urllib.request.urlopen(REMOTE_URL, timeout=5)
    with pytest.raises(NetworkBlockedError, match="8.8.8.8:53"):
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))


def test_the_loopback_stays_open():
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted = threading.Thread(target=lambda: server.accept()[0].close())
    accepted.start()
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass
    accepted.join(timeout=5)
    server.close()
    assert book_network_guard.is_local("localhost") and book_network_guard.is_local("::1")
    assert not book_network_guard.is_local("huggingface.co") and not book_network_guard.is_local(
        "10.0.0.1"
    )


def test_the_guard_refuses_before_anything_leaves(monkeypatch):
    """A remote address never reaches the real `connect`; a local one does."""
    calls = []
    monkeypatch.setattr(
        book_network_guard, "_true_connect", lambda sock, address: calls.append(address)
    )
    with socket.socket() as sock:
        with pytest.raises(NetworkBlockedError):
            sock.connect(("192.0.2.1", 80))
        sock.connect(("127.0.0.1", 80))
    assert calls == [("127.0.0.1", 80)]


def test_a_python_subprocess_cannot_reach_the_network():
    result = subprocess.run(
        [sys.executable, "-c", ATTEMPTS], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["NetworkBlockedError"] * 3


def test_a_notebook_kernel_cannot_reach_the_network(tmp_path):
    """The notebooks run in kernels like this one (nbval and scripts/notebooks/execute_notebooks.py
    use the same environment)."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [
        nbformat.v4.new_code_cell(ATTEMPTS),
        nbformat.v4.new_code_cell(
            "import os\nfrom huggingface_hub import constants\n"
            "print(os.environ.get('HF_HUB_OFFLINE'), constants.HF_HUB_OFFLINE)"
        ),
    ]
    where = {"metadata": {"path": str(tmp_path)}}
    client = NotebookClient(notebook, timeout=120, kernel_name="python3", resources=where)
    client.execute()
    printed = [
        "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        for cell in notebook.cells
    ]
    assert printed[0].split() == ["NetworkBlockedError"] * 3
    assert printed[1].split() == ["1", "True"]


def test_hugging_face_downloads_are_refused_offline(tmp_path):
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    with pytest.raises(LocalEntryNotFoundError):
        hf_hub_download("bert-base-uncased", "config.json", cache_dir=tmp_path)


def test_urllib_errors_are_not_mistaken_for_the_guard():
    """The guard's error is not an OSError, so `except OSError` retry loops cannot hide an attempt."""
    assert not issubclass(NetworkBlockedError, OSError)
    assert not issubclass(NetworkBlockedError, urllib.error.URLError)
