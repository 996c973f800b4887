// Package examples reads the playground's example gallery: the examples of the Kubernetes CRD documentation
// (testdata/examples) and real-world CRDs with sample objects (testdata/corpus).
//
// Every example is also an oracle case directory (crd.yaml, NN-<op>.yaml steps, expected/ recorded from a real
// apiextensions-apiserver; see internal/oraclecase), so the gallery shows nothing the tests have not compared
// with the real server. Next to the case files, example.yaml says how the playground presents it:
//
//	title: Defaulting                      # gallery entry
//	category: Defaulting and nullable      # one of Categories
//	description: >-                        # what it shows, and where the real server disagrees with the docs
//	  ...
//	source:
//	  url: https://kubernetes.io/docs/...  # where the YAML comes from
//	  section: Defaulting
//	mode: update                           # create | update | status | scale | delete | upgrade
//	oldObject: 01-create.yaml              # update and status: the stored object before the change
//	newCrd: 02-update-crd.yaml             # upgrade: the CRD update step that replaces crd.yaml (the old CRD)
//	objects: [02-update.yaml]              # the objects editor: these step files, in order
//	tab: errors                            # optional first result tab: stored | errors | table | versions | crd
//
// The files named in objects and oldObject are sent as written (they may not carry the runner's x-oracle
// block), so the text the editors show is exactly what the recorded requests carried.
package examples
