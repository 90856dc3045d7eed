"""A by-hand fuzz run of the wire (not a test): random lines into ``jsonrpc.parse`` and the
``from_dict``/``encode`` round trip, and random messages into a Session pair over memory.

    python tests/fuzz/fuzz_wire.py --seconds 180 [--seed N]

It prints how long it ran, how many inputs it tried, and what it found: an exception other
than the documented ones (parse never raises; encode raises ValueError/TypeError only for
values JSON cannot carry), a round trip that changes a message, a hang, or a lost answer.
Exit status 1 if anything was found.
"""

import argparse
import json
import os
import random
import sys
import threading
import time
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
warnings.simplefilter("ignore")  # hypothesis warns that .example() is not for tests: this is not one

from fuzz.strategies import expected_ids, raw_lines, wire_values  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from minimcp.engine.session import Session  # noqa: E402
from minimcp.errors import MCPError  # noqa: E402
from minimcp.protocol import jsonrpc  # noqa: E402
from minimcp.transports import memory  # noqa: E402

WAIT = 5.0  # seconds an answer may take before it counts as lost


def check_parse(line: bytes, found: list) -> None:
    """parse() never raises; what it reads encodes and parses back to the same message."""
    try:
        parsed = jsonrpc.parse(line)
    except Exception:
        found.append(("parse raised", line, traceback.format_exc()))
        return
    items = parsed if isinstance(parsed, list) else [parsed]
    for item in items:
        if isinstance(item, jsonrpc.Malformed):
            item.error_response().to_dict()
            continue
        try:
            again = jsonrpc.parse(jsonrpc.encode(item))
        except (ValueError, TypeError):
            continue  # documented: a value JSON cannot carry
        except Exception:
            found.append(("encode raised", line, traceback.format_exc()))
            continue
        if type(again) is not type(item) or json.dumps(again.to_dict(), sort_keys=True) != \
                json.dumps(item.to_dict(), sort_keys=True):
            found.append(("round trip changed the message", line, repr((item, again))))


class Pair:
    """A server-like Session (echo and ping) and a raw writer on the other end of a memory pair."""

    def __init__(self) -> None:
        self.raw, server_end = memory.pair()
        self.session = Session(server_end, {"echo": lambda params, ctx: params}, name="fuzz")
        self.session.start()
        self.probe = 0

    def check(self, line: bytes, found: list) -> None:
        """Feed one line, then a ping; every readable request id is answered once, the ping too."""
        self.raw._outbox.put(line)  # the raw bytes, as a peer's pipe would carry them
        self.probe += 1
        probe = f"probe-{self.probe}"
        self.raw.write(jsonrpc.Request(probe, "ping"))
        want = expected_ids(line, batches_allowed=False)
        answers: dict = {}
        deadline = time.monotonic() + WAIT
        remaining = {json.dumps(i) for i in want} | {json.dumps(probe)}
        while remaining:
            if time.monotonic() > deadline:
                found.append(("lost answer / hang", line, f"no answer for {remaining}"))
                self.reset()
                return
            got = self.raw.read()
            if got is None:
                found.append(("session closed", line, ""))
                self.reset()
                return
            for one in got if isinstance(got, list) else [got]:
                if isinstance(one, (jsonrpc.Response, jsonrpc.ErrorResponse)):
                    key = json.dumps(one.id)
                    answers[key] = answers.get(key, 0) + 1
                    remaining.discard(key)
        for key in {json.dumps(i) for i in want}:
            if answers.get(key, 0) != sum(json.dumps(i) == key for i in want):
                found.append(("answer count", line, f"{key}: {answers.get(key)}"))

    def reset(self) -> None:
        self.close()
        self.__init__()

    def close(self) -> None:
        self.raw.close()
        self.session.close()


def main() -> int:
    """Run until --seconds pass; print the figures and the findings."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    random.seed(args.seed)
    inputs = st.one_of(wire_values("server").map(lambda v: json.dumps(v).encode()), raw_lines,
                       wire_values("server").map(lambda v: json.dumps(v, ensure_ascii=False)
                                                 .encode("utf-8", "surrogatepass")))
    found: list = []
    counts = {"parse": 0, "session": 0}
    pair = Pair()
    start = time.monotonic()
    threads_before = threading.active_count()
    try:
        while time.monotonic() - start < args.seconds and len(found) < 50:
            line = inputs.example()
            check_parse(line.replace(b"\n", b" "), found)
            counts["parse"] += 1
            if b"\n" not in line:
                try:
                    pair.check(line, found)
                except MCPError as exc:
                    found.append(("session raised", line, repr(exc)))
                    pair.reset()
                counts["session"] += 1
    finally:
        pair.close()
    elapsed = time.monotonic() - start
    print(f"ran {elapsed:.1f}s: {counts['parse']} inputs into parse/encode, {counts['session']} into a "
          f"Session pair ({counts['parse'] / elapsed:.0f}/s); threads {threads_before} -> "
          f"{threading.active_count()}")
    if not found:
        print("found nothing: no unexpected exception, no changed round trip, no hang, no lost answer")
        return 0
    print(f"found {len(found)}:")
    for kind, line, detail in found[:20]:
        print(f"- {kind}: {line[:200]!r}\n  {detail[-600:]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
