#!/usr/bin/env bash
# Compares internal/gost with OpenSSL's GOST engine/provider on this machine,
# in one run so both see the same load: Streebog-256 throughput and
# GOST R 34.10-2012 (256-bit, tc26 paramSetA) sign/verify rate. Prints our
# figure, OpenSSL's, and ours/OpenSSL (above 1 means we are faster).
#
# OpenSSL has no `speed` entry for GOST signatures, so its sign/verify rate is
# measured as a loop of `openssl dgst -sign/-verify` processes minus the same
# loop hashing only, which removes process start and engine loading.
#
# Needs: go, openssl, libengine-gost-openssl (apt-get install -y libengine-gost-openssl).
# Environment: BENCHTIME (go -benchtime, default 2s), LOOPS (openssl loop count, default 100).
set -euo pipefail

cd "$(dirname "$0")/.."
BENCHTIME=${BENCHTIME:-2s}
LOOPS=${LOOPS:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! openssl engine gost >/dev/null 2>&1; then
	echo "gost-speed: the OpenSSL GOST engine is missing; run: apt-get install -y libengine-gost-openssl" >&2
	exit 1
fi

echo "== go test -bench (internal/gost)"
go test ./internal/gost/ -run '^$' -bench '^Benchmark(Streebog256|Verify256|Sign256)$' -benchtime "$BENCHTIME" | tee "$work/go.txt"
ours_mbs=$(awk '/^BenchmarkStreebog256/ { for (i = 1; i <= NF; i++) if ($i == "MB/s") print $(i-1) }' "$work/go.txt")
ours_verify_ns=$(awk '/^BenchmarkVerify256/ { print $3 }' "$work/go.txt")
ours_sign_ns=$(awk '/^BenchmarkSign256/ { print $3 }' "$work/go.txt")

echo
echo "== openssl (GOST engine / gostprov provider)"
# Streebog: `openssl speed` through the provider; fall back to hashing a
# 64 MiB file with the engine when the provider is not installed.
ossl_mbs=""
if speed=$(openssl speed -provider gostprov -provider default -seconds 2 -bytes 65536 -evp md_gost12_256 2>/dev/null); then
	# speed prints thousands of bytes per second, e.g. "94976.00k".
	ossl_mbs=$(echo "$speed" | awk '/^md_gost12_256/ { v = $2; sub(/k$/, "", v); printf "%.2f", v / 1000 }')
fi
if [ -z "$ossl_mbs" ]; then
	head -c $((64 << 20)) /dev/zero >"$work/big"
	t0=$(date +%s%N)
	openssl dgst -engine gost -md_gost12_256 "$work/big" >/dev/null 2>&1
	t1=$(date +%s%N)
	ossl_mbs=$(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", (64 * 1048576) / (ns / 1e9) / 1e6 }')
fi
echo "openssl Streebog-256: $ossl_mbs MB/s"

openssl genpkey -engine gost -algorithm gost2012_256 -pkeyopt paramset:TCA -out "$work/k.pem" 2>/dev/null
openssl pkey -engine gost -in "$work/k.pem" -pubout -out "$work/pub.pem" 2>/dev/null
printf 'amount=100.00\ndate=2026-01-15' >"$work/msg"
openssl dgst -engine gost -md_gost12_256 -sign "$work/k.pem" -out "$work/sig" "$work/msg" 2>/dev/null

loop_ns() { # runs "$@" LOOPS times, prints elapsed nanoseconds
	local t0 t1 i
	t0=$(date +%s%N)
	for ((i = 0; i < LOOPS; i++)); do "$@" >/dev/null 2>&1; done
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
base=$(loop_ns openssl dgst -engine gost -md_gost12_256 "$work/msg")
verify=$(loop_ns openssl dgst -engine gost -md_gost12_256 -verify "$work/pub.pem" -signature "$work/sig" "$work/msg")
sign=$(loop_ns openssl dgst -engine gost -md_gost12_256 -sign "$work/k.pem" -out "$work/sig2" "$work/msg")
per_op() { awk -v a="$1" -v b="$base" -v n="$LOOPS" 'BEGIN { d = (a - b) / n; if (d < 1000) d = 1000; printf "%.0f", d }'; }
ossl_verify_ns=$(per_op "$verify")
ossl_sign_ns=$(per_op "$sign")
echo "openssl verify-256: $ossl_verify_ns ns/op, sign-256: $ossl_sign_ns ns/op ($LOOPS processes each, start-up subtracted)"

echo
echo "== ours / openssl"
awk -v o="$ours_mbs" -v s="$ossl_mbs" 'BEGIN { printf "Streebog-256   %10.2f MB/s   vs %10.2f MB/s    ratio %.2f\n", o, s, o / s }'
awk -v o="$ours_verify_ns" -v s="$ossl_verify_ns" 'BEGIN { printf "Verify-256     %10.0f ns/op  vs %10.0f ns/op   ratio %.2f\n", o, s, s / o }'
awk -v o="$ours_sign_ns" -v s="$ossl_sign_ns" 'BEGIN { printf "Sign-256       %10.0f ns/op  vs %10.0f ns/op   ratio %.2f\n", o, s, s / o }'
