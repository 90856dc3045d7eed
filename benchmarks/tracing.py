"""What tracing costs a stdio server per call, in instructions: off, on with the API alone, on with the SDK.

Run by hand (it is not a test; it needs valgrind, and opentelemetry-api and opentelemetry-sdk
installed for this interpreter)::

    python benchmarks/tracing.py            # about 3 minutes
    python benchmarks/tracing.py --calls 500 --repeat 1

The same echo server as ``instructions.py``'s (``stdio_parts/minimcp_server.py``) is counted
under valgrind's callgrind, the same way (``instructions.count()``: the same messages, stdin a
pipe closed once every answer is in), in three set-ups:

- **off**: ``Server("bench-echo")``, as ``instructions.py`` counts it;
- **on, API only**: ``Server(..., middleware=[tracing()])`` with ``opentelemetry-api`` and no
  SDK: what a server pays that turns tracing on but records nothing (the official SDK's
  default: its middleware is always there);
- **on, SDK**: the same, with the OpenTelemetry SDK's ``TracerProvider`` and a
  ``BatchSpanProcessor`` whose exporter drops the spans: every span made, sampled, ended
  and queued; what an exporter then does with them (OTLP: protobuf and a POST) is the
  exporter's cost, not counted.

Each runs from a ``venv --without-pip`` holding this tree's minimcp and the OpenTelemetry
distributions (with their metadata: the API finds its context implementation through an entry
point), copied from this interpreter. Printed: start-up and per-call instructions, each the
median of ``--repeat`` runs with its spread, and the per-call difference from off.
"""

import argparse
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile

import callgrind
from instructions import measure_all
from trees import git_commit

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ECHO = os.path.join(HERE, "stdio_parts", "minimcp_server.py")

#: The distributions a traced server loads (the API, the SDK and what they require).
OTEL = ["opentelemetry-api", "opentelemetry-sdk", "opentelemetry-semantic-conventions", "typing-extensions"]

#: The traced server: the echo server of stdio_parts/minimcp_server.py, with tracing on.
SERVER = """\
\"\"\"The echo server of stdio_parts/minimcp_server.py, traced ({setup}).\"\"\"
{provider}
from minimcp import Server
from minimcp.engine.tracing import tracing

server = Server("bench-echo", middleware=[tracing()])


@server.tool()
def echo(text: str) -> str:
    \"\"\"Return the text.\"\"\"
    return text


server.run()
"""

SDK_PROVIDER = """\
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult


class Dropped(SpanExporter):
    def export(self, spans):
        return SpanExportResult.SUCCESS


provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(Dropped()))
trace.set_tracer_provider(provider)
"""


def add_distributions(python, names):
    """Copy each installed distribution of ``names`` (its files and its metadata) into ``python``'s venv."""
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    for name in names:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            sys.exit(f"{name} is not installed for {sys.executable}: pip install opentelemetry-sdk")
        for file in dist.files or ():
            if "__pycache__" in file.parts or file.parts[0] == ".." or file.name == "RECORD":
                continue
            target = os.path.join(site, *file.parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy(dist.locate_file(file), target)
    subprocess.run([python, "-m", "compileall", "-q", site], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="pipelined calls for the per-call figure "
                                                                "(default 2000)")
    callgrind.add_run_options(parser, jobs=False)
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed (apt-get install valgrind)")

    print(f"instruction counts (valgrind callgrind) of the stdio echo server, tracing off and on: median of "
          f"{args.repeat} runs, {args.calls} pipelined calls; CPython {sys.version.split()[0]}")
    print(f"  minimcp: {REPO}{git_commit(REPO)}; opentelemetry-api "
          f"{importlib.metadata.version('opentelemetry-api')}, sdk {importlib.metadata.version('opentelemetry-sdk')}")
    workdir = tempfile.mkdtemp(prefix="minimcp-tracing-")
    try:
        plain = callgrind.make_venv(workdir, "off", REPO)
        traced = callgrind.make_venv(workdir, "on", REPO)
        add_distributions(traced, OTEL)
        scripts = {}
        for name, setup, provider in (("api", "the API alone, no SDK", ""),
                                      ("sdk", "the SDK, spans dropped by the exporter", SDK_PROVIDER)):
            scripts[name] = os.path.join(workdir, f"traced_{name}.py")
            with open(scripts[name], "w", encoding="utf-8") as f:
                f.write(SERVER.format(setup=setup, provider=provider))
        servers = [("off", [plain, ECHO]), ("on, API only", [traced, scripts["api"]]),
                   ("on, SDK", [traced, scripts["sdk"]])]
        results, medians = measure_all(servers, args.calls, args.repeat, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    off = medians["off"]
    print()
    print(f"{'':<14}{'cold start':>12}{'spread':>14}{'per call':>11}{'spread':>14}{'x off':>8}{'+ per call':>12}")
    for name, m in medians.items():
        print(f"{name:<14}{m['cold'] / 1e6:>11.1f}M{callgrind.spread(results[name]['cold']):>14}"
              f"{m['per_call'] / 1e3:>10.1f}k{callgrind.spread(results[name]['per_call']):>14}"
              f"{m['per_call'] / off['per_call']:>7.2f}x{(m['per_call'] - off['per_call']) / 1e3:>+11.1f}k")
    print(f"(load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
