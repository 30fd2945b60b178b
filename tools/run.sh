#!/usr/bin/env bash
# The main job. Installs what is missing, builds, then checks every op's gradient against central
# differences (`agf gradcheck --all`). Once the trainer lands this trains AGF on the bundled corpus.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh"
"${AGF_BUILD_DIR:-$root/build}/agf" gradcheck --all
