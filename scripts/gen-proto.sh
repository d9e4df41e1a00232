#!/usr/bin/env bash
# Regenerates internal/assistant/gigachatpb from proto/gigachat/v1. The
# generated code is committed so builds need no protoc; CI runs this script
# and fails when the result differs from what is committed.
# Plugins are pinned: protoc-gen-go to the protobuf version in go.mod (the
# runtime it generates for), protoc-gen-go-grpc to GRPC_PLUGIN_VERSION.
set -euo pipefail
cd "$(dirname "$0")/.."
GRPC_PLUGIN_VERSION=v1.6.2

command -v protoc >/dev/null || { echo "gen-proto: protoc not found (apt-get install protobuf-compiler)" >&2; exit 2; }
bin="$(go env GOPATH)/bin"
pbver=$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
want_go="protoc-gen-go $pbver"
if [ "$("$bin/protoc-gen-go" --version 2>/dev/null)" != "$want_go" ]; then
  go install "google.golang.org/protobuf/cmd/protoc-gen-go@$pbver"
fi
if [ "$("$bin/protoc-gen-go-grpc" --version 2>/dev/null)" != "protoc-gen-go-grpc ${GRPC_PLUGIN_VERSION#v}" ]; then
  go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$GRPC_PLUGIN_VERSION"
fi

out=internal/assistant/gigachatpb
rm -f "$out"/*.pb.go
PATH="$bin:$PATH" protoc -I proto \
  --go_out="$out" --go_opt=paths=source_relative --go_opt=Mgigachat/v1/gigachat.proto=partnerapi/internal/assistant/gigachatpb \
  --go-grpc_out="$out" --go-grpc_opt=paths=source_relative --go-grpc_opt=Mgigachat/v1/gigachat.proto=partnerapi/internal/assistant/gigachatpb \
  gigachat/v1/gigachat.proto
# paths=source_relative mirrors the proto directory; flatten into the package.
mv "$out"/gigachat/v1/*.pb.go "$out"/
rm -r "$out"/gigachat
