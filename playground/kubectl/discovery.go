package kubectl

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// discovery is what kubectl learns from /api and /apis: the groups in the server's order, each with its
// versions (the preferred one first), and the resources of every group version.
type discovery struct {
	groups    []metav1.APIGroup
	resources map[schema.GroupVersion][]metav1.APIResource
}

// aggregatedList is the part of apidiscovery.k8s.io/v2 APIGroupDiscoveryList that kubectl reads.
type aggregatedList struct {
	Kind  string `json:"kind"`
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Versions []struct {
			Version   string `json:"version"`
			Freshness string `json:"freshness"`
			Resources []struct {
				Resource         string   `json:"resource"`
				SingularResource string   `json:"singularResource"`
				Scope            string   `json:"scope"`
				Verbs            []string `json:"verbs"`
				ShortNames       []string `json:"shortNames"`
				Categories       []string `json:"categories"`
				ResponseKind     *struct {
					Group   string `json:"group"`
					Version string `json:"version"`
					Kind    string `json:"kind"`
				} `json:"responseKind"`
				Subresources []struct {
					Subresource  string `json:"subresource"`
					ResponseKind *struct {
						Group   string `json:"group"`
						Version string `json:"version"`
						Kind    string `json:"kind"`
					} `json:"responseKind"`
					Verbs []string `json:"verbs"`
				} `json:"subresources"`
			} `json:"resources"`
		} `json:"versions"`
	} `json:"items"`
}

// discover fetches discovery as kubectl does with an empty cache: GET /api and /apis asking for aggregated
// discovery, and, when the server answers the legacy way, GET /api/<version> and /apis/<group>/<version> for
// every version listed.
func (k *kubectl) discover() (*discovery, error) {
	if k.disc != nil {
		return k.disc, nil
	}
	d := &discovery{resources: map[schema.GroupVersion][]metav1.APIResource{}}
	var legacy []schema.GroupVersion
	// /api is the legacy core group, /apis every other group.
	for _, root := range []struct {
		path   string
		legacy func(body []byte) ([]schema.GroupVersion, error)
	}{{"/api", d.addCoreVersions}, {"/apis", d.addGroupList}} {
		body, err := k.client.call(request{method: "GET", path: root.path, query: timeoutQuery(), accept: acceptDiscovery})
		if err != nil {
			return nil, err
		}
		if agg, ok := decodeAggregated(body); ok {
			d.addAggregated(agg)
			continue
		}
		gvs, err := root.legacy(body)
		if err != nil {
			return nil, fmt.Errorf("failed to decode discovery from %s: %v", root.path, err)
		}
		legacy = append(legacy, gvs...)
	}
	for _, gv := range legacy {
		k.discoverResources(d, gv)
	}
	k.disc = d
	return d, nil
}

// addCoreVersions adds the core group from the legacy answer of /api (APIVersions), and returns its
// versions, whose resources are still to be asked for.
func (d *discovery) addCoreVersions(body []byte) ([]schema.GroupVersion, error) {
	var versions metav1.APIVersions
	if err := json.Unmarshal(body, &versions); err != nil {
		return nil, err
	}
	if len(versions.Versions) == 0 {
		return nil, nil
	}
	var gvs []schema.GroupVersion
	g := metav1.APIGroup{Name: ""}
	for _, v := range versions.Versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v, Version: v})
		gvs = append(gvs, schema.GroupVersion{Version: v})
	}
	g.PreferredVersion = g.Versions[0]
	d.groups = append(d.groups, g)
	return gvs, nil
}

// addGroupList adds the groups from the legacy answer of /apis (APIGroupList), and returns their versions,
// whose resources are still to be asked for.
func (d *discovery) addGroupList(body []byte) ([]schema.GroupVersion, error) {
	var list metav1.APIGroupList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	var gvs []schema.GroupVersion
	for _, g := range list.Groups {
		d.groups = append(d.groups, g)
		for _, v := range g.Versions {
			gvs = append(gvs, schema.GroupVersion{Group: g.Name, Version: v.Version})
		}
	}
	return gvs, nil
}

// discoverResources asks for the resources of one group version, the legacy way. client-go reports a group
// version that fails as a partial discovery failure and goes on with the others.
func (k *kubectl) discoverResources(d *discovery, gv schema.GroupVersion) {
	path := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	body, err := k.client.call(request{method: "GET", path: path, query: timeoutQuery(), accept: acceptAny})
	if err != nil {
		return
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return
	}
	d.resources[gv] = list.APIResources
}

func timeoutQuery() map[string][]string { return map[string][]string{"timeout": {"32s"}} }

