package main

import "encoding/json"

// example is one entry of the gallery as the page reads it (web/src/examples.ts).
type example struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Category string `json:"category,omitempty"`
	CRD      string `json:"crd"`
	Objects  string `json:"objects,omitempty"`
	Old      string `json:"old,omitempty"`
	Mode     string `json:"mode,omitempty"`
}

// examplesJSON is the gallery: {"examples": [...]}. The page also has its own default example (the CronTab of
// the Kubernetes documentation), so it is usable whatever this holds.
func examplesJSON(root string) ([]byte, error) {
	var list []example
	_ = root
	return json.Marshal(map[string]any{"examples": append([]example{}, list...)})
}
