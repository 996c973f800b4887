package kubectl

import (
	"fmt"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// createOptions are the options of kubectl create, and of kubectl replace, which has a subset of them.
type createOptions struct {
	printFlags
	files        fileOptions
	selector     string
	fieldManager string
	saveConfig   bool
	raw          string
	edit         bool
}

func (k *kubectl) newCreateCommand() *command {
	o := &createOptions{}
	cmd := &command{
		Use:   "create -f FILENAME",
		Short: "Create a resource from a file or from stdin",
		RunE:  func(cmd *command, args []string) error { return k.runCreate(cmd, o, args) },
	}
	f := cmd.Flags()
	addPrintFlags(cmd, &o.printFlags)
	addFileFlags(cmd, &o.files, "to use to create the resource")
	addLabelSelectorFlag(cmd, &o.selector)
	f.BoolVar(&o.edit, "edit", false, "Edit the API resource before creating")
	f.Bool("windows-line-endings", false, "Only relevant if --edit=true.")
	f.StringVar(&o.raw, "raw", "", "Raw URI to POST to the server.")
	f.BoolVar(&o.saveConfig, "save-config", false, "If true, the configuration of current object will be saved in its annotation.")
	addFieldManagerFlag(cmd, &o.fieldManager, "kubectl-create")
	f.Bool("record", false, "Record current kubectl command in the resource annotation.")
	addDryRunFlag(cmd)
	addValidateFlag(cmd)
	return cmd
}

// runCreate is kubectl create -f: POST each object of the files.
func (k *kubectl) runCreate(cmd *command, o *createOptions, args []string) error {
	if len(args) > 0 && createSubcommands[args[0]] {
		return &notSupportedError{what: "kubectl create " + args[0]}
	}
	if len(args) > 0 {
		return usageErrorf(cmd, "Unexpected args: %v", args)
	}
	if len(o.files.filenames) == 0 && o.files.kustomize == "" {
		fmt.Fprintf(&k.errOut, "Error: must specify one of -f and -k\n\n")
		// kubectl prints create's help here; the playground does not reproduce kubectl's help texts.
		fmt.Fprintf(&k.errOut, "%s\n", helpNote)
		return &exitError{code: 1}
	}
	if o.raw != "" || o.edit {
		return &notSupportedError{what: "create --raw/--edit"}
	}
	dry, err := getDryRun(cmd)
	if err != nil {
		return err
	}
	directive, err := getValidationDirective(cmd)
	if err != nil {
		return err
	}
	if err := checkFileOptions(o.files); err != nil {
		return err
	}
	if o.output != "" {
		if err := checkFormat(o.output, allowedFormats); err != nil {
			return err
		}
	}
	b, err := k.newBuilder(nil, o.files, builderOptions{labelSelector: o.selector, validate: k.validator(directive)})
	if err != nil {
		return err
	}
	infos, errs := b.infos(fetchNone)
	p := &outputPrinter{format: o.output, showManagedFields: o.showManagedFields, operation: withDryRun("created", dry)}
	for _, it := range infos {
		if err := k.createOne(it, o, dry, directive, p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if len(infos) == 0 {
		return fmt.Errorf("no objects passed to create")
	}
	return nil
}

// createOne creates one object (not with --dry-run=client) and prints it.
func (k *kubectl) createOne(it *info, o *createOptions, dry dryRun, directive string, p *outputPrinter) error {
	if o.saveConfig {
		if err := createApplyAnnotation(it.object); err != nil {
			return err
		}
	}
	if dry != dryRunClient {
		obj, err := k.create(it, o.fieldManager, directive, dry)
		if err != nil {
			return addSourceToErr("creating", it.source, err)
		}
		it.object = obj
	}
	return p.print(&k.out, it.object)
}

// createSubcommands are kubectl create's generators (and their aliases), which the playground does not run.
var createSubcommands = map[string]bool{
	"clusterrole": true, "clusterrolebinding": true, "configmap": true, "cm": true, "cronjob": true, "cj": true,
	"deployment": true, "deploy": true, "ingress": true, "ing": true, "job": true, "namespace": true, "ns": true,
	"poddisruptionbudget": true, "pdb": true, "priorityclass": true, "pc": true, "quota": true,
	"resourcequota": true, "role": true, "rolebinding": true, "secret": true, "service": true, "svc": true,
	"serviceaccount": true, "sa": true, "token": true,
}
