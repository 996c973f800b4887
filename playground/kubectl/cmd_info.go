package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/yaml"
)

// clientVersion is what the emulated kubectl reports about itself: kubectl v1.37.2 as the oracle's build of
// it reports (go1.26.8 on linux/amd64, unstamped commit and build date).
var clientVersion = version.Info{
	Major:        "1",
	Minor:        "37",
	GitVersion:   "v1.37.2",
	GitCommit:    "$Format:%H$",
	GitTreeState: "clean",
	BuildDate:    "1970-01-01T00:00:00Z",
	GoVersion:    "go1.26.8",
	Compiler:     "gc",
	Platform:     "linux/amd64",
}

const kustomizeVersion = "v5.8.1"

func (k *kubectl) newVersionCommand() *command {
	var clientOnly bool
	var output string
	cmd := &command{
		Use:   "version",
		Short: "Print the client and server version information",
		RunE: func(cmd *command, args []string) error {
			if len(args) != 0 {
				return fmt.Errorf("extra arguments: %v", args)
			}
			if output != "" && output != "yaml" && output != "json" {
				return fmt.Errorf("--output must be 'yaml' or 'json'")
			}
			type versions struct {
				ClientVersion    *version.Info `json:"clientVersion,omitempty"`
				KustomizeVersion string        `json:"kustomizeVersion,omitempty"`
				ServerVersion    *version.Info `json:"serverVersion,omitempty"`
			}
			cv := clientVersion
			v := versions{ClientVersion: &cv, KustomizeVersion: kustomizeVersion}
			var serverErr error
			if !clientOnly {
				body, err := k.client.call(request{method: "GET", path: "/version", query: timeoutQuery(), accept: acceptAny})
				if err == nil {
					var sv version.Info
					if err = json.Unmarshal(body, &sv); err == nil {
						v.ServerVersion = &sv
					}
				}
				serverErr = err
			}
			switch output {
			case "":
				fmt.Fprintf(&k.out, "Client Version: %s\n", v.ClientVersion.GitVersion)
				fmt.Fprintf(&k.out, "Kustomize Version: %s\n", v.KustomizeVersion)
				if v.ServerVersion != nil {
					fmt.Fprintf(&k.out, "Server Version: %s\n", v.ServerVersion.GitVersion)
				}
			case "yaml":
				data, err := yaml.Marshal(&v)
				if err != nil {
					return err
				}
				fmt.Fprintln(&k.out, string(data))
			case "json":
				data, err := json.MarshalIndent(&v, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(&k.out, string(data))
			}
			if v.ServerVersion != nil {
				if msg := versionSkewWarning(v.ServerVersion); msg != "" {
					fmt.Fprintf(&k.errOut, "Warning: %s\n", msg)
				}
			}
			return serverErr
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&output, "output", "o", "", "One of 'yaml' or 'json'.")
	return cmd
}

// versionSkewWarning is kubectl's warning when the server is more than one minor version away.
func versionSkewWarning(server *version.Info) string {
	var sMajor, sMinor int
	if _, err := fmt.Sscanf(server.Major+"."+strings.TrimSuffix(server.Minor, "+"), "%d.%d", &sMajor, &sMinor); err != nil {
		return ""
	}
	if sMajor != 1 {
		return ""
	}
	if d := sMinor - 37; d > 1 || d < -1 {
		return fmt.Sprintf("version difference between client (1.37) and server (%d.%d) exceeds the supported minor version skew of +/-1", sMajor, sMinor)
	}
	return ""
}

func (k *kubectl) newAPIVersionsCommand() *command {
	return &command{
		Use:   "api-versions",
		Short: `Print the supported API versions on the server, in the form of "group/version"`,
		RunE: func(cmd *command, args []string) error {
			if len(args) != 0 {
				return usageErrorf(cmd, "unexpected arguments: %v", args)
			}
			d, err := k.discover()
			if err != nil {
				return fmt.Errorf("couldn't get available api versions from server: %v", err)
			}
			var versions []string
			for _, g := range d.groups {
				for _, v := range g.Versions {
					versions = append(versions, v.GroupVersion)
				}
			}
			sort.Strings(versions)
			for _, v := range versions {
				fmt.Fprintln(&k.out, v)
			}
			return nil
		},
	}
}

type apiResourcesOptions struct {
	output     string
	noHeaders  bool
	apiGroup   string
	namespaced bool
	verbs      []string
	sortBy     string
	cached     bool
	categories []string
}

func (k *kubectl) newAPIResourcesCommand() *command {
	o := &apiResourcesOptions{namespaced: true}
	cmd := &command{
		Use:   "api-resources",
		Short: "Print the supported API resources on the server",
		RunE: func(cmd *command, args []string) error {
			return k.runAPIResources(cmd, o, args)
		},
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
	groupChanged := cmd.Flags().Changed("api-group")
	nsChanged := cmd.Flags().Changed("namespaced")
	d, err := k.discover()
	if err != nil {
		return err
	}
	// ServerPreferredResources: each group's resources in its preferred version, plus those only other versions
	// serve.
	var flat []metav1.APIResource
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
			gv := chosen[name]
			if len(r.Verbs) == 0 {
				continue
			}
			if groupChanged && o.apiGroup != gv.Group {
				continue
			}
			if nsChanged && o.namespaced != r.Namespaced {
				continue
			}
			if len(o.verbs) > 0 && !containsAll(r.Verbs, o.verbs) {
				continue
			}
			if len(o.categories) > 0 && !containsAll(r.Categories, o.categories) {
				continue
			}
			r.Group = gv.Group
			r.Version = gv.Version
			flat = append(flat, r)
		}
	}
	if len(flat) == 0 {
		return nil
	}
	sort.SliceStable(flat, func(i, j int) bool {
		a, b := flat[i].Group, flat[j].Group
		switch o.sortBy {
		case "name":
			a, b = flat[i].Name, flat[j].Name
		case "kind":
			a, b = flat[i].Kind, flat[j].Kind
		}
		if c := strings.Compare(a, b); c != 0 {
			return c < 0
		}
		return flat[i].Name < flat[j].Name
	})
	switch o.output {
	case "name":
		for _, r := range flat {
			name := r.Name
			if r.Group != "" {
				name += "." + r.Group
			}
			fmt.Fprintln(&k.out, name)
		}
		return nil
	case "json", "yaml":
		list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, APIResources: flat}
		if o.output == "json" {
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
	var buf bytes.Buffer
	tw := newTabWriter(&buf)
	if !o.noHeaders {
		cols := []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"}
		if o.output == "wide" {
			cols = append(cols, "VERBS", "CATEGORIES")
		}
		fmt.Fprintf(tw, "%s\n", strings.Join(cols, "\t"))
	}
	var errs []error
	for _, r := range flat {
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
	return utilerrors.NewAggregate(errs)
}

func containsAll(have, want []string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}
