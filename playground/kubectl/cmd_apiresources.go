package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"
)

type apiResourcesOptions struct {
	output     string
	noHeaders  bool
	apiGroup   string
	namespaced bool
	verbs      []string
	sortBy     string
	cached     bool
	categories []string

	// Set by runAPIResources: the filters that were given.
	groupChanged, namespacedChanged bool
}

func (k *kubectl) newAPIResourcesCommand() *command {
	o := &apiResourcesOptions{namespaced: true}
	cmd := &command{
		Use:   "api-resources",
		Short: "Print the supported API resources on the server",
		RunE:  func(cmd *command, args []string) error { return k.runAPIResources(cmd, o, args) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.noHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers (default print headers).")
	f.StringVarP(&o.output, "output", "o", "", "Output format. One of: (json, yaml, name, wide).")
	f.StringVar(&o.apiGroup, "api-group", "", "Limit to resources in the specified API group.")
	f.BoolVar(&o.namespaced, "namespaced", true, "If false, non-namespaced resources will be returned, otherwise returning namespaced resources by default.")
	f.StringSliceVar(&o.verbs, "verbs", nil, "Limit to resources that support the specified verbs.")
	f.StringVar(&o.sortBy, "sort-by", "", "If non-empty, sort list of resources using specified field. The field can be either 'name' or 'kind'.")
	f.BoolVar(&o.cached, "cached", false, "Use the cached list of resources if available.")
	f.StringSliceVar(&o.categories, "categories", nil, "Limit to resources that belong to the specified categories.")
	return cmd
}

// runAPIResources is APIResourceOptions.Validate and RunAPIResources: the preferred resources the filters
// keep, sorted, printed as names, a list or a table.
func (k *kubectl) runAPIResources(cmd *command, o *apiResourcesOptions, args []string) error {
	if len(args) != 0 {
		return usageErrorf(cmd, "unexpected arguments: %v", args)
	}
	switch o.output {
	case "", "wide", "name", "json", "yaml", "kyaml":
	default:
		return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", o.output, "json,kyaml,name,wide,yaml")
	}
	if o.output == "kyaml" {
		return &notSupportedError{what: "-o kyaml"}
	}
	if o.sortBy != "" && o.sortBy != "name" && o.sortBy != "kind" {
		return fmt.Errorf("--sort-by accepts only name or kind")
	}
	o.groupChanged = cmd.Flags().Changed("api-group")
	o.namespacedChanged = cmd.Flags().Changed("namespaced")
	d, err := k.discover()
	if err != nil {
		return err
	}
	var resources []metav1.APIResource
	for _, r := range preferredResources(d) {
		if o.keeps(r) {
			resources = append(resources, r)
		}
	}
	if len(resources) == 0 {
		return nil
	}
	sortAPIResources(resources, o.sortBy)
	switch o.output {
	case "name":
		k.printAPIResourceNames(resources)
		return nil
	case "json", "yaml":
		return k.printAPIResourceList(resources, o.output)
	}
	k.printAPIResourceTable(resources, o)
	return nil
}

// preferredResources is ServerPreferredResources: each group's resources in its preferred version, plus
// those only other versions serve, with Group and Version set.
func preferredResources(d *discovery) []metav1.APIResource {
	var out []metav1.APIResource
	for _, g := range d.groups {
		chosen := map[string]schema.GroupVersion{}
		order := []string{}
		byName := map[string]metav1.APIResource{}
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			for _, r := range d.resources[gv] {
				if strings.Contains(r.Name, "/") {
					continue
				}
				if _, ok := chosen[r.Name]; ok && v.Version != g.PreferredVersion.Version {
					continue
				}
				if _, ok := chosen[r.Name]; !ok {
					order = append(order, r.Name)
				}
				chosen[r.Name] = gv
				byName[r.Name] = r
			}
		}
		for _, name := range order {
			r := byName[name]
			r.Group, r.Version = chosen[name].Group, chosen[name].Version
			out = append(out, r)
		}
	}
	return out
}

// keeps reports whether the resource passes the filters: it has verbs, and the group, scope, verbs and
// categories asked for.
func (o *apiResourcesOptions) keeps(r metav1.APIResource) bool {
	switch {
	case len(r.Verbs) == 0:
		return false
	case o.groupChanged && o.apiGroup != r.Group:
		return false
	case o.namespacedChanged && o.namespaced != r.Namespaced:
		return false
	case len(o.verbs) > 0 && !sets.New(r.Verbs...).HasAll(o.verbs...):
		return false
	case len(o.categories) > 0 && !sets.New(r.Categories...).HasAll(o.categories...):
		return false
	}
	return true
}

// sortAPIResources sorts by group (or --sort-by's name or kind), then by name.
func sortAPIResources(resources []metav1.APIResource, sortBy string) {
	sort.SliceStable(resources, func(i, j int) bool {
		a, b := resources[i].Group, resources[j].Group
		switch sortBy {
		case "name":
			a, b = resources[i].Name, resources[j].Name
		case "kind":
			a, b = resources[i].Kind, resources[j].Kind
		}
		if c := strings.Compare(a, b); c != 0 {
			return c < 0
		}
		return resources[i].Name < resources[j].Name
	})
}

// printAPIResourceNames is -o name: resource.group.
func (k *kubectl) printAPIResourceNames(resources []metav1.APIResource) {
	for _, r := range resources {
		name := r.Name
		if r.Group != "" {
			name += "." + r.Group
		}
		fmt.Fprintln(&k.out, name)
	}
}

// printAPIResourceList is -o json|yaml: a v1 APIResourceList.
func (k *kubectl) printAPIResourceList(resources []metav1.APIResource, output string) error {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, APIResources: resources}
	if output == "json" {
		data, err := json.MarshalIndent(list, "", "    ")
		if err != nil {
			return err
		}
		k.out.Write(append(data, '\n'))
		return nil
	}
	data, err := yaml.Marshal(list)
	if err != nil {
		return err
	}
	k.out.Write(data)
	return nil
}

// printAPIResourceTable is the default and -o wide output.
func (k *kubectl) printAPIResourceTable(resources []metav1.APIResource, o *apiResourcesOptions) {
	var buf bytes.Buffer
	tw := newTabWriter(&buf)
	if !o.noHeaders {
		cols := []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"}
		if o.output == "wide" {
			cols = append(cols, "VERBS", "CATEGORIES")
		}
		fmt.Fprintf(tw, "%s\n", strings.Join(cols, "\t"))
	}
	for _, r := range resources {
		gv := schema.GroupVersion{Group: r.Group, Version: r.Version}
		if o.output == "wide" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%v\t%v\n", r.Name, strings.Join(r.ShortNames, ","), gv.String(), r.Namespaced, r.Kind,
				strings.Join(r.Verbs, ","), strings.Join(r.Categories, ","))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", r.Name, strings.Join(r.ShortNames, ","), gv.String(), r.Namespaced, r.Kind)
	}
	_ = tw.Flush()
	k.out.Write(buf.Bytes())
}
