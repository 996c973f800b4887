package kubectl

import (
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

type patchOptions struct {
	printFlags
	files        fileOptions
	patch        string
	patchFile    string
	patchType    string
	local        bool
	fieldManager string
	subresource  string

	// Set by completePatch.
	dry         dryRun
	contentType string
	patchBytes  []byte
}

var patchTypes = map[string]string{
	"json":      "application/json-patch+json",
	"merge":     "application/merge-patch+json",
	"strategic": "application/strategic-merge-patch+json",
}

func (k *kubectl) newPatchCommand() *command {
	o := &patchOptions{}
	cmd := &command{
		Use:   "patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE]",
		Short: "Update fields of a resource",
		RunE:  func(cmd *command, args []string) error { return k.runPatch(cmd, o, args) },
	}
	f := cmd.Flags()
	addRecordFlag(cmd)
	addPrintFlags(cmd, &o.printFlags)
	f.StringVarP(&o.patch, "patch", "p", "", "The patch to be applied to the resource JSON file.")
	f.StringVar(&o.patchFile, "patch-file", "", "A file containing a patch to be applied to the resource.")
	f.StringVar(&o.patchType, "type", "strategic", "The type of patch being provided; one of [json merge strategic]")
	addDryRunFlag(cmd)
	addFileFlags(cmd, &o.files, "identifying the resource to update")
	f.BoolVar(&o.local, "local", false, "If true, patch will operate on the content of the file, not the server-side resource.")
	addFieldManagerFlag(cmd, &o.fieldManager, "kubectl-patch")
	f.StringVar(&o.subresource, "subresource", "", "If specified, patch will operate on the subresource of the requested object.")
	return cmd
}

// runPatch is PatchOptions.Complete, Validate and RunPatch: the patch read, then sent to each object the
// builder finds.
func (k *kubectl) runPatch(cmd *command, o *patchOptions, args []string) error {
	if err := k.completePatch(cmd, o, args); err != nil {
		return err
	}
	if o.local {
		return &notSupportedError{what: "patch --local"}
	}
	b, err := k.newBuilder(args, o.files, builderOptions{})
	if err != nil {
		return err
	}
	infos, errs := b.infos(fetchNone)
	for _, it := range infos {
		if err := k.patchOne(it, o); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if len(infos) == 0 {
		return fmt.Errorf("no objects passed to patch")
	}
	return nil
}

// completePatch checks the flags and reads the patch: its content type and its JSON.
func (k *kubectl) completePatch(cmd *command, o *patchOptions, args []string) error {
	var err error
	if o.dry, err = getDryRun(cmd); err != nil {
		return err
	}
	if o.output != "" {
		if err := checkFormat(o.output, allowedFormats); err != nil {
			return err
		}
	}
	if o.patch != "" && o.patchFile != "" {
		return fmt.Errorf("cannot specify --patch and --patch-file together")
	}
	if o.patch == "" && o.patchFile == "" {
		return fmt.Errorf("must specify --patch or --patch-file containing the contents of the patch")
	}
	if o.local && len(args) != 0 {
		return fmt.Errorf("cannot specify --local and server resources")
	}
	if o.local && o.dry == dryRunServer {
		return fmt.Errorf("cannot specify --local and --dry-run=server - did you mean --dry-run=client?")
	}
	contentType, ok := patchTypes[strings.ToLower(o.patchType)]
	if o.patchType != "" && !ok {
		return fmt.Errorf("--type must be one of %v, not %q", []string{"json", "merge", "strategic"}, o.patchType)
	}
	if o.patchType == "" {
		contentType = patchTypes["strategic"]
	}
	o.contentType = contentType
	patchBytes := []byte(o.patch)
	if o.patchFile != "" {
		content, ok := k.opts.Files[o.patchFile]
		if !ok {
			return fmt.Errorf("unable to read patch file: open %s: no such file or directory", o.patchFile)
		}
		patchBytes = []byte(content)
	}
	if o.patchBytes, err = utilyaml.ToJSON(patchBytes); err != nil {
		return fmt.Errorf("unable to parse %q: %v", o.patch, err)
	}
	return nil
}

// patchOne sends the patch to one object and prints it, "(no change)" when the patch changed nothing.
func (k *kubectl) patchOne(it *info, o *patchOptions) error {
	// The builder fetches an object named on the command line (RetrieveLazy), the subresource when one is
	// named; an object read from a file is compared as it is.
	current := it.object
	if current == nil {
		var err error
		if current, err = k.fetch(it.mapping, it.namespace, it.name, o.subresource); err != nil {
			return err
		}
	}
	if o.dry == dryRunClient {
		return &notSupportedError{what: "patch --dry-run=client"}
	}
	body, err := k.client.call(request{method: "PATCH", path: it.mapping.subresourcePath(it.namespace, it.name, o.subresource),
		query: writeQuery(o.dry, o.fieldManager, ""), accept: acceptJSON,
		contentType: o.contentType, body: o.patchBytes, resource: it.mapping.gvr.GroupResource(), name: it.name})
	if err != nil {
		if apierrors.IsUnsupportedMediaType(err) {
			return fmt.Errorf("%s is not supported by %s: %w", o.contentType, it.mapping.gvk, err)
		}
		return err
	}
	patched, err := decodeObject(body)
	if err != nil {
		return err
	}
	op := "patched"
	if reflect.DeepEqual(current.Object, patched.Object) {
		op = "patched (no change)"
	}
	p := &outputPrinter{format: o.output, operation: withDryRun(op, o.dry)}
	return p.print(&k.out, patched)
}
