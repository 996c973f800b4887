package kubectl

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// The flags several commands share, defined once as kubectl's cmdutil and genericclioptions define them.
// The playground prints no flag help, but the usage texts are kubectl's, so that a definition can be checked
// against kubectl's source.

// addGlobalFlags registers kubectl's global flags. Only --namespace changes what the playground does; the
// others are accepted so that command lines copied from a terminal work.
func addGlobalFlags(f *pflag.FlagSet, namespace *string) {
	f.StringVarP(namespace, "namespace", "n", "", "If present, the namespace scope for this CLI request")
	for _, name := range []string{"kubeconfig", "cache-dir", "client-certificate", "client-key", "token", "as", "as-uid",
		"username", "password", "cluster", "user", "context", "tls-server-name", "certificate-authority",
		"proxy-url", "profile-output", "kuberc", "vmodule"} {
		f.String(name, "", "")
	}
	f.StringP("server", "s", "", "")
	f.StringArray("as-group", nil, "")
	f.Bool("insecure-skip-tls-verify", false, "")
	f.Bool("disable-compression", false, "")
	f.Bool("match-server-version", false, "")
	f.Bool("warnings-as-errors", false, "")
	f.String("request-timeout", "0", "")
	f.String("profile", "none", "")
	f.Duration("log-flush-frequency", 0, "")
	f.StringP("v", "v", "0", "")
}

// fileOptions are kubectl's -f flags (resource.FilenameOptions).
type fileOptions struct {
	filenames []string
	recursive bool
	kustomize string
}

// addFileFlags is cmdutil.AddFilenameOptionFlags; usage ends "Filename, directory, or URL to files ".
func addFileFlags(cmd *command, fo *fileOptions, usage string) {
	cmd.Flags().StringSliceVarP(&fo.filenames, "filename", "f", nil, "Filename, directory, or URL to files "+usage)
	cmd.Flags().StringVarP(&fo.kustomize, "kustomize", "k", "", "Process the kustomization directory. This flag can't be used together with -f or -R.")
	cmd.Flags().BoolVarP(&fo.recursive, "recursive", "R", false, "Process the directory used in -f, --filename recursively. Useful when you want to manage related manifests organized within the same directory.")
}

// selectorFlags are the flags that choose which objects of a type a command lists: -l, --field-selector
// and -A. The builder takes them as they are.
type selectorFlags struct {
	labelSelector string
	fieldSelector string
	allNamespaces bool
}

// printFlags are kubectl's PrintFlags: -o and the flags of the printers behind it.
type printFlags struct {
	output            string
	template          string
	showManagedFields bool
}

// addPrintFlags is PrintFlags.AddFlags.
func addPrintFlags(cmd *command, p *printFlags) {
	f := cmd.Flags()
	f.StringVarP(&p.output, "output", "o", "", "Output format.")
	f.StringVar(&p.template, "template", "", "Template string or path to template file to use when -o=go-template, -o=go-template-file.")
	f.Bool("allow-missing-template-keys", true, "If true, ignore any errors in templates when a field or map key is missing in the template.")
	f.BoolVar(&p.showManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
}

// addRecordFlag is genericclioptions.RecordFlags.AddFlags: --record, which no command here reads.
func addRecordFlag(cmd *command) {
	cmd.Flags().Bool("record", false, "Record current kubectl command in the resource annotation.")
}

// addLabelSelectorFlag is cmdutil.AddLabelSelectorFlagVar.
func addLabelSelectorFlag(cmd *command, selector *string) {
	cmd.Flags().StringVarP(selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
}

// addFieldSelectorFlag is the --field-selector flag of the commands that list.
func addFieldSelectorFlag(cmd *command, selector *string) {
	cmd.Flags().StringVar(selector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.")
}

// addAllNamespacesFlag is the -A flag of the commands that list.
func addAllNamespacesFlag(cmd *command, allNamespaces *bool) {
	cmd.Flags().BoolVarP(allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
}

// addChunkSizeFlag is cmdutil.AddChunkSizeFlag.
func addChunkSizeFlag(cmd *command, chunkSize *int64) {
	cmd.Flags().Int64Var(chunkSize, "chunk-size", 500, "Return large lists in chunks rather than all at once. Pass 0 to disable.")
}

// addFieldManagerFlag is cmdutil.AddFieldManagerFlagVar with the command's default manager.
func addFieldManagerFlag(cmd *command, fieldManager *string, defaultManager string) {
	cmd.Flags().StringVar(fieldManager, "field-manager", defaultManager, "Name of the manager used to track field ownership.")
}

// checkAllAndSelectors is the check of --all against -l and --field-selector that the commands taking all
// three make.
func checkAllAndSelectors(all bool, labelSelector, fieldSelector string) error {
	if all && labelSelector != "" {
		return fmt.Errorf("cannot set --all and --selector at the same time")
	}
	if all && fieldSelector != "" {
		return fmt.Errorf("cannot set --all and --field-selector at the same time")
	}
	return nil
}

// dryRun is kubectl's DryRunStrategy.
type dryRun int

const (
	dryRunNone dryRun = iota
	dryRunClient
	dryRunServer
)

// addDryRunFlag is cmdutil.AddDryRunFlag: --dry-run alone means client.
func addDryRunFlag(cmd *command) {
	cmd.Flags().String("dry-run", "none", `Must be "none", "server", or "client".`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "unchanged"
}

// getDryRun is cmdutil.GetDryRunStrategy, the old boolean values included.
func getDryRun(cmd *command) (dryRun, error) {
	v, _ := cmd.Flags().GetString("dry-run")
	if b, err := strconv.ParseBool(v); err == nil {
		if b {
			return dryRunClient, nil
		}
		return dryRunNone, nil
	}
	switch v {
	case "unchanged", "client":
		return dryRunClient, nil
	case "server":
		return dryRunServer, nil
	case "none":
		return dryRunNone, nil
	}
	return dryRunNone, fmt.Errorf(`Invalid dry-run value (%v). Must be "none", "server", or "client".`, v)
}

// addValidateFlag is cmdutil.AddValidateFlags: --validate alone means strict.
func addValidateFlag(cmd *command) {
	cmd.Flags().String("validate", "strict", `Must be one of: strict (or true), warn, ignore (or false).`)
	cmd.Flags().Lookup("validate").NoOptDefVal = "strict"
}

// getValidationDirective is cmdutil.GetValidationDirective: the fieldValidation query value of --validate.
func getValidationDirective(cmd *command) (string, error) {
	v, _ := cmd.Flags().GetString("validate")
	if b, err := strconv.ParseBool(v); err == nil {
		if b {
			return "Strict", nil
		}
		return "Ignore", nil
	}
	switch v {
	case "strict":
		return "Strict", nil
	case "warn":
		return "Warn", nil
	case "ignore":
		return "Ignore", nil
	}
	return "Strict", fmt.Errorf(`invalid - validate option %q; must be one of: strict (or true), warn, ignore (or false)`, v)
}
