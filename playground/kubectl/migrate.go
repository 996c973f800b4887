package kubectl

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The managers kubectl uses around the switch from client-side to server-side apply.
const (
	fieldManagerLastApplied = "kubectl-last-applied"
)

var lastAppliedFieldPath = fieldpath.NewSet(fieldpath.MakePathOrDie("metadata", "annotations", lastAppliedAnnotation))

// migrateFromClientSideApply is what kubectl apply --server-side does after its apply patch when the field
// manager is the default one: keep the last-applied annotation under a manager of its own
// (saveLastApplyAnnotationIfNecessary), move the fields the client-side apply manager owned to the
// server-side apply manager (csaupgrade), and apply again so that fields dropped from the manifest go.
func (k *kubectl) migrateFromClientSideApply(it *info, dry dryRun, directive string, data []byte, q url.Values, path string) error {
	if err := k.saveLastApplied(it, dry, directive, path); err != nil {
		fmt.Fprintf(&k.errOut, "Warning: failed to migrate kubectl.kubernetes.io/last-applied-configuration for Server-Side Apply. This is non-fatal and will be retried next time you apply. Error: %s\n", err.Error())
		return nil
	}
	migrated, err := k.upgradeManagedFields(it, dry, directive, path)
	if err != nil {
		fmt.Fprintf(&k.errOut, "Warning: server rejected managed fields migration to Server-Side Apply. This is non-fatal and will be retried next time you apply. Error: %s\n", err.Error())
		return nil
	}
	if !migrated {
		return nil
	}
	body, err := k.client.call(request{
		method: "PATCH", path: path, query: q, accept: acceptJSON,
		contentType: "application/apply-patch+yaml", body: data,
		resource: it.mapping.gvr.GroupResource(), name: it.name,
	})
	if err != nil {
		fmt.Fprintf(&k.errOut, "Warning: failed to re-apply configuration after performing Server-Side Apply migration. This is non-fatal and will be retried next time you apply. Error: %s\n", err.Error())
		return nil
	}
	if obj, err := decodeObject(body); err == nil {
		it.object = obj
	}
	return nil
}

func fieldsOwners(entries []metav1.ManagedFieldsEntry, op metav1.ManagedFieldsOperationType, fields *fieldpath.Set) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.Operation != op {
			continue
		}
		set, err := decodeFieldSet(e)
		if err != nil {
			continue
		}
		if fields.Difference(&set).Empty() {
			out = append(out, e)
		}
	}
	return out
}

func decodeFieldSet(e metav1.ManagedFieldsEntry) (s fieldpath.Set, err error) {
	if e.FieldsV1 == nil {
		return s, nil
	}
	err = s.FromJSON(e.FieldsV1.GetRawReader())
	return s, err
}

// saveLastApplied applies the annotation alone as manager kubectl-last-applied, unless an apply manager owns it.
func (k *kubectl) saveLastApplied(it *info, dry dryRun, directive, path string) error {
	annots := it.object.GetAnnotations()
	orig, ok := annots[lastAppliedAnnotation]
	if !ok {
		return nil
	}
	if len(fieldsOwners(it.object.GetManagedFields(), metav1.ManagedFieldsOperationApply, lastAppliedFieldPath)) > 0 {
		return nil
	}
	just := &unstructured.Unstructured{Object: map[string]interface{}{}}
	just.SetGroupVersionKind(it.mapping.gvk)
	just.SetName(it.object.GetName())
	just.SetNamespace(it.object.GetNamespace())
	just.SetAnnotations(map[string]string{lastAppliedAnnotation: orig})
	body, err := k.client.call(request{
		method: "PATCH", path: path, query: writeQuery(dry, fieldManagerLastApplied, directive), accept: acceptJSON,
		contentType: "application/apply-patch+yaml", body: encode(just.Object),
		resource: it.mapping.gvr.GroupResource(), name: it.name,
	})
	if err != nil {
		return err
	}
	obj, err := decodeObject(body)
	if err != nil {
		return err
	}
	it.object = obj
	return nil
}

