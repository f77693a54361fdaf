package parity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
)

// pollInterval is how often waits and settles look again.
const pollInterval = 250 * time.Millisecond

// Kinds of wait conditions.
const (
	forExists    = "exists"
	forDeleted   = "deleted"
	forRecreated = "recreated"
	forCount     = "count"
	forCondition = "condition"
	forJSONPath  = "jsonpath"
)

// condition is a parsed WaitStep.For.
type condition struct {
	kind string
	// count
	n int
	// condition
	condType, condStatus string
	// jsonpath: op is "present", "=" or "!="
	template, op, value string
}

func parseCondition(w *WaitStep) (*condition, error) {
	if w.Kind == "" {
		return nil, errors.New("wait: kind is required")
	}
	f := strings.TrimSpace(w.For)
	c := &condition{}
	switch {
	case f == "" || f == forExists:
		c.kind = forExists
	case f == forDeleted:
		c.kind = forDeleted
	case f == forRecreated:
		c.kind = forRecreated
	case strings.HasPrefix(f, forCount+"="):
		c.kind = forCount
		n, err := strconv.Atoi(strings.TrimPrefix(f, forCount+"="))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("wait: %q: count wants a number", f)
		}
		c.n = n
	case strings.HasPrefix(f, forCondition+"="):
		c.kind = forCondition
		c.condType, c.condStatus, _ = strings.Cut(strings.TrimPrefix(f, forCondition+"="), "=")
		if c.condStatus == "" {
			c.condStatus = "True"
		}
		if c.condType == "" {
			return nil, fmt.Errorf("wait: %q: condition wants a type", f)
		}
	case strings.HasPrefix(f, forJSONPath+"="):
		c.kind = forJSONPath
		var err error
		if c.template, c.op, c.value, err = splitJSONPath(strings.TrimPrefix(f, forJSONPath+"=")); err != nil {
			return nil, fmt.Errorf("wait: %q: %w", f, err)
		}
		if _, err := newJSONPath(c.template); err != nil {
			return nil, fmt.Errorf("wait: %q: %w", f, err)
		}
	default:
		return nil, fmt.Errorf("wait: for %q: want exists, deleted, recreated, count=N, condition=T[=S] or jsonpath={…}[=v|!=v]", f)
	}
	if (c.kind == forCount) != (w.Name == "") {
		if c.kind == forCount {
			return nil, errors.New("wait: count=N takes a selector, not a name")
		}
		return nil, fmt.Errorf("wait: %s needs a name", c.kind)
	}
	return c, nil
}

// splitJSONPath splits "{.a.b}=v" into the template, the operator and v.
// The template ends at the brace closing its first one.
func splitJSONPath(s string) (template, op, value string, err error) {
	if !strings.HasPrefix(s, "{") {
		return "", "", "", errors.New("jsonpath template must start with {")
	}
	depth := 0
	for i, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
		}
		if depth == 0 {
			template, rest := s[:i+1], s[i+1:]
			switch {
			case rest == "":
				return template, "present", "", nil
			case strings.HasPrefix(rest, "!="):
				return template, "!=", rest[2:], nil
			case strings.HasPrefix(rest, "="):
				return template, "=", rest[1:], nil
			}
			return "", "", "", fmt.Errorf("after the template, want =value or !=value, got %q", rest)
		}
	}
	return "", "", "", errors.New("unbalanced braces in jsonpath template")
}

func newJSONPath(template string) (*jsonpath.JSONPath, error) {
	jp := jsonpath.New("wait").AllowMissingKeys(true)
	if err := jp.Parse(template); err != nil {
		return nil, err
	}
	return jp, nil
}

// check evaluates the condition once; state describes what was seen, for
// the timeout message.
func (r *stepRunner) check(ctx context.Context, w *WaitStep, c *condition) (ok bool, state string, err error) {
	ri, _, err := r.kinds.resource(w.APIVersion, w.Kind, w.Namespace)
	if err != nil {
		return false, "", err
	}
	if c.kind == forCount {
		l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: w.Selector, FieldSelector: w.FieldSelector})
		if err != nil {
			return false, "", err
		}
		n := 0
		for i := range l.Items {
			if l.Items[i].GetDeletionTimestamp() == nil {
				n++
			}
		}
		return n == c.n, fmt.Sprintf("%d objects", n), nil
	}
	obj, err := ri.Get(ctx, w.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return c.kind == forDeleted, "not found", nil
	}
	if err != nil {
		return false, "", err
	}
	switch c.kind {
	case forExists:
		return true, "", nil
	case forDeleted:
		return false, "exists", nil
	case forRecreated:
		old, ok := r.deleted[refKey(w.Ref)]
		if !ok {
			return false, "", fmt.Errorf("no earlier delete step for %s", w.Ref)
		}
		return obj.GetUID() != old, "uid unchanged", nil
	case forCondition:
		s := conditionStatus(obj, c.condType)
		return s == c.condStatus, fmt.Sprintf("condition %s is %q", c.condType, s), nil
	case forJSONPath:
		got, err := renderJSONPath(c.template, obj)
		if err != nil {
			return false, "", err
		}
		switch c.op {
		case "present":
			return got != "", fmt.Sprintf("%s is empty", c.template), nil
		case "=":
			return got == c.value, fmt.Sprintf("%s is %q", c.template, got), nil
		default:
			return got != c.value, fmt.Sprintf("%s is %q", c.template, got), nil
		}
	}
	return false, "", fmt.Errorf("unknown condition %q", c.kind)
}

func conditionStatus(obj *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

func renderJSONPath(template string, obj *unstructured.Unstructured) (string, error) {
	jp, err := newJSONPath(template)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := jp.Execute(&buf, obj.Object); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// poll calls f until it reports done, timeout passes or ctx ends.
func poll(ctx context.Context, timeout time.Duration, f func(ctx context.Context) (done bool, state string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last string
	var lastErr error
	for {
		done, state, err := f(ctx)
		if done {
			return nil
		}
		switch {
		case err == nil:
			last, lastErr = state, nil
		case ctx.Err() == nil: // not the deadline cutting a call short
			last, lastErr = "", err
		}
		select {
		case <-ctx.Done():
			switch {
			case lastErr != nil:
				return fmt.Errorf("timed out after %s: %w", timeout, lastErr)
			case last != "":
				return fmt.Errorf("timed out after %s: %s", timeout, last)
			}
			return fmt.Errorf("timed out after %s", timeout)
		case <-tick.C:
		}
	}
}
