package parity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Defaults for a scenario's optional durations.
const (
	DefaultScenarioTimeout = 5 * time.Minute
	DefaultWaitTimeout     = 60 * time.Second
	DefaultSettleQuiet     = 3 * time.Second
	DefaultSettleTimeout   = 60 * time.Second
)

// Scenario is one parity scenario, as read from a YAML file. See the package
// documentation for the format.
type Scenario struct {
	Name                  string        `json:"name,omitempty"`
	Description           string        `json:"description,omitempty"`
	Quick                 bool          `json:"quick,omitempty"`
	Requires              []string      `json:"requires,omitempty"`
	Nodes                 int           `json:"nodes,omitempty"`
	ControllerManagerArgs []string      `json:"controllerManagerArgs,omitempty"`
	APIServerArgs         []string      `json:"apiServerArgs,omitempty"`
	DualStack             bool          `json:"dualStack,omitempty"`
	MetricsAPI            bool          `json:"metricsAPI,omitempty"`
	MetricFamilies        bool          `json:"metricFamilies,omitempty"`
	Cloud                 *Cloud        `json:"cloud,omitempty"`
	Objects               Objects       `json:"objects,omitempty"`
	Steps                 []Step        `json:"steps,omitempty"`
	Settle                *Settle       `json:"settle,omitempty"`
	Capture               []CaptureSpec `json:"capture"`
	Ignore                []string      `json:"ignore,omitempty"`
	Timeout               Duration      `json:"timeout,omitempty"`

	// Path is the file the scenario was read from.
	Path string `json:"-"`
}

// Ref names an object, or with an empty Name a set of objects.
type Ref struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
}

func (r Ref) String() string {
	s := r.Kind
	if r.Namespace != "" {
		s += " " + r.Namespace + "/" + r.Name
	} else {
		s += " " + r.Name
	}
	return strings.TrimSpace(s)
}

// Step is one action; exactly one field is set.
type Step struct {
	Apply  Objects   `json:"apply,omitempty"`
	Create Objects   `json:"create,omitempty"`
	As     *Identity `json:"as,omitempty"`
	// Times creates the create step's objects that many times (each then
	// needs a generateName): floods of objects without a file of them.
	Times             int           `json:"times,omitempty"`
	Patch             *PatchStep    `json:"patch,omitempty"`
	Scale             *ScaleStep    `json:"scale,omitempty"`
	SetImage          *SetImageStep `json:"setImage,omitempty"`
	Delete            *DeleteStep   `json:"delete,omitempty"`
	Wait              *WaitStep     `json:"wait,omitempty"`
	ControllerManager string        `json:"controllerManager,omitempty"`
	// CloudControllerManager is stop, start or restart of the scenario's
	// cloud-controller-manager (cloud).
	CloudControllerManager string       `json:"cloudControllerManager,omitempty"`
	Nodes                  *int         `json:"nodes,omitempty"`
	Evict                  *EvictStep   `json:"evict,omitempty"`
	Settle                 *Settle      `json:"settle,omitempty"`
	Metrics                *MetricsStep `json:"metrics,omitempty"`
}

