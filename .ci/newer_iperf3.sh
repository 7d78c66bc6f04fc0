#!/usr/bin/env bash
# A newer iperf3 than Debian 12's 3.12, for the archive's import test
# (iperf3 3.13 and later write -J differently: the start to the millisecond,
# more fields). Debian's unstable suite has today's iperf3; it needs a newer
# C library than this Debian's, so its own libc comes too and runs it through
# its own loader. Nothing is installed: everything stays under DEST, and
# DEST/iperf3 runs it. Usage: .ci/newer_iperf3.sh DEST
set -euo pipefail
dest="$1"
mirror="http://deb.debian.org/debian"
mkdir -p "$dest/debs" "$dest/root"
index="$dest/Packages.xz"
curl -fsS -o "$index" "$mirror/dists/sid/main/binary-amd64/Packages.xz"
for package in iperf3 libiperf0 libc6 libsctp1 libssl3t64; do
  file=$(xz -dc "$index" | awk -v p="$package" '
    $0 == "Package: " p { found = 1 }
    found && /^Filename: / && !done { print $2; done = 1 }
    /^$/ { found = 0 }')
  [ -n "$file" ] || { echo "no $package in Debian unstable's index" >&2; exit 1; }
  curl -fsS -o "$dest/debs/$package.deb" "$mirror/$file"
  dpkg-deb -x "$dest/debs/$package.deb" "$dest/root"
done
cat > "$dest/iperf3" <<'SH'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
lib="$here/root/usr/lib/x86_64-linux-gnu"
exec "$here/root/usr/lib64/ld-linux-x86-64.so.2" --library-path "$lib" "$here/root/usr/bin/iperf3" "$@"
SH
chmod +x "$dest/iperf3"
"$dest/iperf3" --version | head -1
