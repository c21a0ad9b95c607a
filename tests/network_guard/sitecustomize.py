"""Imported by Python at start-up when this folder is on PYTHONPATH (the tests put it there)."""

import os

if os.environ.get("BOOK_BLOCK_NETWORK") == "1":
    import book_network_guard

    book_network_guard.install()
