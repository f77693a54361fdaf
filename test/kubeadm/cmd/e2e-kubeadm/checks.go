package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
	"github.com/kcm-dev/kcm/test/kubeadm"
	"github.com/kcm-dev/kcm/test/node/checks"
)

const (
	ns        = "e2e-kubeadm"
	kcmPod    = "kube-controller-manager-kcm-control-plane"
	leaseName = "kube-controller-manager"
)

type env struct {
	ctx     context.Context
	c       *kubeadm.Cluster
	o       options
	kubectl string
	*checks.Env
	stability *stability
}

func (e *env) all() error {
	// The Service checks; the client is kubeadm's admin, once init made it.
	e.Env = &checks.Env{
		Ctx: e.ctx, Kubectl: e.kubectl, Kubeconfig: e.c.AdminKubeconfig(), Namespace: ns, Logf: log.Printf,
		// Pods go on every node, the control plane's too (kubeadm taints
		// it NoSchedule).
		Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Spread:      true,
		TaintNode:   e.c.Workers[0].Name,
	}
	steps := []step{
		{"containerd up on every node, images imported", func() error { return e.c.StartRuntimes(e.ctx) }},
		{"kubeadm init, with kubeadm's wait for a healthy controller manager", e.init},
		{"kubeadm join of the worker through its bootstrap token and CSR", e.join},
		{"every node has a podCIDR, its pod network and is Ready", e.nodesReady},
		{"kube-proxy and CoreDNS run on every node", e.addons},
		{"the controller manager's static pod is Running and Ready, with " + e.wantImage() + ", and holds the Lease", e.staticPod},
	}
	if e.o.suite() {
		// The suite instead of the checks: its specs are the workload.
		steps = append(steps, step{"upstream's conformance specs", e.conformance})
		return runSteps(steps)
	}
	steps = append(steps, []step{
		{"HTTP Deployment spread over the nodes behind a ClusterIP Service answers by IP and DNS name from a pod", e.web},
		{"rollout keeps the Service answering", e.Watched("rollout", e.Rollout)},
		{"scale-down keeps the Service answering", e.Watched("scale-down", e.ScaleDown)},
		{"eviction by a NoExecute taint on the worker keeps the Service answering", e.Watched("taint eviction", e.TaintEviction)},
		{fmt.Sprintf("no restart of the controller manager's static pod for %v", e.o.stable), e.stable},
		{"kill -9 of the static pod's container: the kubelet restarts it, the Service keeps answering", e.Watched("kill -9", e.killStaticPod)},
		{"kubectl logs, exec and port-forward", e.KubectlChecks},
	}...)
	if !e.o.noSwap {
		steps = append(steps, step{"swap the controller manager in place: no pod restarted or recreated, no object created", e.swaps})
	}
	steps = append(steps, step{"the in-pod prober's record", e.ProberRecord})
	return runSteps(steps)
}

// step is one check, named in the log.
type step struct {
	name string
	f    func() error
}