// PatchStep patches an object (type merge by default), or with Selector
// and/or FieldSelector instead of a name every object of the kind in the
// namespace they select (at least one).
type PatchStep struct {
	Ref           `json:",inline"`
	Selector      string `json:"selector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	Type          string `json:"type,omitempty"`
	Patch         any    `json:"patch"`
	Subresource   string `json:"subresource,omitempty"`
}

// ScaleStep sets replicas through the scale subresource, as kubectl scale.
type ScaleStep struct {
	Ref      `json:",inline"`
	Replicas int64 `json:"replicas"`
}

// SetImageStep sets one container's image in a pod template (or a Pod), as
// kubectl set image.
type SetImageStep struct {
	Ref       `json:",inline"`
	Container string `json:"container"`
	Image     string `json:"image"`
}

// DeleteStep deletes an object with an optional propagation policy, or
// with Selector instead of a name every object of the kind in the
// namespace it selects (at least one).
type DeleteStep struct {
	Ref         `json:",inline"`
	Selector    string `json:"selector,omitempty"`
	Propagation string `json:"propagation,omitempty"`
}

// WaitStep polls until a condition holds, or fails after Timeout.
type WaitStep struct {
	Ref      `json:",inline"`
	Selector string `json:"selector,omitempty"`
	// FieldSelector narrows count=N further ("status.phase=Pending").
	FieldSelector string   `json:"fieldSelector,omitempty"`
	For           string   `json:"for,omitempty"`
	Timeout       Duration `json:"timeout,omitempty"`
}

// Settle waits until the normalised capture has not changed for Quiet, at
// most Timeout.
type Settle struct {
	Quiet   Duration `json:"quiet,omitempty"`
	Timeout Duration `json:"timeout,omitempty"`
}

// CaptureSpec selects objects of one kind to capture.
type CaptureSpec struct {
	APIVersion string   `json:"apiVersion,omitempty"`
	Kind       string   `json:"kind"`
	Namespaces []string `json:"namespaces,omitempty"`
	Names      []string `json:"names,omitempty"`
	Selector   string   `json:"selector,omitempty"`
	// Sources, Reasons and Counts apply to kind Event only: Events from
	// those reporting controllers, with those reasons (empty: any).
	Sources []string `json:"sources,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	Counts  *bool    `json:"counts,omitempty"`
}

// Objects is a list of objects; in YAML a single object is accepted too.
type Objects []map[string]any

// UnmarshalJSON accepts an object or a list of objects.
func (o *Objects) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		*o = Objects{m}
		return nil
	}
	var l []map[string]any
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*o = l
	return nil
}

// Duration is a time.Duration written as "30s" in YAML (a bare number means
// seconds).
type Duration time.Duration

// UnmarshalJSON parses "30s", "2m" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case float64:
		*d = Duration(time.Duration(v * float64(time.Second)))
	case string:
		p, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("duration %q: %w", v, err)
		}
		*d = Duration(p)
	default:
		return fmt.Errorf("duration: want a string like 30s, got %s", b)
	}
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// or returns d, or def when d is zero.
func (d Duration) or(def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return time.Duration(d)
}

// LoadScenarios reads every file matching glob, sorted by name, and checks
// that names are unique.
func LoadScenarios(glob string) ([]*Scenario, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return nil, fmt.Errorf("parity: scenarios %q: %w", glob, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("parity: no scenario matches %q", glob)
	}
	sort.Strings(paths)
	seen := map[string]string{}
	var out []*Scenario
	for _, p := range paths {
		s, err := LoadScenario(p)
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[s.Name]; ok {
			return nil, fmt.Errorf("parity: scenario name %q used by %s and %s", s.Name, prev, p)
		}
		seen[s.Name] = p
		out = append(out, s)
	}
	return out, nil
}

// LoadScenario reads and validates one scenario file. Unknown fields are
// errors, so typos do not pass silently.
func LoadScenario(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("parity: %w", err)
	}
	s, err := ParseScenario(b)
	if err != nil {
		return nil, fmt.Errorf("parity: %s: %w", path, err)
	}
	s.Path = path
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return s, nil
}

// ParseScenario parses and validates a scenario's YAML.
func ParseScenario(b []byte) (*Scenario, error) {
	var s Scenario
	if err := yaml.UnmarshalStrict(b, &s); err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *Scenario) validate() error {
	var errs []error
	for i, o := range s.Objects {
		if err := validateObject(o); err != nil {
			errs = append(errs, fmt.Errorf("objects[%d]: %w", i, err))
		}
	}
	for i := range s.Steps {
		if err := s.Steps[i].validate(); err != nil {
			errs = append(errs, fmt.Errorf("steps[%d]: %w", i, err))
		}
	}
	if len(s.Capture) == 0 {
		errs = append(errs, errors.New("capture: at least one kind"))
	}
	for i, c := range s.Capture {
		if c.Kind == "" {
			errs = append(errs, fmt.Errorf("capture[%d]: kind is required", i))
		}
		if c.Kind != eventKind && (len(c.Sources) > 0 || len(c.Reasons) > 0 || c.Counts != nil) {
			errs = append(errs, fmt.Errorf("capture[%d]: sources, reasons and counts apply to kind Event only", i))
		}
	}
	for _, p := range s.Ignore {
		if _, err := parseIgnore(p); err != nil {
			errs = append(errs, fmt.Errorf("ignore: %w", err))
		}
	}
	errs = append(errs, s.validateMetricsAPI())
	if s.Nodes < 0 {
		errs = append(errs, errors.New("nodes: must not be negative"))
	}
	return errors.Join(errs...)
}

