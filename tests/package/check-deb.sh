#!/usr/bin/env bash
# Builds the .deb with CPack from the build tree and checks what it installs.
# Usage: check-deb.sh BUILD_DIR
set -euo pipefail
build=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$out" >"$out/cpack.log" 2>&1 || { cat "$out/cpack.log"; exit 1; }
deb=$(ls "$out"/faultline_*.deb)
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/faultline ./usr/bin/faultline-worker ./usr/share/applications/faultline.desktop \
         ./usr/share/icons/hicolor/scalable/apps/faultline.svg; do
  grep -qxF "$f" <<<"$contents" || { echo "missing $f in $deb"; echo "$contents"; exit 1; }
done
# The capture package, at Debian's python3 path.
for f in ./usr/lib/python3/dist-packages/faultline_capture/__init__.py \
         ./usr/lib/python3/dist-packages/faultline_capture/recorder.py \
         ./usr/lib/python3/dist-packages/faultline_capture/__main__.py; do
  grep -qxF "$f" <<<"$contents" || { echo "missing $f in $deb"; echo "$contents"; exit 1; }
done
if grep -q "__pycache__" <<<"$contents"; then echo "$deb ships __pycache__"; exit 1; fi
depends=$(dpkg-deb -f "$deb" Depends)
for d in libhdf5 libqt6widgets6 libqcustomplot qt6-qpa-plugins libsqlite3-0 libpq5; do
  grep -q "$d" <<<"$depends" || { echo "Depends lacks $d: $depends"; exit 1; }
done

echo "ok: $(basename "$deb"): $(wc -l <<<"$contents") entries; Depends: $depends"
