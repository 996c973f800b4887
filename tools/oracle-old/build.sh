#!/bin/sh
# Build the oracle for one older Kubernetes minor: ./build.sh 1.30 | 1.32
# Output: build/oracle-<minor>/oracle at the repository root (git-ignored).
set -e
cd "$(dirname "$0")"
case "$1" in
1.30) V=v1.30.14 ;;
1.32) V=v1.32.13 ;;
*) echo "usage: $0 1.30|1.32" >&2; exit 2 ;;
esac
MINOR=${1#1.}
OUT=../../build/oracle-$1
LDFLAGS="-X k8s.io/component-base/version.gitVersion=$V -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$V -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$MINOR"
mkdir -p "$OUT"
cd "v$1"
go build -ldflags "$LDFLAGS" -o "../$OUT/oracle" .
echo "built $(cd "../$OUT" && pwd)/oracle ($V)"
