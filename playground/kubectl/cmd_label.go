package kubectl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
)

// labelMap is kubectl label: it validates label values, says which labels to remove are not there, sends
// nothing when nothing changes, and prints the object it sent.
var labelMap = &metadataMap{
	verb:           "label",
	noun:           "label",
	short:          "Update the labels on a resource",
	get:            (*unstructured.Unstructured).GetLabels,
	set:            (*unstructured.Unstructured).SetLabels,
	parse:          parseLabelSpecs,
	overwriteError: labelOverwriteError,
	reportMissing:  true,
	operation:      labelOperation,
	printSent:      true,
}

func (k *kubectl) newLabelCommand() *command { return k.newMapEditCommand(labelMap) }

// parseLabelSpecs is kubectl label's parseLabels: KEY=VALUE with a valid value, or KEY-.
func parseLabelSpecs(spec []string) (map[string]string, []string, error) {
	labels := map[string]string{}
	var remove []string
	for _, s := range spec {
		if strings.Contains(s, "=") {
			parts := strings.Split(s, "=")
			if len(parts) != 2 {
				return nil, nil, fmt.Errorf("invalid label spec: %v", s)
			}
			if errs := validation.IsValidLabelValue(parts[1]); len(errs) != 0 {
				return nil, nil, fmt.Errorf("invalid label value: %q: %s", s, strings.Join(errs, ";"))
			}
			labels[parts[0]] = parts[1]
		} else if strings.HasSuffix(s, "-") {
			remove = append(remove, s[:len(s)-1])
		} else {
			return nil, nil, fmt.Errorf("unknown label spec: %v", s)
		}
	}
	for _, r := range remove {
		if _, ok := labels[r]; ok {
			return nil, nil, fmt.Errorf("can not both modify and remove a label in the same command")
		}
	}
	return labels, remove, nil
}

// labelOverwriteError is kubectl label's check without --overwrite: one error per label whose value changes.
func labelOverwriteError(current, updates map[string]string) error {
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(updates)) {
		if v, ok := current[key]; ok && v != updates[key] {
			errs = append(errs, fmt.Errorf("'%s' already has a value (%s), and --overwrite is false", key, v))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// labelOperation is what kubectl label says it did.
func labelOperation(added, removed int) string {
	switch {
	case added > 0 && removed > 0:
		return "modified"
	case added > 0:
		return "labeled"
	case removed > 0:
		return "unlabeled"
	}
	return "not labeled"
}
