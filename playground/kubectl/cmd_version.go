package kubectl

import (
	"encoding/json"
	"fmt"
	"strings"

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

type versionOptions struct {
	clientOnly bool
	output     string
}

// versions is what kubectl version prints, in its JSON and YAML form.
type versions struct {
	ClientVersion    *version.Info `json:"clientVersion,omitempty"`
	KustomizeVersion string        `json:"kustomizeVersion,omitempty"`
	ServerVersion    *version.Info `json:"serverVersion,omitempty"`
}

func (k *kubectl) newVersionCommand() *command {
	o := &versionOptions{}
	cmd := &command{
		Use:   "version",
		Short: "Print the client and server version information",
		RunE:  func(cmd *command, args []string) error { return k.runVersion(o, args) },
	}
	cmd.Flags().BoolVar(&o.clientOnly, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "One of 'yaml' or 'json'.")
	return cmd
}

// runVersion prints the versions, the server's unless --client; a server that does not answer is reported
// after what could be printed.
func (k *kubectl) runVersion(o *versionOptions, args []string) error {
	if len(args) != 0 {
		return fmt.Errorf("extra arguments: %v", args)
	}
	if o.output != "" && o.output != "yaml" && o.output != "json" {
		return fmt.Errorf("--output must be 'yaml' or 'json'")
	}
	cv := clientVersion
	v := versions{ClientVersion: &cv, KustomizeVersion: kustomizeVersion}
	var serverErr error
	if !o.clientOnly {
		v.ServerVersion, serverErr = k.serverVersion()
	}
	if err := k.printVersions(v, o.output); err != nil {
		return err
	}
	if v.ServerVersion != nil {
		if msg := versionSkewWarning(v.ServerVersion); msg != "" {
			fmt.Fprintf(&k.errOut, "Warning: %s\n", msg)
		}
	}
	return serverErr
}

// serverVersion asks the server for /version.
func (k *kubectl) serverVersion() (*version.Info, error) {
	body, err := k.client.call(request{method: "GET", path: "/version", query: timeoutQuery(), accept: acceptAny})
	if err != nil {
		return nil, err
	}
	var sv version.Info
	if err := json.Unmarshal(body, &sv); err != nil {
		return nil, err
	}
	return &sv, nil
}

func (k *kubectl) printVersions(v versions, output string) error {
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
	return nil
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
