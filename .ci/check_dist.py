"""Check what `python -m build` made: the wheel holds the package and nothing else, the sdist enough to test.

    python .ci/check_dist.py dist/

The wheel: every file is under ``minimcp/`` (Python modules and ``py.typed``) or is
one of the ``*.dist-info/`` metadata files; ``minimcp/py.typed`` is there, and so is
every module of the source tree. The sdist: the files `pip install '.[test]'` and
`python -m pytest` need (tests/conftest.py, tests/servers/, examples/ ..., setup.cfg: pytest's
settings), and the LICENSE. Exits 1 with the list of what is wrong.
"""

import glob
import os
import sys
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METADATA = {"METADATA", "WHEEL", "RECORD", "entry_points.txt", "top_level.txt", "licenses/LICENSE"}
SDIST_NEEDS = ["LICENSE", "README.md", "CHANGELOG.md", "ARCHITECTURE.md", "pyproject.toml", "setup.cfg",
               "minimcp/py.typed", "tests/conftest.py", "tests/servers/testing_server.py", "tests/fuzz/strategies.py",
               "examples/quickstart.py", "examples/weather_server.py", "examples/conformance/server.py",
               "examples/conformance/client.py"]


def source_modules():
    """Every file of the package as it is in the repository, as wheel paths."""
    found = set()
    for folder, dirs, files in os.walk(os.path.join(ROOT, "minimcp")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py") or name == "py.typed":
                found.add(os.path.relpath(os.path.join(folder, name), ROOT).replace(os.sep, "/"))
    return found


def check_wheel(path):
    problems = []
    names = set(zipfile.ZipFile(path).namelist())
    info = [n for n in names if n.split("/", 1)[0].endswith(".dist-info")]
    package = names - set(info)
    for name in sorted(package):
        if not (name.startswith("minimcp/") and (name.endswith(".py") or name == "minimcp/py.typed")):
            problems.append(f"wheel: unexpected file {name}")
    for name in sorted(info):
        if name.split("/", 1)[1] not in METADATA:
            problems.append(f"wheel: unexpected metadata file {name}")
    for name in sorted(source_modules() - package):
        problems.append(f"wheel: missing {name}")
    if "minimcp/py.typed" not in package:
        problems.append("wheel: missing minimcp/py.typed (PEP 561)")
    return problems


def check_sdist(path):
    with tarfile.open(path) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    return [f"sdist: missing {name}" for name in SDIST_NEEDS if name not in names]


def main(dist):
    wheels, sdists = glob.glob(os.path.join(dist, "*.whl")), glob.glob(os.path.join(dist, "*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        print(f"check_dist: expected one wheel and one sdist in {dist}, found {wheels + sdists}", file=sys.stderr)
        return 1
    problems = check_wheel(wheels[0]) + check_sdist(sdists[0])
    for problem in problems:
        print(f"check_dist: {problem}", file=sys.stderr)
    if not problems:
        print(f"check_dist: {os.path.basename(wheels[0])} holds minimcp/** and py.typed only; "
              f"{os.path.basename(sdists[0])} holds the tests and examples")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "dist"))