func runSteps(steps []step) error {
	for i, s := range steps {
		t := time.Now()
		log.Printf("e2e-kubeadm: [%d/%d] %s", i+1, len(steps), s.name)
		if err := s.f(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		log.Printf("e2e-kubeadm: [%d/%d] ok in %v", i+1, len(steps), time.Since(t).Round(time.Millisecond))
	}
	return nil
}

// wantImage is the image the static pod runs: kcm's (manifests/kind-patches
// names it) or kubeadm's default.
func (e *env) wantImage() string {
	if e.o.upstream {
		return kubeadm.ControllerManagerImg
	}
	return kubeadm.KCMImageShort
}

func (e *env) init() error {
	if err := e.c.Init(e.ctx); err != nil {
		return err
	}
	e.Env.Client = e.c.Client
	return nil
}

func (e *env) join() error {
	if err := e.c.Join(e.ctx); err != nil {
		return err
	}
	// The worker's client certificate came from a CSR of the token's
	// user that the controller manager approved and signed.
	csrs, err := e.c.Client.CertificatesV1().CertificateSigningRequests().List(e.ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, csr := range csrs.Items {
		if !strings.HasPrefix(csr.Spec.Username, "system:bootstrap:") {
			continue
		}
		for _, c := range csr.Status.Conditions {
			if c.Type == "Approved" && c.Status == corev1.ConditionTrue && len(csr.Status.Certificate) > 0 {
				log.Printf("e2e-kubeadm: CSR %s of %s: %s (%s), issued", csr.Name, csr.Spec.Username, c.Reason, c.Message)
				return nil
			}
		}
	}
	return fmt.Errorf("no approved and issued CSR of a bootstrap token's user")
}

// nodesReady waits for every node's podCIDR (the node-ipam-controller),
// sets up the pod network from them, and waits for every node to be Ready.
func (e *env) nodesReady() error {
	cidrs := map[string]string{} // node name -> podCIDR
	if err := e.Poll(3*time.Minute, "every node registered with a podCIDR", func() (bool, string, error) {
		nodes, err := e.c.Client.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, n := range nodes.Items {
			if n.Spec.PodCIDR != "" {
				cidrs[n.Name] = n.Spec.PodCIDR
			}
		}
		return len(cidrs) == len(e.c.Nodes()), fmt.Sprintf("podCIDRs %v", cidrs), nil
	}); err != nil {
		return err
	}
	for _, n := range e.c.Nodes() {
		others := map[string]string{}
		for _, m := range e.c.Nodes() {
			if m != n {
				others[cidrs[m.Name]] = m.IP
			}
		}
		log.Printf("e2e-kubeadm: %s: podCIDR %s", n.Name, cidrs[n.Name])
		if err := n.SetPodNetwork(cidrs[n.Name], others); err != nil {
			return err
		}
	}
	return e.Poll(3*time.Minute, "every node Ready", func() (bool, string, error) {
		nodes, err := e.c.Client.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		var notReady []string
		for _, n := range nodes.Items {
			if !nodeReady(&n) {
				notReady = append(notReady, n.Name)
			}
		}
		return len(notReady) == 0, fmt.Sprintf("not Ready: %v", notReady), nil
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// addons waits for kubeadm's kube-proxy DaemonSet and CoreDNS Deployment,
// and checks that kube-proxy runs on every node and CoreDNS's replicas
// each on a node of its own. CoreDNS's two replicas only
// prefer different nodes; when the scheduler placed both on one (the first
// node Ready gets both), one of them is deleted, as an operator would: the
// ReplicaSet replaces it and the anti-affinity puts the new one on
// another node.
func (e *env) addons() error {
	want := int32(len(e.c.Nodes()))
	if err := e.Poll(3*time.Minute, "DaemonSet kube-proxy ready on every node", func() (bool, string, error) {
		ds, err := e.c.Client.AppsV1().DaemonSets("kube-system").Get(e.ctx, "kube-proxy", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		s := ds.Status
		return s.DesiredNumberScheduled == want && s.NumberReady == want, fmt.Sprintf("%+v", s), nil
	}); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		if err := e.DeploymentReady("kube-system", "coredns", 3*time.Minute); err != nil {
			return err
		}
		pods, err := e.runningPods("kube-system", "k8s-app=kube-dns")
		if err != nil {
			return err
		}
		on := map[string][]string{}
		for _, p := range pods {
			on[p.Spec.NodeName] = append(on[p.Spec.NodeName], p.Name)
		}
		// Each replica on a node of its own (kubeadm's CoreDNS has two;
		// with more nodes, not every node gets one).
		if len(on) == min(len(pods), len(e.c.Nodes())) {
			log.Printf("e2e-kubeadm: CoreDNS pods on %v", on)
			break
		}
		if attempt == 3 || len(pods) < 2 {
			return fmt.Errorf("CoreDNS pods only on %v", on)
		}
		victim := pods[0].Name
		log.Printf("e2e-kubeadm: CoreDNS pods only on %v: deleting %s for its ReplicaSet to replace", on, victim)
		if err := e.c.Client.CoreV1().Pods("kube-system").Delete(e.ctx, victim, metav1.DeleteOptions{}); err != nil {
			return err
		}
		if err := e.Poll(time.Minute, victim+" gone", func() (bool, string, error) {
			_, err := e.c.Client.CoreV1().Pods("kube-system").Get(e.ctx, victim, metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err), nil
		}); err != nil {
			return err
		}
	}
	on, err := e.podNodes("kube-system", "k8s-app=kube-proxy")
	if err != nil {
		return err
	}
	if len(on) != len(e.c.Nodes()) {
		return fmt.Errorf("kube-proxy pods only on %v", on)
	}
	return nil
}

// runningPods are the Running, Ready pods of selector not being deleted.
func (e *env) runningPods(namespace, selector string) ([]corev1.Pod, error) {
	pods, err := e.c.Client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && endpointutil.IsPodReady(&p) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// podNodes is the set of nodes that Running, Ready pods of selector are on.
func (e *env) podNodes(namespace, selector string) (map[string]bool, error) {
	pods, err := e.runningPods(namespace, selector)
	if err != nil {
		return nil, err
	}
	on := map[string]bool{}
	for _, p := range pods {
		on[p.Spec.NodeName] = true
	}
	return on, nil
}

// web is the Service checks' Web, and its pods on every node.
func (e *env) web() error {
	if err := e.Web(); err != nil {
		return err
	}
	on, err := e.podNodes(ns, "app=web,tier=main")
	if err != nil {
		return err
	}
	if len(on) != len(e.c.Nodes()) {
		return fmt.Errorf("web pods only on %v", on)
	}
	log.Printf("e2e-kubeadm: web pods on %v", on)
	return nil
}

// staticPod checks the controller manager's mirror pod (Running, Ready,
// the expected image, kubeadm's probes) and the Lease, and starts
// watching its restarts.
func (e *env) staticPod() error {
	var pod *corev1.Pod
	if err := e.Poll(2*time.Minute, "mirror pod "+kcmPod+" Running and Ready", func() (bool, string, error) {
		p, err := e.c.Client.CoreV1().Pods("kube-system").Get(e.ctx, kcmPod, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		pod = p
		return p.Status.Phase == corev1.PodRunning && endpointutil.IsPodReady(p), string(p.Status.Phase), nil
	}); err != nil {
		return err
	}
	c := pod.Spec.Containers[0]
	if c.Image != e.wantImage() {
		return fmt.Errorf("static pod image %s, want %s", c.Image, e.wantImage())
	}
	if c.StartupProbe == nil || c.LivenessProbe == nil {
		return fmt.Errorf("static pod without kubeadm's startup and liveness probes")
	}
	log.Printf("e2e-kubeadm: %s runs %s (%s), startup probe %s, liveness probe %s", kcmPod, c.Image, pod.Status.ContainerStatuses[0].ImageID,
		probeString(c.StartupProbe), probeString(c.LivenessProbe))
	holder, err := e.leaseHolder()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(holder, e.c.ControlPlane.Name+"_") {
		return fmt.Errorf("Lease kube-system/%s held by %q", leaseName, holder)
	}
	log.Printf("e2e-kubeadm: Lease kube-system/%s held by %s", leaseName, holder)
	e.stability = watchStability(e.ctx, e, pod.Status.ContainerStatuses[0].RestartCount)
	return nil
}

func probeString(p *corev1.Probe) string {
	if p.HTTPGet != nil {
		return fmt.Sprintf("%s://%s:%s%s every %ds, %d failures", p.HTTPGet.Scheme, p.HTTPGet.Host, p.HTTPGet.Port.String(), p.HTTPGet.Path, p.PeriodSeconds, p.FailureThreshold)
	}
	return "not HTTP"
}

func (e *env) leaseHolder() (string, error) {
	l, err := e.c.Client.CoordinationV1().Leases("kube-system").Get(e.ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if l.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *l.Spec.HolderIdentity, nil
}

// stability records, every 5 seconds, the static pod's restarts and
// readiness.
type stability struct {
	mu       sync.Mutex
	start    time.Time
	restarts int32
	samples  int
	problems []string
	stop     context.CancelFunc
}

func watchStability(ctx context.Context, e *env, restarts int32) *stability {
	ctx, cancel := context.WithCancel(ctx)
	s := &stability{start: time.Now(), restarts: restarts, stop: cancel}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second):
			}
			p, err := e.c.Client.CoreV1().Pods("kube-system").Get(ctx, kcmPod, metav1.GetOptions{})
			s.mu.Lock()
			s.samples++
			switch {
			case err != nil && ctx.Err() == nil:
				s.problems = append(s.problems, err.Error())
			case err == nil && p.Status.ContainerStatuses[0].RestartCount != s.restarts:
				s.problems = append(s.problems, fmt.Sprintf("restart count %d at %v", p.Status.ContainerStatuses[0].RestartCount, time.Since(s.start).Round(time.Second)))
				s.restarts = p.Status.ContainerStatuses[0].RestartCount
			case err == nil && !endpointutil.IsPodReady(p):
				s.problems = append(s.problems, fmt.Sprintf("not Ready at %v", time.Since(s.start).Round(time.Second)))
			}
			s.mu.Unlock()
		}
	}()
	return s
}

// stable waits for the rest of the stability period and fails on any
// restart or unreadiness seen in it.
func (e *env) stable() error {
	s := e.stability
	if d := e.o.stable - time.Since(s.start); d > 0 {
		log.Printf("e2e-kubeadm: waiting %v more for the stability period", d.Round(time.Second))
		select {
		case <-e.ctx.Done():
			return e.ctx.Err()
		case <-time.After(d):
		}
	}
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.problems) > 0 {
		return fmt.Errorf("over %v: %s", time.Since(s.start).Round(time.Second), strings.Join(s.problems, "; "))
	}
	log.Printf("e2e-kubeadm: %s: 0 restarts and Ready in %d samples over %v", kcmPod, s.samples, time.Since(s.start).Round(time.Second))
	return nil
}

// killStaticPod kills the controller manager's container process with
// SIGKILL; the kubelet restarts the container, which takes the Lease
// again, and web scales up by one (the deployment and replicaset
// controllers work).
func (e *env) killStaticPod() error {
	before, err := e.c.Client.CoreV1().Pods("kube-system").Get(e.ctx, kcmPod, metav1.GetOptions{})
	if err != nil {
		return err
	}
	restarts := before.Status.ContainerStatuses[0].RestartCount
	holder, err := e.leaseHolder()
	if err != nil {
		return err
	}
	pid, err := controllerManagerPid(e.c.ControlPlane)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	t := time.Now()
	log.Printf("e2e-kubeadm: killed the controller manager (pid %d) with SIGKILL", pid)
	if err := e.Poll(3*time.Minute, "static pod restarted by the kubelet and Ready", func() (bool, string, error) {
		p, err := e.c.Client.CoreV1().Pods("kube-system").Get(e.ctx, kcmPod, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		rc := p.Status.ContainerStatuses[0].RestartCount
		return rc == restarts+1 && endpointutil.IsPodReady(p), fmt.Sprintf("restarts %d, ready %v", rc, endpointutil.IsPodReady(p)), nil
	}); err != nil {
		return err
	}
	if err := e.Poll(time.Minute, "Lease taken by the restarted controller manager", func() (bool, string, error) {
		h, err := e.leaseHolder()
		return err == nil && h != holder && strings.HasPrefix(h, e.c.ControlPlane.Name+"_"), "holder " + h, nil
	}); err != nil {
		return err
	}
	log.Printf("e2e-kubeadm: restarted and leading %v after the kill", time.Since(t).Round(time.Millisecond))
	return e.ScaleUp()
}

// controllerManagerPid is the controller manager's process in a node: a
// process of the node's cgroup whose command is kube-controller-manager.
func controllerManagerPid(n *kubeadm.Node) (int, error) {
	es, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, d := range es {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		if filepath.Base(string(argv0)) != "kube-controller-manager" {
			continue
		}
		cg, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cgroup"))
		if strings.Contains(string(cg), ":"+n.Cgroup()+"/") {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no kube-controller-manager process in %s's cgroup", n.Name)
}
