package kubectl

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// errorMessage is the text kubectl's cmdutil.CheckErr prints for err.
func (k *kubectl) errorMessage(err error) string {
	if agg, ok := err.(utilerrors.Aggregate); ok && len(agg.Errors()) == 1 {
		err = agg.Errors()[0]
	}
	if err == nil {
		return ""
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) && se == err && se.ErrStatus.Reason == metav1.StatusReasonInvalid {
		status := se.ErrStatus
		details := status.Details
		s := "The request is invalid"
		if details == nil {
			if len(status.Message) > 0 {
				s += ": " + status.Message
			}
			return s
		}
		if len(details.Kind) != 0 || len(details.Name) != 0 {
			s = fmt.Sprintf("The %s %q is invalid", details.Kind, details.Name)
		} else if len(status.Message) > 0 && len(details.Causes) == 0 {
			s += ": " + status.Message
		}
		if len(details.Causes) > 0 {
			return multilineError(s+": ", causesToErrors(details.Causes))
		}
		return s
	}
	switch e := err.(type) {
	case *noResourceMatchError:
		return e.Error()
	case utilerrors.Aggregate:
		return multipleErrors("", e.Errors())
	case *notSupportedError:
		return "error: " + e.Error()
	}
	msg, ok := standardErrorMessage(err)
	if !ok {
		msg = err.Error()
		if !strings.HasPrefix(msg, "error: ") {
			msg = "error: " + msg
		}
	}
	return msg
}

// standardErrorMessage is cmdutil.StandardErrorMessage for the errors the playground can meet.
func standardErrorMessage(err error) (string, bool) {
	if status, ok := err.(apierrors.APIStatus); ok {
		s := status.Status()
		switch {
		case s.Reason == metav1.StatusReasonUnauthorized:
			return fmt.Sprintf("error: You must be logged in to the server (%s)", s.Message), true
		case len(s.Reason) > 0:
			return fmt.Sprintf("Error from server (%s): %s", s.Reason, err.Error()), true
		default:
			return fmt.Sprintf("Error from server: %s", err.Error()), true
		}
	}
	if apierrors.IsUnexpectedObjectError(err) {
		return fmt.Sprintf("Server returned an unexpected response: %s", err.Error()), true
	}
	return "", false
}

func causesToErrors(causes []metav1.StatusCause) []error {
	var errs []error
	seen := map[string]bool{}
	for _, c := range causes {
		msg := fmt.Sprintf("%s: %s", c.Field, c.Message)
		if seen[msg] {
			continue
		}
		seen[msg] = true
		errs = append(errs, errors.New(msg))
	}
	return errs
}

// multilineError is cmdutil.MultilineError over an aggregate of errs.
func multilineError(prefix string, errs []error) string {
	flat := utilerrors.Flatten(utilerrors.NewAggregate(errs))
	var list []error
	if flat != nil {
		list = flat.Errors()
	}
	switch len(list) {
	case 0:
		return fmt.Sprintf("%s%v\n", prefix, utilerrors.NewAggregate(errs))
	case 1:
		return fmt.Sprintf("%s%v\n", prefix, messageForError(list[0]))
	}
	var buf bytes.Buffer
	fmt.Fprintln(&buf, prefix)
	for _, e := range list {
		fmt.Fprintf(&buf, "* %v\n", messageForError(e))
	}
	return buf.String()
}

func multipleErrors(prefix string, errs []error) string {
	var buf bytes.Buffer
	for _, e := range errs {
		fmt.Fprintf(&buf, "%s%v\n", prefix, messageForError(e))
	}
	return buf.String()
}

func messageForError(err error) string {
	if msg, ok := standardErrorMessage(err); ok {
		return msg
	}
	return err.Error()
}

// addSourceToErr is cmdutil.AddSourceToErr: which file the failing object came from.
func addSourceToErr(verb, source string, err error) error {
	if source == "" {
		return err
	}
	if se, ok := err.(apierrors.APIStatus); ok {
		status := se.Status()
		status.Message = fmt.Sprintf("error when %s %q: %v", verb, source, status.Message)
		return &apierrors.StatusError{ErrStatus: status}
	}
	return fmt.Errorf("error when %s %q: %v", verb, source, err)
}

// enhanceListError is resource.EnhanceListError: which list failed, and with which selectors.
func enhanceListError(err error, o builderOptions, subj string) error {
	if apierrors.IsResourceExpired(err) {
		return err
	}
	if apierrors.IsBadRequest(err) || apierrors.IsNotFound(err) {
		if se, ok := err.(*apierrors.StatusError); ok {
			if o.labelSelector == "" && o.fieldSelector == "" {
				se.ErrStatus.Message = fmt.Sprintf("Unable to list %q: %v", subj, se.ErrStatus.Message)
			} else {
				se.ErrStatus.Message = fmt.Sprintf("Unable to find %q that match label selector %q, field selector %q: %v", subj, o.labelSelector, o.fieldSelector, se.ErrStatus.Message)
			}
			return se
		}
		if o.labelSelector == "" && o.fieldSelector == "" {
			return fmt.Errorf("Unable to list %q: %v", subj, err)
		}
		return fmt.Errorf("Unable to find %q that match label selector %q, field selector %q: %v", subj, o.labelSelector, o.fieldSelector, err)
	}
	return err
}

// noResourceMatchError is meta.NoResourceMatchError as kubectl's CheckErr prints it.
type noResourceMatchError struct{ resource string }

func (e *noResourceMatchError) Error() string {
	return fmt.Sprintf("the server doesn't have a resource type %q", e.resource)
}

// flagErrorFunc is kubectl's: the pflag error and where to find usage.
func flagErrorFunc(c *command, err error) error {
	if errors.Is(err, pflag.ErrHelp) {
		return &helpError{cmd: c}
	}
	return fmt.Errorf("%s\nSee '%s --help' for usage.", err, c.CommandPath())
}

// usageErrorf is cmdutil.UsageErrorf.
func usageErrorf(cmd *command, format string, args ...interface{}) error {
	return fmt.Errorf("%s\nSee '%s -h' for help and examples", fmt.Sprintf(format, args...), cmd.CommandPath())
}

// withoutNotFound drops the NotFound errors: what --ignore-not-found forgives.
func withoutNotFound(errs []error) []error {
	var kept []error
	for _, e := range errs {
		if !apierrors.IsNotFound(e) {
			kept = append(kept, e)
		}
	}
	return kept
}
