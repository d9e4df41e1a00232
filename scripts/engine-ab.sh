#!/usr/bin/env bash
# engine-ab.sh compares two partnerapi binaries on `bench engine`, run
# alternately (old, new, old, new, …) so that both see the same machine: the
# host's memory bandwidth and its other load drift over minutes, and two
# runs a quarter of an hour apart can differ by 30 %. It prints, per case,
# the median decode and prefill tok/s of each binary over the rounds and
# new ÷ old.
#
#   scripts/engine-ab.sh OLD_BINARY NEW_BINARY ROUNDS [bench engine flags…]
#   scripts/engine-ab.sh /tmp/pa-main /tmp/pa-branch 4 --shape 135m --quant q4_0 --streams 1,10
#
# Either side may be a binary preceded by VAR=VALUE words, which compares two
# settings of one binary (cleaner than two builds when a setting is what
# changed: both sides then run the same code layout):
#
#   scripts/engine-ab.sh "PARTNERAPI_KV_PREFETCH=l1 /tmp/pa" "PARTNERAPI_KV_PREFETCH=l2 /tmp/pa" 8 --shape 15m
#
# (the words are split on spaces, so such a binary's path has none).
#
# Needs python3 (for the medians). Each round runs each binary once with
# --json and the given flags, the order alternating between rounds. It also
# prints each side's per-round decode tok/s, so that a bandwidth mode
# change (this host's single-stream figures move by a third with it) shows.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 OLD_BINARY NEW_BINARY ROUNDS [bench engine flags...]" >&2
  exit 2
fi
old=$1 new=$2 rounds=$3
shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  # Odd rounds run the old binary first, even rounds the new one, so that
  # neither always meets what the other left behind (a warm or a cold
  # cache, a bandwidth mode that changes within a round).
  order="old new"
  [ $((r % 2)) -eq 0 ] && order="new old"
  for side in $order; do
    cmd=$old
    [ "$side" = new ] && cmd=$new
    read -ra words <<<"$cmd"
    env "${words[@]}" bench engine --json "$@" 2>/dev/null | sed "s/^/$side /" >>"$out/runs"
  done
  echo "round $r of $rounds done" >&2
done
python3 - "$out/runs" <<'EOF'
import json, statistics, sys
cases = {}
for line in open(sys.argv[1]):
    side, _, js = line.partition(" ")
    c = json.loads(js)
    key = (c["shape"], c["quant"], c["streams"])
    cases.setdefault(key, {"old": [], "new": []})[side].append(c)
print("%-6s %-5s %7s  %12s %12s %7s  %12s %12s %7s" % ("shape", "quant", "streams",
      "decode old", "decode new", "new÷old", "prefill old", "prefill new", "new÷old"))
for key in sorted(cases, key=lambda k: (k[0], k[1], k[2])):
    s = cases[key]
    if not s["old"] or not s["new"]:
        continue
    med = lambda side, f: statistics.median(c[f] for c in s[side])
    do, dn = med("old", "decode_tok_s"), med("new", "decode_tok_s")
    po, pn = med("old", "prefill_tok_s"), med("new", "prefill_tok_s")
    print("%-6s %-5s %7d  %12.1f %12.1f %7.2f  %12.1f %12.1f %7.2f" % (key + (do, dn, dn / do, po, pn, pn / po)))
print("decode tok/s per round, old | new:")
for key in sorted(cases, key=lambda k: (k[0], k[1], k[2])):
    s = cases[key]
    fmt = lambda side: " ".join("%.1f" % c["decode_tok_s"] for c in s[side])
    print("%-6s %-5s %7d  %s | %s" % (key + (fmt("old"), fmt("new"))))
EOF
