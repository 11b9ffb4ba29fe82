#!/usr/bin/env python3
"""Counts the public declarations of coplay's library modules from their symbol graphs.

    swift package dump-symbol-graph --skip-synthesized-members --minimum-access-level public
    scripts/public-declarations.py .build/x86_64-unknown-linux-gnu/symbolgraph

A declaration is a public or open symbol in `<Module>.symbols.json` or `<Module>@<Other>.symbols.json`
(extensions of other modules' types), synthesized members (inherited defaults) left out.
"""
import glob
import json
import sys

MODULES = ["ClockSync", "MediaProbe", "GroupSessions", "SessionRelay", "PlaybackCoordinator", "MPVControl",
           "NetworkEmulation", "SyncBench", "BenchmarkSupport", "SessionRelayPostgres"]


def count(directory, module):
    total = 0
    for path in glob.glob(f"{directory}/{module}.symbols.json") + glob.glob(f"{directory}/{module}@*.symbols.json"):
        with open(path) as file:
            graph = json.load(file)
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") in ("public", "open") and "::SYNTHESIZED::" not in symbol["identifier"]["precise"]:
                total += 1
    return total


directory = sys.argv[1] if len(sys.argv) > 1 else ".build/x86_64-unknown-linux-gnu/symbolgraph"
grand = 0
for module in MODULES:
    if not glob.glob(f"{directory}/{module}.symbols.json"):
        continue
    n = count(directory, module)
    grand += n
    print(f"{module:22s} {n:5d}")
print(f"{'total':22s} {grand:5d}")
