#!/usr/bin/env bash
# fuzz-all.sh runs every fuzz target in the module for a while each and
# lists the ones that failed. `go test` in CI runs only the seed corpora
# (the f.Add values and testdata/fuzz), so a target whose property drifts
# from the code it holds (a decoder made stricter, an oracle left as it was)
# stays green there until a campaign like this one mutates past the seeds.
#
# Usage: scripts/fuzz-all.sh [seconds per target] [package pattern]
#   scripts/fuzz-all.sh 10              every target, 10 s each
#   scripts/fuzz-all.sh 30 internal/banking   only targets under that path
#
# A failing input is written by `go test` to the package's testdata/fuzz,
# where it stays as a regression case once the fault (or the oracle) is
# fixed. The exit status is the number of failed targets (at most 255).
set -u
secs=${1:-10}
only=${2:-}
cd "$(dirname "$0")/.."

failed=()
while IFS= read -r line; do
	file=${line%%:*}
	name=${line#*func }
	name=${name%%(*}
	pkg=./$(dirname "$file")
	if [[ -n $only && $pkg != ./$only* ]]; then
		continue
	fi
	printf '%-45s %-32s ' "$pkg" "$name"
	if out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "${secs}s" -parallel 2 "$pkg" 2>&1); then
		echo ok
	else
		echo FAIL
		printf '%s\n' "$out" | grep -E -- '--- FAIL|_test.go:|Failing input|testdata/fuzz' | sed 's/^/    /'
		failed+=("$pkg $name")
	fi
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' . | sed 's#^\./##' | sort)

echo
if ((${#failed[@]} == 0)); then
	echo "every fuzz target held for ${secs}s"
	exit 0
fi
echo "${#failed[@]} target(s) failed:"
printf '  %s\n' "${failed[@]}"
exit $((${#failed[@]} > 255 ? 255 : ${#failed[@]}))
