#!/usr/bin/env bash
# Generates the sample media in samples/ (filled in by the MediaProbe work).
set -euo pipefail
