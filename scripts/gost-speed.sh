#!/usr/bin/env bash
# Compares internal/gost with OpenSSL's GOST engine/provider on this machine,
# in one run so both see the same load: Streebog-256 throughput and
# GOST R 34.10-2012 (256-bit, tc26 paramSetA) sign/verify rate. Prints our
# figure, OpenSSL's, and ours/OpenSSL (above 1 means we are faster).
#
# OpenSSL has no `speed` entry for GOST signatures, so its sign/verify rate is
# measured with `openssl cms` on a SignedData of SIGNERS signer infos minus a
# one-signer run, which removes process start and engine loading.
#
# Needs: go, openssl, libengine-gost-openssl (apt-get install -y libengine-gost-openssl).
# Environment: BENCHTIME (go -benchtime, default 2s), SIGNERS (signatures per openssl run, default 200).
set -euo pipefail

cd "$(dirname "$0")/.."
BENCHTIME=${BENCHTIME:-2s}
SIGNERS=${SIGNERS:-200}
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
openssl req -engine gost -new -x509 -key "$work/k.pem" -subj /CN=speed -days 2 -md_gost12_256 -out "$work/c.pem" 2>/dev/null
printf 'amount=100.00\ndate=2026-01-15' >"$work/msg"

# One CMS with N SignerInfos makes one process do N signatures (and later N
# verifications); the difference to a one-signer run is N-1 operations.
cms_sign() { # $1 = signer count, $2 = output; prints elapsed ns
	local args=() i t0 t1
	for ((i = 0; i < $1; i++)); do args+=(-signer "$work/c.pem" -inkey "$work/k.pem"); done
	t0=$(date +%s%N)
	openssl cms -engine gost -sign -binary -noattr -nosmimecap -nocerts -md md_gost12_256 \
		-in "$work/msg" "${args[@]}" -outform DER -out "$2" 2>/dev/null
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
cms_verify() { # $1 = input; prints elapsed ns
	local t0 t1
	t0=$(date +%s%N)
	openssl cms -engine gost -verify -binary -inform DER -in "$1" -content "$work/msg" -certfile "$work/c.pem" \
		-CAfile "$work/c.pem" -purpose any -out /dev/null 2>/dev/null
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b ? a : b) }'; }
sign1=$(min "$(cms_sign 1 "$work/one.p7s")" "$(cms_sign 1 "$work/one.p7s")")
signN=$(min "$(cms_sign "$SIGNERS" "$work/many.p7s")" "$(cms_sign "$SIGNERS" "$work/many.p7s")")
verify1=$(min "$(cms_verify "$work/one.p7s")" "$(cms_verify "$work/one.p7s")")
verifyN=$(min "$(cms_verify "$work/many.p7s")" "$(cms_verify "$work/many.p7s")")
per_op() { awk -v n="$1" -v one="$2" -v k="$SIGNERS" 'BEGIN { printf "%.0f", (n - one) / (k - 1) }'; }
ossl_sign_ns=$(per_op "$signN" "$sign1")
ossl_verify_ns=$(per_op "$verifyN" "$verify1")
echo "openssl verify-256: $ossl_verify_ns ns/op, sign-256: $ossl_sign_ns ns/op (CMS with $SIGNERS signers vs 1)"

echo
echo "== ours / openssl"
awk -v o="$ours_mbs" -v s="$ossl_mbs" 'BEGIN { printf "Streebog-256   %10.2f MB/s   vs %10.2f MB/s    ratio %.2f\n", o, s, o / s }'
awk -v o="$ours_verify_ns" -v s="$ossl_verify_ns" 'BEGIN { printf "Verify-256     %10.0f ns/op  vs %10.0f ns/op   ratio %.2f\n", o, s, s / o }'
awk -v o="$ours_sign_ns" -v s="$ossl_sign_ns" 'BEGIN { printf "Sign-256       %10.0f ns/op  vs %10.0f ns/op   ratio %.2f\n", o, s, s / o }'
