package kubectl

import (
	"fmt"
	"sort"
)

func (k *kubectl) newAPIVersionsCommand() *command {
	return &command{
		Use:   "api-versions",
		Short: `Print the supported API versions on the server, in the form of "group/version"`,
		RunE:  k.runAPIVersions,
	}
}

// runAPIVersions prints every group version discovery lists, sorted.
func (k *kubectl) runAPIVersions(cmd *command, args []string) error {
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
}
