"""Counting instructions under valgrind's callgrind: what the three ``instructions*.py`` share.

``instructions.py`` (stdio servers), ``instructions_http.py`` (HTTP servers) and
``instructions_client.py`` (clients) differ in what they drive; the rest is here: the
trees to count (``--minimcp-from``, ``--baseline``), a ``venv --without-pip`` per contender,
starting a process under callgrind and reading its count, running the counted runs side by
side, and the start-up / per-call figures with their spread.
"""

import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

BASELINE = "minimcp@baseline"


# -- which trees --------------------------------------------------------------------------------


def add_run_options(parser, jobs=True):
    """``--repeat`` (runs per figure, the median kept) and, with ``jobs``, ``--jobs`` (runs side by side)."""
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, the median kept (default 3)")
    if jobs:
        parser.add_argument("--jobs", type=int, default=2, help="counted runs side by side (default 2)")


def add_tree_options(parser, repo):
    """``--minimcp-from`` (default ``repo``) and ``--baseline``: the trees whose package is counted."""
    parser.add_argument("--minimcp-from", default=repo, metavar="DIR",
                        help="the directory holding the minimcp package to count (default: this work tree)")
    parser.add_argument("--baseline", metavar="DIR",
                        help=f"also count the minimcp package under DIR (an older checkout) as {BASELINE}")


def trees_to_count(parser, args):
    """[(name, root)]: this tree, and the baseline if asked; exits if one has no package or valgrind is missing."""
    trees = [("minimcp", os.path.abspath(args.minimcp_from))]
    if args.baseline:
        trees.append((BASELINE, os.path.abspath(args.baseline)))
    for _, root in trees:
        if not os.path.isfile(os.path.join(root, "minimcp", "__init__.py")):
            parser.error(f"{root}: no minimcp/__init__.py there")
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    return trees


def print_setup(trees, describe, note=""):
    """Each tree (its commit, via ``describe``), the cores and the load: the lines under a report's title."""
    for name, root in trees:
        print(f"  {name}: {root}{describe(root)}{note}")
    print(f"  machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    sys.stdout.flush()


# -- setting up ---------------------------------------------------------------------------------


def make_venv(workdir, name, minimcp_root=None, dependencies=()):
    """A ``venv --without-pip`` of this interpreter, with ``minimcp_root``'s package installed by copy.

    ``dependencies`` are top-level modules this interpreter can import (``requests``, ...),
    copied in the same way, for a part that needs them.
    """
    target = os.path.join(workdir, name)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", target], check=True)
    python = os.path.join(target, "bin", "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    sources = [os.path.join(minimcp_root, "minimcp")] if minimcp_root else []
    for module in dependencies:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.origin:
            sys.exit(f"{module} is not installed for {sys.executable}: pip install {module}")
        sources.append(os.path.dirname(spec.origin) if spec.submodule_search_locations else spec.origin)
    for source in sources:
        copy = os.path.join(site, os.path.basename(source))
        if os.path.isdir(source):
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, copy)
        subprocess.run([python, "-m", "compileall", "-q", copy], check=True)
    return python


# -- counting -----------------------------------------------------------------------------------


def start_counted(command, log, **popen):
    """Start ``command`` under callgrind (its report to ``log``), with no ``PYTHON*`` variables.

    Only this process is counted: a child it starts runs natively (valgrind's default).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                             f"--log-file={log}", *command], stderr=subprocess.DEVNULL, env=env, **popen)


def collected(log, command):
    """The instructions callgrind counted, from its ``log`` (the process has exited)."""
    with open(log) as f:
        text = f.read()
    match = re.search(r"Collected : (\d+)", text)
    if not match:
        sys.exit(f"valgrind gave no count for {' '.join(command)}:\n{text[-2000:]}")
    return int(match.group(1))


def count_side_by_side(tasks, count, jobs):
    """{task: count(task)}, ``jobs`` counted runs at a time (a count does not move with the load)."""
    with ThreadPoolExecutor(jobs) as pool:
        return dict(zip(tasks, pool.map(count, tasks)))


# -- figures ------------------------------------------------------------------------------------


def start_and_per_call(without, with_calls, calls):
    """(start-up, per call, [per call of each run]): the median run with no calls is the start-up
    figure; each run with ``calls`` calls, minus it, over ``calls``, is one per-call figure."""
    start = statistics.median(without)
    per = [(c - start) / calls for c in with_calls]
    return start, statistics.median(per), per


def spread(values):
    """The min-max range around the median, in per cent."""
    middle = statistics.median(values)
    return f"{100 * (min(values) / middle - 1):+.1f}/{100 * (max(values) / middle - 1):+.1f}%"


def print_baseline_ratios(medians, labels, per):
    """For each label, this tree's start-up and per-``per`` figures over the baseline's.

    ``medians[label, name]`` is ``start_and_per_call``'s (start-up, per call, ...) for ``name``."""
    print()
    for label in labels:
        mine, theirs = medians[label, "minimcp"], medians[label, BASELINE]
        print(f"minimcp / {BASELINE} {label}: start-up {mine[0] / theirs[0]:.3f}x, per {per} "
              f"{mine[1] / theirs[1]:.3f}x (instructions: lower is better)")