func validateObject(o map[string]any) error {
	if o["apiVersion"] == nil || o["kind"] == nil {
		return errors.New("apiVersion and kind are required")
	}
	md, _ := o["metadata"].(map[string]any)
	if name, _ := md["name"].(string); name == "" {
		return errors.New("metadata.name is required")
	}
	return nil
}

// Controller-manager actions of a step.
const (
	cmStop    = "stop"
	cmKill    = "kill"
	cmStart   = "start"
	cmRestart = "restart"
	// cmStartUpstream starts upstream's binary whichever binary the run
	// is of: a scenario can create objects under upstream and then hand
	// them to the run's binary (stop, then start).
	cmStartUpstream = "start-upstream"
)

func (st *Step) validate() error {
	var set []string
	var errs []error
	if st.Apply != nil {
		set = append(set, "apply")
		for i, o := range st.Apply {
			if err := validateObject(o); err != nil {
				errs = append(errs, fmt.Errorf("apply[%d]: %w", i, err))
			}
		}
	}
	if st.Create != nil {
		set = append(set, "create")
	}
	errs = append(errs, st.validateCreate()...)
	if st.Patch != nil {
		set = append(set, "patch")
		errs = append(errs, needNameOrSelector(st.Patch.Ref, st.Patch.Selector+st.Patch.FieldSelector))
		if !slices.Contains([]string{"", "merge", "strategic", "json"}, st.Patch.Type) {
			errs = append(errs, fmt.Errorf("patch: type %q: want merge, strategic or json", st.Patch.Type))
		}
		if st.Patch.Patch == nil {
			errs = append(errs, errors.New("patch: patch is required"))
		}
	}
	if st.Scale != nil {
		set = append(set, "scale")
		errs = append(errs, needName(st.Scale.Ref))
	}
	if st.SetImage != nil {
		set = append(set, "setImage")
		errs = append(errs, needName(st.SetImage.Ref))
		if st.SetImage.Container == "" || st.SetImage.Image == "" {
			errs = append(errs, errors.New("setImage: container and image are required"))
		}
	}
	if st.Delete != nil {
		set = append(set, "delete")
		errs = append(errs, needNameOrSelector(st.Delete.Ref, st.Delete.Selector))
		if !slices.Contains([]string{"", "Background", "Foreground", "Orphan"}, st.Delete.Propagation) {
			errs = append(errs, fmt.Errorf("delete: propagation %q: want Background, Foreground or Orphan", st.Delete.Propagation))
		}
	}
	if st.Wait != nil {
		set = append(set, "wait")
		if _, err := parseCondition(st.Wait); err != nil {
			errs = append(errs, err)
		}
	}
	if st.ControllerManager != "" {
		set = append(set, "controllerManager")
		if !slices.Contains([]string{cmStop, cmKill, cmStart, cmRestart, cmStartUpstream}, st.ControllerManager) {
			errs = append(errs, fmt.Errorf("controllerManager: %q: want stop, kill, start, restart or start-upstream", st.ControllerManager))
		}
	}
	if st.CloudControllerManager != "" {
		set = append(set, "cloudControllerManager")
		if !slices.Contains([]string{cmStop, cmStart, cmRestart}, st.CloudControllerManager) {
			errs = append(errs, fmt.Errorf("cloudControllerManager: %q: want stop, start or restart", st.CloudControllerManager))
		}
	}
	if st.Settle != nil {
		set = append(set, "settle")
	}
	if st.Nodes != nil {
		set = append(set, "nodes")
		if *st.Nodes < 1 {
			errs = append(errs, errors.New("nodes: want at least 1"))
		}
	}
	if st.Evict != nil {
		set = append(set, "evict")
		errs = append(errs, st.Evict.validate())
	}
	if st.Metrics != nil {
		set = append(set, "metrics")
	}
	if len(set) != 1 {
		errs = append(errs, fmt.Errorf("want exactly one action, got %d (%s)", len(set), strings.Join(set, ", ")))
	}
	return errors.Join(errs...)
}

