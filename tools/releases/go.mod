// A module of its own: the recorder of testdata/releases (a real project's CRD release history replayed
// against a Kubernetes API URL, the oracle), kept out of crdplay's go.mod.
module crdplay/tools/releases

go 1.26.8

require sigs.k8s.io/yaml v1.6.0

require go.yaml.in/yaml/v2 v2.4.2 // indirect
