#!/usr/bin/env bash
# Installs the Debian packages coplay needs, only those that are missing (idempotent).
#   scripts/install-deps.sh            build + test dependencies
#   scripts/install-deps.sh --bench    also the Syncplay baseline used by `coplay bench`
set -euo pipefail

packages=(
  pkg-config
  libavformat-dev libavcodec-dev libavutil-dev   # MediaProbe (CFFmpeg)
  ffmpeg                                         # ffprobe is MediaProbe's reference; ffmpeg makes samples/
  chrony                                         # a real NTP client/server for ClockSync's interop tests
  iproute2 util-linux procps                     # network/time namespaces (unshare), setpriv for multi-node tests
  openssl                                        # the relay TLS tests make a certificate
  mpv                                            # --player mpv: the real player coplay drives (tests, bench)
  xvfb xauth                                     # a virtual X display: the windowed mpv test
  pulseaudio pulseaudio-utils                    # a real audio server (null sink): mpv --ao=pulse in tests and bench
  prometheus                                     # promtool check metrics and a real Prometheus scraping the relay
  postgresql                                     # PostgreSQL 15: the relay fleet's store (tests run a private server)
)
# The web client's tests run under Node's built-in runner (Node 20 is on the machine image; Debian's otherwise).
command -v node >/dev/null || packages+=(nodejs)
# Headless Chromium for the page's real-browser tests and `coplay bench --scenario browser`, driven by
# Playwright for Python (pip, below) through scripts/browser-driver.py.
packages+=(chromium)
command -v python3 >/dev/null || packages+=(python3)
command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1 || packages+=(python3-pip)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(syncplay-server syncplay)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Playwright for Python drives the system Chromium (executable_path); `playwright install` is never run:
# it would download browsers of its own.
if ! python3 -c 'import playwright.sync_api' 2>/dev/null; then
  echo "install-deps: installing Playwright for Python (pip)" >&2
  pip=(python3 -m pip install --quiet --disable-pip-version-check playwright)
  # Debian's own python3 refuses pip installs into it (PEP 668) unless told.
  "${pip[@]}" >/dev/null 2>&1 || "${pip[@]}" --break-system-packages >&2
fi

# chronyd is installed as a service on Debian; coplay's tests start their own instances on other ports.
command -v swift >/dev/null || { echo "install-deps: Swift toolchain not found on PATH" >&2; exit 1; }
