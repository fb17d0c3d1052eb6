#!/usr/bin/env bash
# CI for the bench module: it must keep compiling and its quick self-test
# (a few loops of every contestant, a few seconds) must pass. The long
# benchmark itself (go run .) is never run here.
set -euo pipefail
cd "$(dirname "$0")"

echo "==> bench: go build ./..."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out" ./...
echo "==> bench: go vet ./..."
go vet ./...
echo "==> bench: go test -short ./..."
go test -short -count=1 ./...
