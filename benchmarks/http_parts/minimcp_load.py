"""minimcp's client contender: ``minimcp.connect(url)`` and ``call_tool``, public API only.

Same protocol with the driver as ``load.py`` (one JSON cell in, one JSON
result out), same cells (``run_cell``): for each cell one client is
connected (untimed) with ``protocol=`` the cell's wire, and its ``threads``
threads all call through it, as an application's threads would share one
client (it pools a keep-alive connection per thread that calls at once); it
is closed after the cell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load import serve_cells  # noqa: E402

import minimcp  # noqa: E402


def main():
    clients = []

    def open_for(cell):
        client = minimcp.connect(cell["url"], protocol=cell["wire"])
        clients.append(client)
        text = cell["text"]
        if client.call_tool("echo", {"text": text}).text != text:
            raise RuntimeError("the echo tool answered something else")

        def open_thread():
            return (lambda: client.call_tool("echo", {"text": text}).text == text), (lambda: None)
        return open_thread

    def close_clients():
        while clients:
            clients.pop().close()

    try:
        serve_cells(open_for, close_clients)
    finally:
        close_clients()


main()
