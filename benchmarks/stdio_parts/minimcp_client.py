"""minimcp's client contender: ``minimcp.connect`` and ``call_tool``, public API only.

Same command line and protocol as ``raw_client.py`` (see ``run_blocks`` there).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_client import parse_args, run_blocks  # noqa: E402

import minimcp  # noqa: E402


def main():
    warmup, text, command = parse_args(sys.argv[1:])
    with minimcp.connect(command) as client:
        report = run_blocks(lambda t: client.call_tool("echo", {"text": t}).text, warmup, text)
    report["version"] = f"minimcp {minimcp.__version__}"
    print(json.dumps(report), flush=True)


main()
