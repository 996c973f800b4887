package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const stopValidateMessage = "if you choose to ignore these errors, turn validation off with --validate=false"

// validator is kubectl's schema validator for one command (--validate): with Strict or Warn it asks the
// server's OpenAPI whether the kind's PATCH takes fieldValidation, and leaves validation to the server when
// it does.
func (k *kubectl) validator(directive string) func(raw []byte, source string) error {
	if directive == "Ignore" {
		return nil
	}
	return func(raw []byte, source string) error {
		if err := k.validateDocument(raw); err != nil {
			return fmt.Errorf("error validating %q: %v", source, fmt.Errorf("error validating data: %v; %s", err, stopValidateMessage))
		}
		return nil
	}
}

// validateDocument is the validator's check of one document: it must have an apiVersion and a kind, and
// its kind's OpenAPI is consulted.
func (k *kubectl) validateDocument(raw []byte) error {
	out, err := utilyaml.ToJSON(raw)
	if err != nil {
		return err
	}
	var obj interface{}
	if err := json.Unmarshal(out, &obj); err != nil {
		return err
	}
	gvk, err := objectKind(obj)
	if err != nil {
		return err
	}
	// The question is asked for its requests: whatever the answer, validation is left to the server. (When
	// the kind's PATCH does not take fieldValidation, kubectl would validate against /openapi/v2 on the
	// client; every server the playground talks to validates fields itself.)
	_, err = k.supportsFieldValidation(gvk)
	return err
}

// objectKind is kubectl's validation getObjectKind.
func objectKind(obj interface{}) (schema.GroupVersionKind, error) {
	fields, ok := obj.(map[string]interface{})
	if !ok || fields == nil {
		return schema.GroupVersionKind{}, errors.New("invalid object to validate")
	}
	var errs []error
	var gv schema.GroupVersion
	switch v := fields["apiVersion"].(type) {
	case nil:
		errs = append(errs, errors.New("apiVersion not set"))
	case string:
		var err error
		if gv, err = schema.ParseGroupVersion(v); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, errors.New("apiVersion isn't string type"))
	}
	kind, isString := fields["kind"].(string)
	switch {
	case fields["kind"] == nil:
		errs = append(errs, errors.New("kind not set"))
	case !isString:
		errs = append(errs, errors.New("kind isn't string type"))
	}
	if errs != nil {
		return schema.GroupVersionKind{}, utilerrors.NewAggregate(errs)
	}
	return gv.WithKind(kind), nil
}
