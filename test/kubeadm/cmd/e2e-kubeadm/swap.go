package main

import (
	"bytes"
	"fmt"
	"log"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/kubeadm"
)

const manifest = "/etc/kubernetes/manifests/kube-controller-manager.yaml"

// writes are the controller manager's writes in a window, by resource
// ("deployments", "pods/status"), from the apiserver's audit log.
type writes struct {
	creates, deletes, spec, status map[string]int
	// events and lease are Event writes and the election Lease's renewals,
	// tokens the service-account tokens its controllers' clients request
	// (TokenRequests, never stored), swept the namespace controller's
	// deletecollection calls in the namespace held in deletion: counted
	// apart, none is a workload object.
	events, lease, tokens, swept int
	// created names what was created and deleted, "resource ns/name".
	created, deleted []string
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func list(m map[string]int) string {
	if len(m) == 0 {
		return "–"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}

// transition is one swap of the static pod's image and what followed it.
type transition struct {
	name        string
	from, to    string
	took        time.Duration // manifest written to Lease taken
	w           writes
	podsChanged []string // pods deleted, created or restarted
}

// controllerManagerUser reports whether an audit event's user is the
// controller manager: itself, or one of its per-controller service
// accounts (kube-system's, without kubeadm's addons').
func controllerManagerUser(u string) bool {
	if u == "system:kube-controller-manager" {
		return true
	}
	sa, ok := strings.CutPrefix(u, "system:serviceaccount:kube-system:")
	return ok && sa != "kube-proxy" && sa != "coredns"
}

// countWrites reads the audit log and counts the controller manager's
// writes received in [from, to).
func countWrites(auditLog string, from, to time.Time) (writes, error) {
	events, err := readAudit(auditLog)
	if err != nil {
		return writes{}, err
	}
	w := writes{creates: map[string]int{}, deletes: map[string]int{}, spec: map[string]int{}, status: map[string]int{}}
	for _, ev := range events {
		t := ev.RequestReceivedTimestamp
		if t.Before(from) || !t.Before(to) || ev.ObjectRef == nil || !controllerManagerUser(ev.User.Username) {
			continue
		}
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400 {
			continue // refused: nothing was written
		}
		r := ev.ObjectRef.Resource
		switch r {
		case "tokenreviews", "subjectaccessreviews": // asked, never stored
			continue
		case "events":
			switch ev.Verb {
			case "create", "update", "patch":
				w.events++
			case "deletecollection":
				w.swept++
			}
			continue
		case "leases":
			if ev.ObjectRef.Name == leaseName && ev.ObjectRef.Namespace == "kube-system" && (ev.Verb == "update" || ev.Verb == "patch") {
				w.lease++
				continue
			}
		}
		key := r
		if ev.ObjectRef.Subresource != "" {
			key += "/" + ev.ObjectRef.Subresource
		}
		switch {
		case key == "serviceaccounts/token":
			w.tokens++
		case ev.Verb == "deletecollection":
			w.swept++
		case ev.Verb == "create":
			w.creates[key]++
			w.created = append(w.created, key+" "+path.Join(ev.ObjectRef.Namespace, ev.ObjectRef.Name))
		case ev.Verb == "delete":
			w.deletes[key]++
			w.deleted = append(w.deleted, key+" "+path.Join(ev.ObjectRef.Namespace, ev.ObjectRef.Name))
		case ev.Verb == "update" || ev.Verb == "patch":
			if ev.ObjectRef.Subresource == "status" {
				w.status[key]++
			} else {
				w.spec[key]++
			}
		}
	}
	return w, nil
}

// readAudit reads the audit log up to its last whole line: the apiserver
// may be writing the next one.
func readAudit(path string) ([]cluster.AuditEvent, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	}
	tmp, err := os.CreateTemp("", "audit-*.log")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	return cluster.ReadAuditEvents(tmp.Name())
}

// podState is every pod but the controller manager's, by UID, with its
// containers' restart count.
func (e *env) podState() (map[string]string, error) {
	pods, err := e.c.Client.CoreV1().Pods("").List(e.ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, p := range pods.Items {
		if p.Namespace == "kube-system" && p.Name == kcmPod {
			continue
		}
		restarts := int32(0)
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
		m[string(p.UID)] = fmt.Sprintf("%s/%s restarts %d", p.Namespace, p.Name, restarts)
	}
	return m, nil
}

// setImage rewrites the static pod manifest with image, and an annotation
// that changes with every swap (so that a swap to the same image restarts
// the pod too), as an operator editing the file would.
func (e *env) setImage(image string, seq int) error {
	path := e.c.ControlPlane.HostPath(manifest)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(b, &pod); err != nil {
		return err
	}
	pod.Spec.Containers[0].Image = image
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations["e2e-kubeadm/swap"] = fmt.Sprint(seq)
	out, err := yaml.Marshal(&pod)
	if err != nil {
		return err
	}
	// Written beside the manifests (the kubelet skips dot files) and
	// renamed over it, so that the kubelet never reads half a file.
	tmp := filepath.Join(filepath.Dir(path), ".kube-controller-manager.yaml")
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// swap rewrites the manifest to image and waits for the new controller
// manager to take the Lease, then counts for the window after.
func (e *env) swap(name, from, to string, seq int) (*transition, error) {
	before, err := e.podState()
	if err != nil {
		return nil, err
	}
	holder, err := e.leaseHolder()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := e.setImage(to, seq); err != nil {
		return nil, err
	}
	var acquired time.Time
	if err := e.Poll(3*time.Minute, "the new controller manager takes the Lease", func() (bool, string, error) {
		l, err := e.c.Client.CoordinationV1().Leases("kube-system").Get(e.ctx, leaseName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		h := ""
		if l.Spec.HolderIdentity != nil {
			h = *l.Spec.HolderIdentity
		}
		if h == holder || h == "" || l.Spec.AcquireTime == nil {
			return false, "holder " + h, nil
		}
		acquired = l.Spec.AcquireTime.Time
		return true, "", nil
	}); err != nil {
		return nil, err
	}
	pod, err := e.c.Client.CoreV1().Pods("kube-system").Get(e.ctx, kcmPod, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if got := pod.Spec.Containers[0].Image; got != to {
		return nil, fmt.Errorf("the mirror pod runs %s, want %s", got, to)
	}
	tr := &transition{name: name, from: from, to: to, took: acquired.Sub(start)}
	log.Printf("e2e-kubeadm: %s: Lease taken %v after the manifest was written; counting for %v", name, tr.took.Round(time.Millisecond), e.o.swapWindow)
	end := acquired.Add(e.o.swapWindow)
	select {
	case <-e.ctx.Done():
		return nil, e.ctx.Err()
	case <-time.After(time.Until(end) + 2*time.Second): // the audit log's buffer
	}
	if tr.w, err = countWrites(e.c.ControlPlane.HostPath("/etc/kubernetes/audit/audit.log"), acquired, end); err != nil {
		return nil, err
	}
	after, err := e.podState()
	if err != nil {
		return nil, err
	}
	for uid, s := range before {
		if a, ok := after[uid]; !ok {
			tr.podsChanged = append(tr.podsChanged, "deleted "+s)
		} else if a != s {
			tr.podsChanged = append(tr.podsChanged, "now "+a+", was "+s)
		}
	}
	for uid, s := range after {
		if _, ok := before[uid]; !ok {
			tr.podsChanged = append(tr.podsChanged, "created "+s)
		}
	}
	log.Printf("e2e-kubeadm: %s: created %v, deleted %v, spec writes [%s], status writes [%s], %d Event writes, %d Lease renewals, pods changed %v",
		name, tr.w.created, tr.w.deleted, list(tr.w.spec), list(tr.w.status), tr.w.events, tr.w.lease, tr.podsChanged)
	return tr, nil
}

// swaps runs the workload mix, then four swaps of the static pod's image,
// each counted for the window after the Lease changes hands: a restart of
// the running binary onto the same image, a swap to the other binary, its
// restart, and a swap back. The restarts of upstream's binary are the
// baseline. Into kcm: no pod restarted or recreated, no object created or
// deleted, no more spec or status writes than the baseline. Into
// upstream's binary the same, but for the ServiceAccounts of controllers
// kcm does not run yet, which upstream's creates on its first start on a
// cluster kcm set up: a difference in what kcm left behind (a hash, a
// label) would show here as upstream's rework.
func (e *env) swaps() error {
	if err := e.createWorkload(); err != nil {
		return err
	}
	mine, other := e.wantImage(), kubeadm.ControllerManagerImg
	if e.o.upstream {
		other = kubeadm.KCMImageShort
	}
	var trs []*transition
	var base *transition
	for i, s := range []struct{ from, to string }{{mine, mine}, {mine, other}, {other, other}, {other, mine}} {
		name := fmt.Sprintf("%s → %s", binaryOf(s.from), binaryOf(s.to))
		tr, err := e.swap(name, s.from, s.to, i+1)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if s.from == s.to && s.to == kubeadm.ControllerManagerImg {
			base = tr
		}
		trs = append(trs, tr)
	}
	if err := e.releaseTerminating(); err != nil {
		return err
	}
	report := swapReport(trs, e.o.swapWindow)
	if err := os.WriteFile(filepath.Join(e.o.workDir, "swap.md"), []byte(report), 0o644); err != nil {
		return err
	}
	log.Printf("e2e-kubeadm: swap figures (%s):\n%s", filepath.Join(e.o.workDir, "swap.md"), report)
	var bad []string
	for _, tr := range trs {
		if len(tr.podsChanged) > 0 {
			bad = append(bad, fmt.Sprintf("%s: pods changed: %s", tr.name, strings.Join(tr.podsChanged, "; ")))
		}
		creates := maps.Clone(tr.w.creates)
		if tr.to == kubeadm.ControllerManagerImg {
			delete(creates, "serviceaccounts")
		}
		if n := total(creates) + total(tr.w.deletes); n > 0 {
			bad = append(bad, fmt.Sprintf("%s: created [%s], deleted [%s]", tr.name, list(creates), list(tr.w.deletes)))
		}
		if tr.to == kubeadm.ControllerManagerImg {
			continue
		}
		if total(tr.w.spec) > total(base.w.spec) {
			bad = append(bad, fmt.Sprintf("%s: %d spec writes, baseline %d", tr.name, total(tr.w.spec), total(base.w.spec)))
		}
		if total(tr.w.status) > total(base.w.status) {
			bad = append(bad, fmt.Sprintf("%s: %d status writes, baseline %d", tr.name, total(tr.w.status), total(base.w.status)))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

func binaryOf(image string) string {
	if image == kubeadm.ControllerManagerImg {
		return "upstream"
	}
	return "kcm"
}

func swapReport(trs []*transition, window time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| transition | Lease taken after | pods deleted, created or restarted | objects created | objects deleted | spec writes | status writes | Event writes | Lease renewals | token requests | collections swept |\n")
	fmt.Fprintf(&b, "|---|--:|--:|---|---|---|---|--:|--:|--:|--:|\n")
	for _, tr := range trs {
		fmt.Fprintf(&b, "| %s | %.1f s | %d | %s | %s | %d: %s | %d: %s | %d | %d | %d | %d |\n", tr.name, tr.took.Seconds(), len(tr.podsChanged),
			list(tr.w.creates), list(tr.w.deletes), total(tr.w.spec), list(tr.w.spec), total(tr.w.status), list(tr.w.status), tr.w.events, tr.w.lease, tr.w.tokens, tr.w.swept)
	}
	fmt.Fprintf(&b, "\nCounted from the apiserver's audit log: the controller manager's requests (as itself and as its controllers' service accounts) received in the %v after the new process took the Lease; refused requests, TokenReviews and SubjectAccessReviews left out. Lease taken after: from the manifest's rewrite.\n", window)
	return b.String()
}