func decodeAggregated(body []byte) (*aggregatedList, bool) {
	var agg aggregatedList
	if json.Unmarshal(body, &agg) != nil || agg.Kind != "APIGroupDiscoveryList" {
		return nil, false
	}
	return &agg, true
}

// addAggregated converts aggregated discovery as client-go does: stale versions are skipped, the first
// version is the preferred one, subresources become "<resource>/<subresource>" entries.
func (d *discovery) addAggregated(agg *aggregatedList) {
	for _, item := range agg.Items {
		g := metav1.APIGroup{Name: item.Metadata.Name}
		for _, v := range item.Versions {
			if v.Freshness == "Stale" {
				continue
			}
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			dv := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: v.Version}
			g.Versions = append(g.Versions, dv)
			if g.PreferredVersion.Version == "" {
				g.PreferredVersion = dv
			}
			var list []metav1.APIResource
			for _, r := range v.Resources {
				res := metav1.APIResource{
					Name:         r.Resource,
					SingularName: r.SingularResource,
					Namespaced:   r.Scope == "Namespaced",
					Verbs:        r.Verbs,
					ShortNames:   r.ShortNames,
					Categories:   r.Categories,
				}
				if r.ResponseKind != nil && r.ResponseKind.Kind != "" {
					res.Group, res.Version, res.Kind = r.ResponseKind.Group, r.ResponseKind.Version, r.ResponseKind.Kind
					list = append(list, res)
				}
				for _, s := range r.Subresources {
					if s.ResponseKind == nil || s.ResponseKind.Kind == "" {
						continue
					}
					list = append(list, metav1.APIResource{
						Name:         r.Resource + "/" + s.Subresource,
						SingularName: r.SingularResource,
						Namespaced:   res.Namespaced,
						Group:        s.ResponseKind.Group,
						Version:      s.ResponseKind.Version,
						Kind:         s.ResponseKind.Kind,
						Verbs:        s.Verbs,
					})
				}
			}
			d.resources[gv] = list
		}
		d.groups = append(d.groups, g)
	}
}

// mapping is a resolved resource type: kubectl's meta.RESTMapping.
type mapping struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
}

// groupKindString is the lower-case kind.group kubectl prints before object names.
func (m *mapping) groupKindString() string {
	if m.gvk.Group == "" {
		return strings.ToLower(m.gvk.Kind)
	}
	return strings.ToLower(m.gvk.Kind) + "." + m.gvk.Group
}

// candidate is one resource of one group version, in the RESTMapper's priority order.
type candidate struct {
	gv  schema.GroupVersion
	res metav1.APIResource
}

// candidates lists the top-level resources of every served group version in kubectl's RESTMapper priority:
// groups in discovery order, the preferred version first, then the group's other versions in order.
func (d *discovery) candidates() []candidate {
	var out []candidate
	for _, g := range d.groups {
		versions := []string{}
		if g.PreferredVersion.Version != "" {
			versions = append(versions, g.PreferredVersion.Version)
		}
		for _, v := range g.Versions {
			if v.Version != g.PreferredVersion.Version {
				versions = append(versions, v.Version)
			}
		}
		for _, v := range versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v}
			for _, r := range d.resources[gv] {
				if strings.Contains(r.Name, "/") {
					continue
				}
				out = append(out, candidate{gv: gv, res: r})
			}
		}
	}
	return out
}

// expandShortcut is client-go's shortcut expander: a name that is some resource's plural or singular name
// stays as it is; otherwise the first resource with that short name (in discovery order) replaces it.
func (d *discovery) expandShortcut(r schema.GroupVersionResource) schema.GroupVersionResource {
	for _, gv := range d.versionOrder() {
		if r.Group != "" && r.Group != gv.Group {
			continue
		}
		for _, res := range d.resources[gv] {
			if r.Resource == res.Name || r.Resource == res.SingularName {
				return r
			}
		}
	}
	for _, gv := range d.versionOrder() {
		if r.Group != "" && r.Group != gv.Group {
			continue
		}
		for _, res := range d.resources[gv] {
			for _, s := range res.ShortNames {
				if s == r.Resource {
					return schema.GroupVersionResource{Group: gv.Group, Version: r.Version, Resource: res.Name}
				}
			}
		}
	}
	return r
}

// versionOrder is the order in which client-go lists group versions: groups in discovery order, versions as
// the server lists them.
func (d *discovery) versionOrder() []schema.GroupVersion {
	var out []schema.GroupVersion
	for _, g := range d.groups {
		for _, v := range g.Versions {
			out = append(out, schema.GroupVersion{Group: g.Name, Version: v.Version})
		}
	}
	return out
}

