"""Instruction counts of the clients: a raw client, minimcp's, minimcp's from another tree, over stdio and HTTP.

Run by hand (it is not a test)::

    python benchmarks/instructions_client.py                          # raw and this tree
    python benchmarks/instructions_client.py --baseline ../before     # + minimcp@baseline

The steady twin of the client rows of ``stdio.py`` and ``http.py``. The *client* process
runs under valgrind's callgrind (the server it talks to runs natively: callgrind follows
no child), makes a fixed number of ``tools/call`` echo calls against the floor server and
exits:

- stdio: ``stdio_parts/raw_client.py`` and ``minimcp_client.py`` (the scripts ``stdio.py``
  runs, same loop) start ``stdio_parts/floor_server.py`` as their child, make the
  handshake and one call, then one block of 1 + N (``--calls``) timed calls, and exit;
- HTTP: ``http_parts/count_client.py raw|minimcp`` against ``http_parts/floor_server.py``
  (started once, natively), on each wire: 2025-11-25 and 2026-07-28;
- per call: (the run with N calls - the run with none) / N.

Each figure is the median of ``--repeat`` runs, printed with its min-max spread;
``--jobs`` counted runs go side by side (default 2). Set-up as in ``instructions.py``;
the HTTP clients' venvs get ``requests`` (and what it needs) and ``sseclient`` copied in
from this interpreter, which must have them. It needs valgrind.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]  # benchmarks/http.py is not http
import argparse  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

sys.path.append(HERE)
import callgrind  # noqa: E402
from instructions_http import free_port, wait_listening  # noqa: E402
from trees import git_commit  # noqa: E402

REPO = os.path.dirname(HERE)
STDIO, HTTP = os.path.join(HERE, "stdio_parts"), os.path.join(HERE, "http_parts")
WIRES = ("2025-11-25", "2026-07-28")
HTTP_DEPENDENCIES = ("requests", "urllib3", "idna", "charset_normalizer", "certifi", "sseclient")


def count(command, stdin, workdir, tag, expect, timeout=900):
    """Instructions of one client process; ``expect`` checks its output."""
    log = os.path.join(workdir, f"callgrind-{tag}.log")
    process = callgrind.start_counted(command, log, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out, _ = process.communicate(stdin, timeout=timeout)
    if process.returncode != 0 or not expect(out):
        sys.exit(f"{' '.join(command)}: exit code {process.returncode}, output {out[-500:]!r}")
    return callgrind.collected(log, command)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000, help="calls for the per-call figure (default 1000)")
    callgrind.add_run_options(parser)
    parser.add_argument("--transports", default="stdio,http", help="comma-separated (default: stdio,http)")
    callgrind.add_tree_options(parser, REPO)
    args = parser.parse_args()
    transports = args.transports.split(",")
    trees = callgrind.trees_to_count(parser, args)

    print(f"client instruction counts (valgrind callgrind): median of {args.repeat} runs, {args.calls} sequential "
          f"calls against the floor server; CPython {sys.version.split()[0]}, in venvs without site-packages")
    callgrind.print_setup(trees, git_commit)

    workdir = tempfile.mkdtemp(prefix="minimcp-instructions-client-")
    floor_http = None
    try:
        deps = HTTP_DEPENDENCIES if "http" in transports else ()
        pythons = {"raw": callgrind.make_venv(workdir, "raw")}
        pythons.update((name, callgrind.make_venv(workdir, name, root, deps)) for name, root in trees)
        names = list(pythons)
        for python in pythons.values():  # the parts' own modules (raw_client, load), compiled once, uncounted
            subprocess.run([python, "-m", "compileall", "-q", STDIO, HTTP], check=True)
        cases = []  # (label, name, command(n), stdin(n), expect(n))
        if "stdio" in transports:
            floor = [pythons["raw"], os.path.join(STDIO, "floor_server.py")]
            for name in names:
                script = os.path.join(STDIO, "raw_client.py" if name == "raw" else "minimcp_client.py")
                cases.append(("stdio", name, lambda n, s=script, p=pythons[name]:
                               [p, s, "--warmup", "0", "--text", "hello", "--", *floor],
                               lambda n: f"{n + 1}\nend\n".encode(),  # (its report needs one timed call)
                               lambda n: (lambda out: f'"calls": {n + 1},'.encode() in out)))
        if "http" in transports:
            port = free_port()
            floor_http = subprocess.Popen([sys.executable, os.path.join(HTTP, "floor_server.py"), str(port)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            import time
            wait_listening(floor_http, port, time.monotonic() + 60)
            url = f"http://127.0.0.1:{port}/mcp"
            for wire in WIRES:
                for name in names:
                    kind = "raw" if name == "raw" else "minimcp"
                    cases.append((f"http {wire}", name, lambda n, k=kind, p=pythons[name], w=wire:
                                  [p, os.path.join(HTTP, "count_client.py"), k, url, w, str(n)],
                                  lambda n: b"", lambda n: (lambda out: out.strip() == str(n).encode())))
        tasks = [(case, n, r) for case in cases for n in (0, args.calls) for r in range(args.repeat)]

        def run(task):
            (label, name, command, stdin, expect), n, r = task
            tag = f"{label}-{name}-{n}-{r}".replace(" ", "_").replace("@", "_")
            result = count(command(n), stdin(n), workdir, tag, expect(n))
            print(f"  {label} {name} {n} calls: {result / 1e6:.1f}M", file=sys.stderr, flush=True)
            return result

        counts = callgrind.count_side_by_side(tasks, run, args.jobs)
    finally:
        if floor_http is not None:
            floor_http.terminate()
            floor_http.wait()
        shutil.rmtree(workdir, ignore_errors=True)

    table = {}
    for (case, n, _), c in counts.items():
        table.setdefault((case[0], case[1], n), []).append(c)
    print()
    print(f"{'':<18}{'transport':<18}{'start-up':>11}{'x raw':>8}{'per call':>11}{'x raw':>8}{'spread':>14}")
    medians = {}
    for label in dict.fromkeys(case[0] for case in cases):
        for name in names:
            medians[label, name] = callgrind.start_and_per_call(table[label, name, 0], table[label, name, args.calls],
                                                                args.calls)
        raw = medians[label, "raw"]
        for name in names:
            start, per, values = medians[label, name]
            print(f"{name:<18}{label:<18}{start / 1e6:>10.1f}M{start / raw[0]:>7.2f}x"
                  f"{per / 1e3:>10.1f}k{per / raw[1]:>7.2f}x{callgrind.spread(values):>14}")
    if args.baseline:
        callgrind.print_baseline_ratios(medians, dict.fromkeys(case[0] for case in cases), "call")
    print(f"(load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
