package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"crdplay/internal/examples"
)

// example is one entry of the gallery as the page reads it (web/src/examples.ts).
type example struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Category    string `json:"category,omitempty"`
	Description string `json:"description,omitempty"`
	CRD         string `json:"crd"`
	Objects     string `json:"objects,omitempty"`
	Old         string `json:"old,omitempty"`
	OldCRD      string `json:"oldCrd,omitempty"`
	Mode        string `json:"mode,omitempty"`
	Tab         string `json:"tab,omitempty"`
}

// pageTabs maps the gallery's first tabs (internal/examples.Tabs) to the page's panes.
var pageTabs = map[string]string{"stored": "result", "errors": "result", "crd": "result", "table": "table", "versions": "versions"}

// examplesJSON is the gallery, {"examples": [...]}, from internal/examples: every example of the Kubernetes
// CRD documentation and the real-world CRDs, each an oracle case whose responses were recorded from a real
// API server. The page also has its own default example, so it is usable whatever this holds.
func examplesJSON(root string) ([]byte, error) {
	exs, err := examples.Load(os.DirFS(root))
	if err != nil {
		return nil, fmt.Errorf("examples: %w", err)
	}
	list := make([]example, 0, len(exs))
	for _, ex := range exs {
		e := example{
			ID: ex.Name, Title: ex.Title, Category: ex.Category, Description: strings.TrimSpace(ex.Description),
			CRD: ex.CRD, Objects: ex.Objects, Old: ex.OldObject, Mode: string(ex.Mode), Tab: pageTabs[ex.Tab],
		}
		if ex.Mode == examples.ModeUpgrade {
			// The page's upgrade mode: the old CRD in its own editor, the CRD editor holds the new one.
			e.CRD, e.OldCRD = ex.NewCRD, ex.CRD
		}
		if ex.Mode == examples.ModeScale && ex.ScaleReplicas != 0 {
			// The page's scale mode PUTs a Scale document that follows the object.
			scale, err := scaleDoc(ex.Objects, ex.ScaleReplicas)
			if err != nil {
				return nil, fmt.Errorf("example %s: %w", ex.Name, err)
			}
			e.Objects = strings.TrimRight(e.Objects, "\n") + "\n---\n" + scale
		}
		list = append(list, e)
	}
	return json.Marshal(map[string]any{"examples": list})
}

// scaleDoc is the autoscaling/v1 Scale that sets the first object's replicas, as kubectl scale sends it.
func scaleDoc(objects string, replicas int64) (string, error) {
	first, _, _ := strings.Cut(strings.TrimPrefix(objects, "---\n"), "\n---")
	var obj struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(first), &obj); err != nil {
		return "", err
	}
	out := fmt.Sprintf("apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: %s\n", obj.Metadata.Name)
	if obj.Metadata.Namespace != "" {
		out += fmt.Sprintf("  namespace: %s\n", obj.Metadata.Namespace)
	}
	return out + fmt.Sprintf("spec:\n  replicas: %d\n", replicas), nil
}
