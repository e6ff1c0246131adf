#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/fuzz/run-fuzz.sh - build libcn's libFuzzer targets with clang
# (-fsanitize=fuzzer,address,undefined) in their own build directory and run
# each for a bounded time on a copy of its seed corpus.
#
#   tests/fuzz/run-fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
#   SECONDS_PER_TARGET  default 30 (what CI uses); run longer on request,
#                       e.g. tests/fuzz/run-fuzz.sh 600
#   TARGET              fuzz_parse fuzz_proc fuzz_notify fuzz_recv fuzz_kmod_reply
#                       (default: all)
#
# Environment: CC (default clang), FUZZ_BUILD (default /tmp/libcn-fuzz),
# FUZZ_JOBS (parallel fuzzing jobs per target, default 1).
# New inputs found are kept in $FUZZ_BUILD/corpus/<target>; crashes go to
# $FUZZ_BUILD/artifacts/ and make the script fail. fuzz_recv needs a
# NETLINK_CONNECTOR socket (any Linux with CONFIG_CONNECTOR); it is skipped
# when the socket cannot be opened.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_parse fuzz_proc fuzz_notify fuzz_recv fuzz_kmod_reply)
cc=${CC:-clang}
out=${FUZZ_BUILD:-/tmp/libcn-fuzz}
jobs=${FUZZ_JOBS:-1}

mkdir -p "$out/bin" "$out/corpus" "$out/artifacts"
nl_cflags=$(pkg-config --cflags libnl-3.0 libnl-genl-3.0)
nl_libs=$(pkg-config --libs libnl-3.0 libnl-genl-3.0)
flags=(-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-fno-omit-frame-pointer -D_GNU_SOURCE -Wall -Wextra -Werror -I"$root/include" -I"$root/src")
wrap=-Wl,--wrap=recvmsg,--wrap=recvmmsg,--wrap=recvfrom,--wrap=sendmsg,--wrap=sendmmsg,--wrap=send,--wrap=poll,--wrap=clock_gettime

fail=0
for t in "${targets[@]}"; do
	src=$here/$t.c
	[ -f "$src" ] || {
		echo "run-fuzz: no target $t" >&2
		exit 2
	}
	extra=()
	[ "$t" = fuzz_recv ] && extra=("$wrap")
	# The library is compiled into each target with the fuzzer flags.
	# shellcheck disable=SC2086
	$cc "${flags[@]}" $nl_cflags -o "$out/bin/$t" "$src" "$root"/src/*.c "${extra[@]}" $nl_libs

	corpus=$out/corpus/$t
	mkdir -p "$corpus"
	[ -d "$here/corpus/$t" ] && cp -n "$here/corpus/$t"/* "$corpus"/ 2>/dev/null || true
	echo "run-fuzz: $t for ${secs}s" >&2
	set +e
	par=()
	[ "$jobs" -gt 1 ] && par=(-jobs="$jobs" -workers="$jobs")
	# From $out: with -jobs, libFuzzer writes fuzz-N.log into the current directory.
	(cd "$out" && "$out/bin/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		"${par[@]}" -print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" \
		"$corpus" >"$out/$t.log" 2>&1)
	rc=$?
	set -e
	if [ "$t" = fuzz_recv ] && grep -q "fuzz_recv: cn_open" "$out/$t.log"; then
		echo "run-fuzz: $t skipped (no NETLINK_CONNECTOR socket)" >&2
		# In CI everything must really run: a skip there is a failure.
		[ "${CI:-}" = true ] && fail=1
		continue
	fi
	grep -E "^(stat::number_of_executed_units|stat::new_units_added|#[0-9]+ *DONE)" \
		"$out/$t.log" >&2 || true
	if [ $rc -ne 0 ]; then
		echo "run-fuzz: $t FAILED (rc $rc), see $out/$t.log" >&2
		tail -n 40 "$out/$t.log" >&2
		fail=1
	fi
done
exit $fail
