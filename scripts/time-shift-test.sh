#!/usr/bin/env bash
# time-shift-test.sh runs tests as if the wall clock read a later day, to
# find "time bombs": tests that pass today but fail on a later day because
# they mix a fixed date with the real clock (a payment dated a fixed day
# that the ten-day validity refuses later, a certificate or token lifetime
# running out, a year boundary, a month's length).
#
#   scripts/time-shift-test.sh SHIFT [go test arguments…]
#   scripts/time-shift-test.sh 480h ./internal/banking/...
#   scripts/time-shift-test.sh 9600h -count=1 -run TestPayments ./cmd/partnerapi
#
# It copies the Go installation that `go env GOROOT` names to a directory
# beside the temporary files (once per Go version; PARTNERAPI_SHIFT_GOROOT
# names another), patches its time.Now to add the duration of the
# environment variable PARTNERAPI_TIME_SHIFT to the wall reading it returns,
# and runs `go test` with that installation, its own build cache and the
# shift. The monotonic reading is left alone, so timers, time.Since and
# timeouts behave as usual. SHIFT is a Go duration (days are 24h: 480h is
# +20 days, 1080h +45, 9600h +400); 0 is the control run.
#
# It is a tool for a person, not part of CI. What it does not shift: the
# kernel's clock as other processes read it, so PostgreSQL's now(), an
# OpenSSL child process, SQLite's own datetime('now') (the stores take their
# times from Go) and file modification times keep the real date; a test
# comparing those with Go's shifted time fails only because of the shift.
# On 2026-11-30 those were, at every shift tried (+20, +45, +400 days), the
# tests where Go makes a certificate valid from the shifted now and OpenSSL
# or node, on the real clock, find it not yet valid: gost's
# TestOpenSSLVerifiesOurs and TestCertificateRequestOpenSSLOracle,
# cmd/partnerapi's TestNpmClientLegacyTLS, and, from +30 days, when
# OpenSSL's 30-day certificate has run out on the shifted clock, banking's
# TestVerifyOpenSSLCMSWithoutCertificate.
# Test results are never cached (-count=1 is added), since the cache does
# not see the variable.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 SHIFT [go test arguments...]" >&2
  exit 2
fi
shift_by=$1
shift

src=$(go env GOROOT)
ver=$(go env GOVERSION)
tmp=${TMPDIR:-/tmp}
dst=${PARTNERAPI_SHIFT_GOROOT:-$tmp/partnerapi-goroot-shift-$ver}

if [ ! -f "$dst/src/time/partnerapi_shift.go" ]; then
  rm -rf "$dst.new"
  cp -a "$src" "$dst.new"
  chmod -R u+w "$dst.new"
  # The added file holds the shift, read once when package time starts
  # (package time may import syscall, not os).
  cat > "$dst.new/src/time/partnerapi_shift.go" <<'EOF'
package time

import "syscall"

// partnerapiShift is PARTNERAPI_TIME_SHIFT in nanoseconds (0 when unset),
// added to the wall reading of Now by scripts/time-shift-test.sh's patch.
var partnerapiShift = func() int64 {
	v, ok := syscall.Getenv("PARTNERAPI_TIME_SHIFT")
	if !ok || v == "" {
		return 0
	}
	d, err := ParseDuration(v)
	if err != nil {
		panic("time: PARTNERAPI_TIME_SHIFT is no duration: " + v)
	}
	return int64(d)
}()

// partnerapiShifted moves the wall reading sec, nsec by the shift.
func partnerapiShifted(sec int64, nsec int32) (int64, int32) {
	if partnerapiShift == 0 {
		return sec, nsec
	}
	total := int64(nsec) + partnerapiShift%1e9
	sec += partnerapiShift / 1e9
	if total >= 1e9 {
		total -= 1e9
		sec++
	} else if total < 0 {
		total += 1e9
		sec--
	}
	return sec, int32(total)
}
EOF
  # Only Now's own first line changes; runtimeNow's other callers (the
  # local zone's lookup) keep the real time.
  sed -i '/^func Now() Time {$/,/^}$/ s/^\tsec, nsec, mono := runtimeNow()$/&\n\tsec, nsec = partnerapiShifted(sec, nsec)/' \
    "$dst.new/src/time/time.go"
  if ! grep -q 'sec, nsec = partnerapiShifted(sec, nsec)' "$dst.new/src/time/time.go"; then
    echo "$0: time.Now of $ver does not have the expected shape; patch it by hand" >&2
    rm -rf "$dst.new"
    exit 1
  fi
  # The copy is made aside and moved in whole, so one cut short is made
  # again on the next run.
  rm -rf "$dst"
  mv "$dst.new" "$dst"
fi

export GOROOT=$dst
export PATH=$dst/bin:$PATH
export GOTOOLCHAIN=local
export GOCACHE=${PARTNERAPI_SHIFT_GOCACHE:-$tmp/partnerapi-gocache-shift}
export PARTNERAPI_TIME_SHIFT=$shift_by
echo "time-shift-test: PARTNERAPI_TIME_SHIFT=$shift_by, GOROOT=$dst" >&2
exec go test -count=1 "$@"
