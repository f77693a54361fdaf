package attachdetach

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// opKind is the operation an attachment is in the middle of.
type opKind int

const (
	opNone opKind = iota
	// opAttach: the VolumeAttachment exists (or was just created) and the
	// controller waits for the external attacher to set status.attached.
	opAttach
	// opDetach: the VolumeAttachment was deleted and the controller waits
	// for it to be gone.
	opDetach
)

// Upstream's operation timings: the CSI attacher waits two minutes for the
// external attacher, and a failed operation is retried after 0.5s, doubling
// up to 2m2s.
const (
	opTimeout      = 2 * time.Minute
	initialBackoff = 500 * time.Millisecond
	maxBackoff     = 2*time.Minute + 2*time.Second
)

// attachment is one volume on one node as the controller knows it: upstream's
// actual state of the world entry (inASW: attached or, when not confirmed,
// uncertain) plus the operation running on it.
type attachment struct {
	driver, handle string
	// specName names the volume in Events (the PersistentVolume); empty for
	// entries recovered from a node's status, whose spec upstream does not
	// know either (they are not verified, only detached).
	specName    string
	multiAttach bool
	devicePath  string
	// foreign entries (another plugin's volumes found in a node's status)
	// are reported as they are and never detached: kcm has no plugin for them.
	foreign bool

	inASW     bool
	confirmed bool
	reported  bool
	// detachRequested is when the detach was first wanted (the unmount
	// wait starts there); zero while the volume is desired.
	detachRequested time.Time
	// mountedUntilRV: upstream counts a newly added volume as mounted until
	// the next node event; here until the node's resourceVersion differs
	// from the one seen when the entry was added.
	mountedUntilRV string

	op        opKind
	opStarted time.Time
	opPods    []*v1.Pod // the pods the attach was started for (its Events)
	backoff   time.Duration
	retryAt   time.Time
}

func (a *attachment) fromWanted(w *wanted) {
	a.driver, a.handle, a.specName, a.multiAttach = w.driver, w.handle, w.specName, w.multiAttach
}

// failed records an operation failure: the attachment becomes uncertain and
// the next attempt waits out the back-off.
func (a *attachment) failed(now time.Time) {
	a.inASW, a.confirmed, a.op, a.opPods = true, false, opNone, nil
	switch {
	case a.backoff == 0:
		a.backoff = initialBackoff
	default:
		a.backoff = min(2*a.backoff, maxBackoff)
	}
	a.retryAt = now.Add(a.backoff)
}

// nodeState is what the controller holds for one node.
type nodeState struct {
	volumes map[v1.UniqueVolumeName]*attachment
	// managed: the node carried the controller-managed annotation (upstream
	// keeps managing it until it is deleted).
	managed bool
	nodeUID types.UID
	nodeRV  string
	inUse   []v1.UniqueVolumeName
	// statusNeeded: volumesAttached must be written; written is the list
	// last written, to tell a stale informer copy from an up-to-date one.
	statusNeeded bool
	written      []v1.AttachedVolume
	// multiAttachReported: the volumes whose Multi-Attach Event was sent
	// while they stayed wanted here (upstream reports once).
	multiAttachReported sets.Set[v1.UniqueVolumeName]
}

func (ns *nodeState) mounted(name v1.UniqueVolumeName, a *attachment) bool {
	if a.mountedUntilRV != "" && a.mountedUntilRV == ns.nodeRV {
		return true
	}
	for _, n := range ns.inUse {
		if n == name {
			return true
		}
	}
	return false
}

// reportedVolumes is the node's volumesAttached as the controller reports it,
// sorted by name (upstream's order is a map's).
func (ns *nodeState) reportedVolumes() []v1.AttachedVolume {
	var out []v1.AttachedVolume
	for name, a := range ns.volumes {
		if a.reported {
			out = append(out, v1.AttachedVolume{Name: name, DevicePath: a.devicePath})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// state is the controller's memory, touched only by its single worker.
type state struct {
	nodes map[string]*nodeState
	// waiters: nodes that want a volume attached elsewhere exclusively,
	// synced again when it is detached there.
	waiters map[v1.UniqueVolumeName]sets.Set[string]
}

func newState() *state {
	return &state{nodes: map[string]*nodeState{}, waiters: map[v1.UniqueVolumeName]sets.Set[string]{}}
}

func (s *state) node(name string) *nodeState {
	ns := s.nodes[name]
	if ns == nil {
		ns = &nodeState{volumes: map[v1.UniqueVolumeName]*attachment{}, multiAttachReported: sets.New[v1.UniqueVolumeName]()}
		s.nodes[name] = ns
	}
	return ns
}

// attachedElsewhere returns the nodes other than node the volume is
// attached to (confirmed), sorted.
func (s *state) attachedElsewhere(name v1.UniqueVolumeName, node string) []string {
	var out []string
	for n, ns := range s.nodes {
		if a := ns.volumes[name]; n != node && a != nil && a.confirmed {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func sortedNames[T any](m map[v1.UniqueVolumeName]T) []v1.UniqueVolumeName {
	out := make([]v1.UniqueVolumeName, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func equalAttached(a, b []v1.AttachedVolume) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
