package kubectl

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// lastAppliedAnnotation is where client-side apply keeps the configuration it applied last; create and
// replace write it too with --save-config.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// modifiedConfiguration is util.GetModifiedConfiguration: the object's JSON, with the last-applied
// annotation set to the object itself (without the annotation) when annotate is true.
func modifiedConfiguration(u *unstructured.Unstructured, annotate bool) ([]byte, error) {
	annots := u.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	original := annots[lastAppliedAnnotation]
	delete(annots, lastAppliedAnnotation)
	u.SetAnnotations(annots)
	modified := encode(u.Object)
	if annotate {
		annots[lastAppliedAnnotation] = string(modified)
		u.SetAnnotations(annots)
		modified = encode(u.Object)
	}
	annots[lastAppliedAnnotation] = original
	u.SetAnnotations(annots)
	return modified, nil
}

// createApplyAnnotation is util.CreateApplyAnnotation: the annotation holds the object as it is.
func createApplyAnnotation(u *unstructured.Unstructured) error {
	modified, err := modifiedConfiguration(u, false)
	if err != nil {
		return err
	}
	annots := u.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	annots[lastAppliedAnnotation] = string(modified)
	u.SetAnnotations(annots)
	return nil
}
