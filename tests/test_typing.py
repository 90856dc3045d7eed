"""The typed user program (tests/typing/) runs: what `mypy --strict` checks in .ci/run also works."""

import os
import subprocess

from conftest import PY, ROOT


def test_typed_user_program_serves_and_reads_every_result_type():
    # Decorated tools, resources, prompts and a completer, called through connect("memory"):
    # the decorators returned each function unchanged, and the results hold what their types say.
    out = subprocess.run([PY, os.path.join(ROOT, "tests", "typing", "user_program.py")], capture_output=True,
                         text=True, encoding="utf-8", timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "ok\n"
