#!/bin/sh
# Build the oracle for one older Kubernetes minor: ./build.sh 1.30 | 1.32
# Output: build/oracle-<minor>/oracle at the repository root (git-ignored).
# One source tree: 1.32 builds against go.mod; 1.30 against go.1.30.mod (and
# go.1.30.sum) with the k8s130 build tag, which selects server_130.go over
# server_132.go.
set -e
cd "$(dirname "$0")"
case "$1" in
1.30) V=v1.30.14; FLAGS="-modfile=go.1.30.mod -tags=k8s130" ;;
1.32) V=v1.32.13; FLAGS= ;;
*) echo "usage: $0 1.30|1.32" >&2; exit 2 ;;
esac
MINOR=${1#1.}
OUT=../../build/oracle-$1
LDFLAGS="-X k8s.io/component-base/version.gitVersion=$V -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$V -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$MINOR"
mkdir -p "$OUT"
# shellcheck disable=SC2086
go build $FLAGS -ldflags "$LDFLAGS" -o "$OUT/oracle" .
echo "built $(cd "$OUT" && pwd)/oracle ($V)"
