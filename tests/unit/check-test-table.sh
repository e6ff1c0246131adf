#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-test-table.sh - tests/README.md's table of which tests exercise
# each src/ file stays true: every src/*.c has a row, every row names a
# src/ file that exists and at least one test, and every test it names is
# one of this build's CTest tests.
# Usage: check-test-table.sh SOURCE_DIR BUILD_DIR   Exit: 0 true, 1 not.
set -euo pipefail
src=$1
build=$2
readme=$src/tests/README.md
fail=0
not_ok() {
	echo "not ok - $*"
	fail=1
}

# The table's rows: | `src/FILE.c` | `test`, `test` |
rows=$(grep -E '^\| `src/[^`]+\.c` \|' "$readme" || [ $? = 1 ])
[ -n "$rows" ] || {
	echo "FAIL: no src-to-test table in $readme"
	exit 1
}
tests=$(cd "$build" && ctest -N) || {
	echo "FAIL: ctest -N in $build exited $?"
	exit 1
}
tests=$(sed -n 's/^ *Test *#[0-9]*: //p' <<<"$tests")

for f in "$src"/src/*.c; do
	f=src/${f##*/}
	grep -qF "| \`$f\` |" <<<"$rows" || not_ok "$f has no row in tests/README.md's table"
done
while IFS= read -r row; do
	f=$(sed -E 's/^\| `([^`]+)`.*/\1/' <<<"$row")
	[ -f "$src/$f" ] || not_ok "the table's $f does not exist"
	named=$(cut -d'|' -f3 <<<"$row" | grep -oE '`[^`]+`' | tr -d '`' || [ $? = 1 ])
	[ -n "$named" ] || not_ok "$f: no test named"
	for t in $named; do
		grep -qxF "$t" <<<"$tests" || not_ok "$f: $t is not a test of this build"
	done
done <<<"$rows"
[ $fail = 0 ] && echo "ok - tests/README.md: $(wc -l <<<"$rows") src files, each with its tests"
exit $fail
