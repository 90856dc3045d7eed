#!/usr/bin/env python3
"""One row per scenario of a conformance results folder, from the checks.json the suite wrote.

    python3 .ci/conformance/summarize.py RESULTS_DIR

A scenario is PASS with at least one SUCCESS check and no FAILURE (the suite's own rule),
FAIL with any FAILURE; with neither, WARN (WARNING checks only) or SKIP (nothing checked),
which count as neither. The table counts every failure, expected or not: the verdict on
--expected-failures is the suite's exit code, not this script's. Also writes summary.tsv
into RESULTS_DIR. Exits 1 when a scenario failed or there was none.
"""
import json
import re
import sys
from pathlib import Path


def scenario(results: Path, checks_json: Path) -> str:
    """The scenario's name, from its folder: server-<name>-<UTC time>Z, or client-..."""
    name = checks_json.parent.relative_to(results).as_posix()
    name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", name)
    return re.sub(r"^(server|client)-", "", name)


def main(results: Path) -> int:
    rows = []
    for checks_json in sorted(results.rglob("checks.json")):
        try:
            checks = json.loads(checks_json.read_text())
        except ValueError:  # a run cut short: count it as failed, never as passed
            checks = [{"status": "FAILURE", "id": "unreadable-checks-json"}]
        statuses = [check.get("status") for check in checks]
        passed, failed, warned = (statuses.count(s) for s in ("SUCCESS", "FAILURE", "WARNING"))
        verdict = "FAIL" if failed else "PASS" if passed else "WARN" if warned else "SKIP"
        failed_ids = ",".join(sorted({c.get("id", "?") for c in checks if c.get("status") == "FAILURE"}))
        rows.append((scenario(results, checks_json), passed, failed, warned, verdict, failed_ids))

    width = max([len(row[0]) for row in rows] + [8])
    print(f"{'scenario':<{width}}  pass  fail  warn  result")
    for name, passed, failed, warned, verdict, failed_ids in rows:
        print(f"{name:<{width}}  {passed:>4}  {failed:>4}  {warned:>4}  {verdict}"
              + (f"  [{failed_ids}]" if failed_ids else ""))
    with open(results / "summary.tsv", "w") as tsv:
        tsv.write("scenario\tpassed_checks\tfailed_checks\twarnings\tresult\tfailed_check_ids\n")
        tsv.writelines("\t".join(map(str, row)) + "\n" for row in rows)

    verdicts = [row[4] for row in rows]
    unscored = verdicts.count("WARN") + verdicts.count("SKIP")
    if unscored:
        print(f"({unscored} not scored: WARN/SKIP = no passing and no failing checks)")
    print(f"{verdicts.count('PASS')} passed, {verdicts.count('FAIL')} failed")
    return 1 if "FAIL" in verdicts or not rows else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
