package kubectl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// annotationMap is kubectl annotate: any value goes, missing resources or changes are usage errors, the
// patch is sent even when nothing changes, and the server's answer is printed.
var annotationMap = &metadataMap{
	verb:           "annotate",
	noun:           "annotation",
	short:          "Update the annotations on a resource",
	get:            (*unstructured.Unstructured).GetAnnotations,
	set:            (*unstructured.Unstructured).SetAnnotations,
	parse:          parseAnnotations,
	overwriteError: annotationOverwriteError,
	usageErrors:    true,
	patchUnchanged: true,
	operation:      func(added, removed int) string { return "annotated" },
}

func (k *kubectl) newAnnotateCommand() *command { return k.newMapEditCommand(annotationMap) }

// parseAnnotations is cmdutil.ParsePairs for annotations, then annotate's check that no key is both set and
// removed.
func parseAnnotations(args []string) (map[string]string, []string, error) {
	pairs := map[string]string{}
	remove := []string{}
	var invalid []string
	for _, a := range args {
		switch {
		case strings.Contains(a, "=") && a[0] != '=':
			parts := strings.SplitN(a, "=", 2)
			pairs[parts[0]] = parts[1]
		case strings.HasSuffix(a, "-") && a != "-":
			remove = append(remove, a[:len(a)-1])
		default:
			invalid = append(invalid, a)
		}
	}
	if len(invalid) > 0 {
		return nil, nil, fmt.Errorf("invalid annotation format: %s", strings.Join(invalid, ", "))
	}
	var both []string
	for _, r := range remove {
		if _, ok := pairs[r]; ok {
			both = append(both, r)
		}
	}
	if len(both) > 0 {
		return nil, nil, fmt.Errorf("can not both modify and remove the following annotation(s) in the same command: %s", strings.Join(both, ", "))
	}
	return pairs, remove, nil
}

// annotationOverwriteError is kubectl annotate's check without --overwrite: one error listing every
// annotation whose value changes (but the change cause, which kubectl itself sets).
func annotationOverwriteError(current, updates map[string]string) error {
	var found []string
	for _, key := range slices.Sorted(maps.Keys(updates)) {
		if key == "kubernetes.io/change-cause" {
			continue
		}
		if v, ok := current[key]; ok && v != updates[key] {
			found = append(found, fmt.Sprintf("'%s' already has a value (%s)", key, v))
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("--overwrite is false but found the following declared annotation(s): %s", strings.Join(found, "; "))
	}
	return nil
}
