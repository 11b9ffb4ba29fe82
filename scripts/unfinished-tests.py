#!/usr/bin/env python3
"""Names the tests a stopped run had started and not finished.

scripts/test.sh runs each stage under a time budget; when a stage overruns it, this reads the
stage's output and prints what was still running: for `swift test` (Swift Testing), every
`◇ Test NAME started.` without its `✔`/`✘` line; for anything else, the output's last lines.

    scripts/unfinished-tests.py LOG
"""
import re
import sys


def unfinished_swift_tests(lines):
    started, finished = [], set()
    for line in lines:
        line = line.rstrip("\n")
        match = re.match(r"^◇ Test (.*) started\.$", line)
        if match:
            name = match.group(1)
            # A parameterized test's cases start under it and finish with it.
            if not name.startswith("case passing") and name != "run":
                started.append(name)
            continue
        match = re.match(r"^[✔✘] Test (.*?) (passed|failed|recorded|with \d+ test cases?) ", line + " ")
        if match:
            finished.add(match.group(1))
    return [name for name in started if name not in finished]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], errors="replace") as log:
        lines = log.readlines()
    if any(line.startswith("◇ Test ") for line in lines):
        names = unfinished_swift_tests(lines)
        print(f"tests started and not finished ({len(names)}):")
        for name in names:
            print(f"  {name}")
    else:
        print("the last lines of its output:")
        for line in lines[-20:]:
            print(f"  {line.rstrip()}")


if __name__ == "__main__":
    main()