// resourcesFor returns the resources a partial group/version/resource names, most preferred first
// (meta.DefaultRESTMapper.ResourcesFor sorted by the PriorityRESTMapper's order).
func (d *discovery) resourcesFor(in schema.GroupVersionResource) []candidate {
	in = d.expandShortcut(in)
	res := strings.ToLower(in.Resource)
	var exact, prefix []candidate
	for _, c := range d.candidates() {
		nameMatch := c.res.Name == res || singular(c.res) == res
		if !nameMatch {
			continue
		}
		if in.Version != "" && c.gv.Version != in.Version {
			continue
		}
		switch {
		case in.Group == "" || c.gv.Group == in.Group:
			exact = append(exact, c)
		case in.Version == "" && strings.HasPrefix(c.gv.Group, in.Group):
			// A group given as a prefix (ct.stable) matches when nothing matches exactly.
			prefix = append(prefix, c)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return prefix
}

// singular is the resource's singular name; discovery leaves it empty for some resources, and the RESTMapper
// then uses the lower-case kind.
func singular(r metav1.APIResource) string {
	if r.SingularName != "" {
		return r.SingularName
	}
	return strings.ToLower(r.Kind)
}

// kindFor finds a resource by kind (Kind, Kind.group or Kind.version.group), as RESTMapping does.
func (d *discovery) kindFor(gk schema.GroupKind, version string) *candidate {
	for _, c := range d.candidates() {
		if c.res.Kind != gk.Kind || c.gv.Group != gk.Group {
			continue
		}
		if version != "" && c.gv.Version != version {
			continue
		}
		cc := c
		return &cc
	}
	return nil
}

func toMapping(c candidate) *mapping {
	return &mapping{
		gvk:        c.gv.WithKind(c.res.Kind),
		gvr:        c.gv.WithResource(c.res.Name),
		namespaced: c.res.Namespaced,
	}
}

// mappingFor resolves a resource argument (ct, crontabs, crontab.stable.example.com,
// crontabs.v1.stable.example.com, CronTab, CronTab.v1.stable.example.com) as cli-runtime's
// Builder.mappingFor does.
func (k *kubectl) mappingFor(arg string) (*mapping, error) {
	d, err := k.discover()
	if err != nil {
		return nil, err
	}
	fullGVR, gr := schema.ParseResourceArg(arg)
	if fullGVR != nil {
		if cs := d.resourcesFor(*fullGVR); len(cs) > 0 {
			return toMapping(cs[0]), nil
		}
	}
	if cs := d.resourcesFor(gr.WithVersion("")); len(cs) > 0 {
		return toMapping(cs[0]), nil
	}
	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK != nil {
		if c := d.kindFor(fullGVK.GroupKind(), fullGVK.Version); c != nil {
			return toMapping(*c), nil
		}
	}
	if c := d.kindFor(gk, ""); c != nil {
		return toMapping(*c), nil
	}
	switch {
	case gr.Group != "":
		return nil, fmt.Errorf("the server doesn't have a resource type %q in group %q", gr.Resource, gr.Group)
	default:
		return nil, fmt.Errorf("the server doesn't have a resource type %q", gr.Resource)
	}
}

// mappingForGVK finds the resource of an object's apiVersion and kind, as the builder does for files.
func (k *kubectl) mappingForGVK(gvk schema.GroupVersionKind) (*mapping, error) {
	d, err := k.discover()
	if err != nil {
		return nil, err
	}
	if c := d.kindFor(gvk.GroupKind(), gvk.Version); c != nil {
		return toMapping(*c), nil
	}
	return nil, &noKindMatchError{gvk: gvk}
}

// noKindMatchError is meta.NoKindMatchError: no resource serves this kind in this version.
type noKindMatchError struct{ gvk schema.GroupVersionKind }

func (e *noKindMatchError) Error() string {
	// meta.NoKindMatchError with SearchedVersions = [version].
	return fmt.Sprintf("no matches for kind %q in version %q", e.gvk.Kind, e.gvk.GroupVersion().String())
}

// expandCategory is client-go's category expander: every resource (of every version) listing the category,
// as group resources; ok is false when no resource has it.
func (d *discovery) expandCategory(category string) ([]schema.GroupResource, bool) {
	var out []schema.GroupResource
	found := false
	for _, gv := range d.versionOrder() {
		for _, r := range d.resources[gv] {
			for _, c := range r.Categories {
				if c == category {
					found = true
					out = append(out, schema.GroupResource{Group: gv.Group, Resource: r.Name})
				}
			}
		}
	}
	return out, found
}