// upgradeManagedFields is migrateToSSAIfNecessary: a JSON patch that hands the client-side apply managers'
// fields to the server-side apply manager, retried on conflicts.
func (k *kubectl) upgradeManagedFields(it *info, dry dryRun, directive, path string) (bool, error) {
	csa := fieldsOwners(it.object.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, lastAppliedFieldPath)
	names := []string{}
	seen := map[string]bool{}
	for _, e := range csa {
		if !seen[e.Manager] {
			seen[e.Manager] = true
			names = append(names, e.Manager)
		}
	}
	var err error
	for i := 0; i < 5; i++ {
		var patch []byte
		patch, err = upgradePatch(it.object, names, "kubectl")
		if err != nil {
			return false, err
		}
		if patch == nil {
			return false, nil
		}
		var body []byte
		body, err = k.client.call(request{
			method: "PATCH", path: path, query: writeQuery(dry, "kubectl", directive), accept: acceptJSON,
			contentType: "application/json-patch+json", body: patch,
			resource: it.mapping.gvr.GroupResource(), name: it.name,
		})
		if err == nil {
			if obj, derr := decodeObject(body); derr == nil {
				it.object = obj
			}
			return true, nil
		}
		if !apierrors.IsConflict(err) {
			return false, err
		}
		obj, gerr := k.get(it.mapping, it.namespace, it.name, "")
		if gerr != nil {
			return false, gerr
		}
		it.object = obj
	}
	return false, err
}

// upgradePatch is csaupgrade.UpgradeManagedFieldsPatch; nil when nothing changes.
func upgradePatch(u *unstructured.Unstructured, csaManagers []string, ssaManager string) ([]byte, error) {
	managed := u.GetManagedFields()
	filtered := u.GetManagedFields()
	var err error
	for _, m := range csaManagers {
		if filtered, err = upgradedManagedFields(filtered, m, ssaManager); err != nil {
			return nil, err
		}
	}
	if reflect.DeepEqual(managed, filtered) {
		return nil, nil
	}
	return json.Marshal([]map[string]interface{}{
		{"op": "replace", "path": "/metadata/managedFields", "value": filtered},
		{"op": "replace", "path": "/metadata/resourceVersion", "value": u.GetResourceVersion()},
	})
}

func upgradedManagedFields(entries []metav1.ManagedFieldsEntry, csaManager, ssaManager string) ([]metav1.ManagedFieldsEntry, error) {
	if entries == nil {
		return nil, nil
	}
	entries = append([]metav1.ManagedFieldsEntry(nil), entries...)
	idx := -1
	for i, e := range entries {
		if e.Manager == ssaManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			idx = i
			break
		}
	}
	if idx < 0 {
		for i, e := range entries {
			if e.Manager == csaManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
				idx = i
				break
			}
		}
		if idx < 0 {
			return entries, nil
		}
		entries[idx].Operation = metav1.ManagedFieldsOperationApply
		entries[idx].Manager = ssaManager
	}
	target := entries[idx]
	set, err := decodeFieldSet(target)
	if err != nil {
		return nil, fmt.Errorf("failed to convert fields to set: %w", err)
	}
	combined := &set
	for _, e := range entries {
		if e.Manager == csaManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" && e.APIVersion == target.APIVersion {
			cs, err := decodeFieldSet(e)
			if err != nil {
				return nil, fmt.Errorf("failed to convert fields to set: %w", err)
			}
			combined = combined.Union(&cs)
			break
		}
	}
	raw, err := combined.ToJSON()
	if err != nil {
		return nil, fmt.Errorf("failed to encode field set: %w", err)
	}
	fields := &metav1.FieldsV1{}
	fields.SetRawBytes(raw)
	entries[idx].FieldsV1 = fields
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if !(e.Manager == csaManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "") {
			out = append(out, e)
		}
	}
	return out, nil
}

// jsonMergePatch applies an RFC 7386 merge patch.
func jsonMergePatch(doc, patch []byte) ([]byte, error) {
	return jsonpatch.MergePatch(doc, patch)
}
