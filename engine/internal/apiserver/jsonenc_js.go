//go:build js

package apiserver

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// appendJSON leaves every tree to encoding/json in the browser (see jsonenc.go).
func appendJSON(dst []byte, _ interface{}, _ int) ([]byte, bool) { return dst, false }

// appendJSONList leaves lists to encoding/json in the browser too.
func appendJSONList(_ context.Context, dst []byte, _ *unstructured.UnstructuredList) ([]byte, bool, error) {
	return dst, false, nil
}
