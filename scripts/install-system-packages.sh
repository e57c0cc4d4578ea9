#!/usr/bin/env bash
# Install the Debian packages the test suite needs, when they are missing: nginx and wrk (the
# live tests on 127.0.0.1), chromium (the offline report check), pdflatex with booktabs (the
# report's LaTeX tables compiled) and make. Called by the
# Makefile's test target and by .ci/run. With sudo when not root (non-interactive when there
# is no terminal). Where it cannot install (no apt-get, no sudo, no network), it says so and
# exits 0: the tests that need a missing tool are then skipped, each with the same one reason.
set -uo pipefail

need=()
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || need+=(nginx)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v make >/dev/null 2>&1 || need+=(make)
command -v pdflatex >/dev/null 2>&1 && kpsewhich booktabs.sty >/dev/null 2>&1 \
    || need+=(texlive-latex-base texlive-latex-recommended)
[ ${#need[@]} -eq 0 ] && exit 0

skip() {
    echo "install-system-packages: cannot install ${need[*]} ($1);" \
         "the tests that need them will be skipped" >&2
    exit 0
}
command -v apt-get >/dev/null 2>&1 || skip "no apt-get: not Debian/Ubuntu"
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || skip "not root and no sudo"
    if [ -t 0 ]; then SUDO=(sudo); else SUDO=(sudo -n); fi
fi
echo "install-system-packages: installing ${need[*]}"
"${SUDO[@]}" apt-get update -qq || skip "apt-get update failed"
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends \
    "${need[@]}" || skip "apt-get install failed"
