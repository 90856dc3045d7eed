"""Which minimcp tree a benchmark measures: its git commit, and a copy of its package to import.

Shared by ``stdio.py``, ``http.py`` and the ``instructions*.py`` for ``--minimcp-from`` and ``--baseline``.
"""

import os
import shutil
import subprocess


def git_commit(root):
    """``root``'s commit, "+ changes" if its minimcp/ differs from it; "" outside git."""
    def git(*args):
        out = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else None
    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return ""
    return f", git {commit}" + (" + uncommitted changes" if git("status", "--porcelain", "--", "minimcp") else "")


def copy_package(root, workdir, name):
    """Copy ``root``'s minimcp package (no ``__pycache__``) to ``workdir/name``; return that directory.

    The baseline is imported from this copy, so running it writes no .pyc files into ``root``
    (a checkout that is not ours to touch); the first, untimed, start compiles the copy.
    """
    target = os.path.join(workdir, name)
    shutil.copytree(os.path.join(root, "minimcp"), os.path.join(target, "minimcp"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return target
