//go:build js

package apiserver

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// decodeWritten leaves every decode to the codec in the browser (see storedcopy.go).
func (r *crRequest) decodeWritten(*unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	return nil, false
}