// withSelector describes a reference that may select instead of name.
func withSelector(r Ref, selector string) string {
	if selector == "" {
		return r.String()
	}
	return r.String() + " " + selector
}

// needNameOrSelector: a step acting on objects names one or selects some.
func needNameOrSelector(r Ref, selector string) error {
	if r.Kind == "" || (r.Name == "") == (selector == "") {
		return fmt.Errorf("%s: kind and either name or selector are required", r)
	}
	return nil
}

func needName(r Ref) error {
	if r.Kind == "" || r.Name == "" {
		return fmt.Errorf("%s: kind and name are required", r)
	}
	return nil
}

// String describes the step in one line for logs and errors.
func (st *Step) String() string {
	switch {
	case st.Apply != nil:
		var names []string
		for _, o := range st.Apply {
			md, _ := o["metadata"].(map[string]any)
			names = append(names, fmt.Sprintf("%v %v", o["kind"], md["name"]))
		}
		return "apply " + strings.Join(names, ", ")
	case st.Create != nil:
		var names []string
		for _, o := range st.Create {
			md, _ := o["metadata"].(map[string]any)
			name := md["name"]
			if st.Times > 1 {
				name = fmt.Sprintf("%v… ×%d", md["generateName"], st.Times)
			}
			names = append(names, fmt.Sprintf("%v %v", o["kind"], name))
		}
		if st.As != nil {
			return "create " + strings.Join(names, ", ") + " as " + st.As.User
		}
		return "create " + strings.Join(names, ", ")
	case st.Patch != nil:
		return "patch " + withSelector(st.Patch.Ref, strings.TrimSpace(st.Patch.Selector+" "+st.Patch.FieldSelector))
	case st.Scale != nil:
		return fmt.Sprintf("scale %s to %d", st.Scale.Ref, st.Scale.Replicas)
	case st.SetImage != nil:
		return fmt.Sprintf("set image %s %s=%s", st.SetImage.Ref, st.SetImage.Container, st.SetImage.Image)
	case st.Delete != nil:
		return "delete " + withSelector(st.Delete.Ref, st.Delete.Selector)
	case st.Wait != nil:
		f := st.Wait.For
		if f == "" {
			f = "exists"
		}
		return fmt.Sprintf("wait %s for %s", st.Wait.Ref, f)
	case st.ControllerManager != "":
		return st.ControllerManager + " kube-controller-manager"
	case st.CloudControllerManager != "":
		return st.CloudControllerManager + " cloud-controller-manager"
	case st.Settle != nil:
		return "settle"
	case st.Nodes != nil:
		return fmt.Sprintf("ensure %d kwok nodes", *st.Nodes)
	case st.Evict != nil:
		return st.Evict.String()
	case st.Metrics != nil:
		return "set metrics"
	}
	return "?"
}

// namespaces returns the names of the Namespaces the scenario applies.
func (s *Scenario) namespaces() []string {
	var out []string
	add := func(objs Objects) {
		for _, o := range objs {
			if o["kind"] == "Namespace" {
				md, _ := o["metadata"].(map[string]any)
				if n, _ := md["name"].(string); n != "" && !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	add(s.Objects)
	for _, st := range s.Steps {
		add(st.Apply)
		add(st.Create)
	}
	return out
}

// Quick returns the scenarios marked quick.
func Quick(scenarios []*Scenario) []*Scenario {
	var out []*Scenario
	for _, s := range scenarios {
		if s.Quick {
			out = append(out, s)
		}
	}
	return out
}
