// Command kubectl is upstream kubectl, built from k8s.io/kubectl at the minor version the engine composes
// (v0.37.x), for the test that drives crdplay's server with a real Kubernetes client (server/kubectl_test.go).
// It is a module of its own so that kubectl's dependencies stay out of crdplay's go.mod.
//
// Build it with the version stamped as a release build stamps it, or kubectl reports v0.0.0-master and cannot
// compare its version with the server's (server/kubectl_test.go passes these flags):
//
//	V=v1.37.2
//	go build -C tools/kubectl -o ../../build/kubectl/kubectl -ldflags "\
//	  -X k8s.io/component-base/version.gitVersion=$V -X k8s.io/component-base/version.gitMajor=1 \
//	  -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean \
//	  -X k8s.io/client-go/pkg/version.gitVersion=$V -X k8s.io/client-go/pkg/version.gitMajor=1 \
//	  -X k8s.io/client-go/pkg/version.gitMinor=37" .
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
	os.Exit(0)
}
