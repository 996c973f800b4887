package kubectl

import (
	"fmt"
	"reflect"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// threeWayMergePatch is client-side apply's patch for kinds without strategic merge patch
// (jsonmergepatch.CreateThreeWayJSONMergePatch): what changed from the live object to the new configuration,
// minus nothing, plus the deletions from the last applied configuration to the new one. It fails when the
// two overlap with different values, and when the patch would change apiVersion, kind or metadata.name.
// (Written out here rather than imported: apimachinery's mergepatch pulls a pretty-printer for its error
// messages that costs the wasm more than this file.)
func threeWayMergePatch(original, modified, current []byte) ([]byte, error) {
	if len(original) == 0 {
		original = []byte(`{}`)
	}
	if len(modified) == 0 {
		modified = []byte(`{}`)
	}
	if len(current) == 0 {
		current = []byte(`{}`)
	}
	addAndChange, addAndChangeObj, err := mergePatchPart(current, modified, false)
	if err != nil {
		return nil, err
	}
	deletions, deletionsObj, err := mergePatchPart(original, modified, true)
	if err != nil {
		return nil, err
	}
	conflict, err := hasConflicts(addAndChangeObj, deletionsObj)
	if err != nil {
		return nil, err
	}
	if conflict {
		return nil, fmt.Errorf("patch:\n%s\nconflicts with changes made from original to current:\n%s\n", toYAMLOrError(addAndChangeObj), toYAMLOrError(deletionsObj))
	}
	patch, err := jsonpatch.MergePatch(deletions, addAndChange)
	if err != nil {
		return nil, err
	}
	var patchMap map[string]interface{}
	if err := utiljson.Unmarshal(patch, &patchMap); err != nil {
		return nil, fmt.Errorf("failed to unmarshal patch for precondition check: %s", patch)
	}
	// The preconditions of kubectl's patcher: apiVersion, kind and metadata.name unchanged.
	_, apiVersion := patchMap["apiVersion"]
	_, kind := patchMap["kind"]
	name := false
	if md, ok := patchMap["metadata"].(map[string]interface{}); ok {
		_, name = md["name"]
	}
	if apiVersion || kind || name {
		return nil, fmt.Errorf("precondition failed for: %v", patchMap)
	}
	return patch, nil
}

// mergePatchPart is one half of the three-way patch: the merge patch from one document to the other, with
// only its deletions (keepNull) or only its additions and changes, as JSON and as a map.
func mergePatchPart(from, to []byte, keepNull bool) ([]byte, map[string]interface{}, error) {
	patch, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, nil, err
	}
	var m map[string]interface{}
	if err := utiljson.Unmarshal(patch, &m); err != nil {
		return nil, nil, err
	}
	filtered, err := keepOrDeleteNull(m, keepNull)
	if err != nil {
		return nil, nil, err
	}
	out, err := utiljson.Marshal(filtered)
	return out, filtered, err
}

// keepOrDeleteNull keeps only the nulls of a merge patch (the deletions) when keepNull is true, and
// everything else otherwise.
func keepOrDeleteNull(m map[string]interface{}, keepNull bool) (map[string]interface{}, error) {
	out := map[string]interface{}{}
	for key, val := range m {
		switch {
		case keepNull && val == nil:
			out[key] = nil
		case val != nil:
			switch v := val.(type) {
			case map[string]interface{}:
				// An explicitly empty map is a value, not an empty patch.
				if len(v) == 0 {
					if !keepNull {
						out[key] = v
					}
					continue
				}
				sub, err := keepOrDeleteNull(v, keepNull)
				if err != nil {
					return nil, err
				}
				if len(sub) != 0 {
					out[key] = sub
				}
			case []interface{}, string, float64, bool, int64:
				if !keepNull {
					out[key] = val
				}
			default:
				return nil, fmt.Errorf("unknown type: %v", reflect.TypeOf(v))
			}
		}
	}
	return out, nil
}

// hasConflicts is mergepatch.HasConflicts: do the two patches set a key to different values?
func hasConflicts(left, right interface{}) (bool, error) {
	switch l := left.(type) {
	case map[string]interface{}:
		r, ok := right.(map[string]interface{})
		if !ok {
			return true, nil
		}
		for key, lv := range l {
			rv, ok := r[key]
			if !ok {
				continue
			}
			if c, err := hasConflicts(lv, rv); err != nil || c {
				return c, err
			}
		}
		return false, nil
	case []interface{}:
		r, ok := right.([]interface{})
		if !ok || len(l) != len(r) {
			return true, nil
		}
		for i := range l {
			if c, err := hasConflicts(l[i], r[i]); err != nil || c {
				return c, err
			}
		}
		return false, nil
	case string, float64, bool, int64, nil:
		return !reflect.DeepEqual(left, right), nil
	}
	return true, fmt.Errorf("unknown type: %v", reflect.TypeOf(left))
}

func toYAMLOrError(v interface{}) string {
	y, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("yaml marshal failed:%v\n%#v\n", err, v)
	}
	return string(y)
}
