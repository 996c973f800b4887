package kubectl

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

type explainOptions struct {
	recursive  bool
	apiVersion string
	output     string
	maxDepth   int
}

func (k *kubectl) newExplainCommand() *command {
	o := &explainOptions{output: "plaintext"}
	cmd := &command{
		Use:   "explain TYPE [--recursive=FALSE|TRUE] [--api-version=api-version-group] [-o|--output=plaintext|plaintext-openapiv2]",
		Short: "Get documentation for a resource",
		RunE:  func(cmd *command, args []string) error { return k.runExplain(o, args) },
	}
	f := cmd.Flags()
	f.BoolVarP(&o.recursive, "recursive", "R", false, "Print the fields of fields. Use --max-depth to cap the recursion depth.")
	f.StringVar(&o.apiVersion, "api-version", "", "Get different explanations for particular API version (API group/version)")
	f.StringVarP(&o.output, "output", "o", "plaintext", "Format in which to render the schema (plaintext, plaintext-openapiv2)")
	f.IntVar(&o.maxDepth, "max-depth", 0, "Maximum recursion depth when printing nested fields with --recursive. 0 means no limit.")
	return cmd
}

// explainError is the error explain's template throws; kubectl prints it as it is.
type explainError string

func (e explainError) Error() string { return string(e) }

// runExplain is ExplainOptions.Validate and Run: the resource and field path the argument names, the
// OpenAPI v3 document of its group version, and explain's plaintext template over it.
func (k *kubectl) runExplain(o *explainOptions, args []string) error {
	if err := o.validate(args); err != nil {
		return err
	}
	gvr, fieldsPath, err := k.explainTarget(args[0], o.apiVersion == "")
	if err != nil {
		return err
	}
	switch o.output {
	case "plaintext":
	case "plaintext-openapiv2":
		return &notSupportedError{what: "explain -o plaintext-openapiv2"}
	default:
		return fmt.Errorf("unrecognized format: %s", o.output)
	}
	doc, gvr, err := k.explainSchema(gvr, o.apiVersion)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	err = renderExplain(&buf, doc, gvr, fieldsPath, o.recursive, o.maxDepth)
	// Like a template, the renderer has written what it had before an error.
	k.out.Write(buf.Bytes())
	return err
}

// validate is ExplainOptions.Validate.
func (o *explainOptions) validate(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("You must specify the type of resource to explain. %s\n", suggestAPIResources)
	}
	if len(args) > 1 {
		return fmt.Errorf("We accept only this format: explain RESOURCE\n")
	}
	if o.maxDepth > 0 && !o.recursive {
		return fmt.Errorf("--max-depth requires --recursive")
	}
	if o.maxDepth < 0 {
		return fmt.Errorf("--max-depth must be non-negative")
	}
	return nil
}

// explainTarget resolves explain's argument into the resource it starts with and the field path after it.
// With matchGroup (no --api-version), a resource.group prefix of the argument names the group
// (SplitAndParseResourceRequestWithMatchingPrefix): "crontabs.stable.example.com.spec".
func (k *kubectl) explainTarget(arg string, matchGroup bool) (schema.GroupVersionResource, []string, error) {
	fields, err := explainPath(arg)
	if err != nil {
		return schema.GroupVersionResource{}, nil, err
	}
	d, err := k.discover()
	if err != nil {
		return schema.GroupVersionResource{}, nil, err
	}
	cands := d.resourcesFor(schema.GroupVersionResource{Resource: fields[0]})
	if len(cands) == 0 {
		// The RESTMapper's NoResourceMatchError, which kubectl prints without "error: ".
		return schema.GroupVersionResource{}, nil, &noResourceMatchError{resource: fields[0]}
	}
	if matchGroup {
		for _, c := range cands {
			gvr := c.gv.WithResource(c.res.Name)
			gr := gvr.GroupResource().String()
			if !strings.HasPrefix(arg, gr) {
				continue
			}
			if arg == gr {
				return gvr, nil, nil
			}
			sub, err := explainPath(arg[len(gr):])
			return gvr, sub, err
		}
	}
	return cands[0].gv.WithResource(cands[0].res.Name), fields[1:], nil
}

// explainSchema fetches the OpenAPI v3 document of gvr's group version, or of --api-version's; it returns
// the document and the resource it explains.
func (k *kubectl) explainSchema(gvr schema.GroupVersionResource, apiVersion string) (map[string]interface{}, schema.GroupVersionResource, error) {
	oa := k.openAPI()
	if _, err := oa.Paths(); err != nil {
		return nil, gvr, &notSupportedError{what: "explain against a server without /openapi/v3"}
	}
	if apiVersion != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, gvr, err
		}
		gvr.Group, gvr.Version = gv.Group, gv.Version
	}
	doc, found, err := oa.Schema(gvr.GroupVersion())
	if err != nil {
		return nil, gvr, err
	}
	if !found {
		return nil, gvr, fmt.Errorf("couldn't find resource for \"%v\"", gvr)
	}
	return doc, gvr, nil
}

// explainPath splits "crontab.spec.cronSpec" into its field names, as kubectl's JSONPath parse of
// "{.crontab.spec.cronSpec}" does for plain field names.
func explainPath(in string) ([]string, error) {
	in = strings.TrimPrefix(in, ".")
	parts := strings.Split(in, ".")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("invalid jsonpath syntax, all nodes must be field nodes")
		}
		for _, r := range p {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '/') {
				return nil, fmt.Errorf("invalid jsonpath syntax, all nodes must be field nodes")
			}
		}
	}
	return parts, nil
}
