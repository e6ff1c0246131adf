#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/fuzz/gen-corpus.sh - regenerate the seed corpus in tests/fuzz/corpus/
# from the running kernel's proc connector (root needed). The committed
# corpus was made this way; run it again only if the wire format changes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$root/include" -I"$root/src" \
	$(pkg-config --cflags libnl-3.0 libnl-genl-3.0) -o "$tmp/gen-corpus" "$here/gen-corpus.c" \
	"$root"/src/*.c $(pkg-config --libs libnl-3.0 libnl-genl-3.0)
"$tmp/gen-corpus" "$here/corpus"
