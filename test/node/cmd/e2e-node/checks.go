package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/node"
)

const (
	dnsIP     = "10.96.0.10"
	ns        = "e2e-node"
	evictKey  = "e2e-node/evict"
	webPort   = 8080
	clientPod = "client"
)

type env struct {
	ctx                       context.Context
	c                         *cluster.Cluster
	n                         *node.Node
	o                         options
	dyn                       dynamic.Interface
	nodeName, server, kubectl string
	tok                       node.Token
	webIP                     string
	windows                   []window
}

// window is a step during which the Service must keep answering.
type window struct {
	name       string
	start, end int64
}

func (e *env) all() error {
	steps := []struct {
		name string
		f    func() error
	}{
		{"bootstrap token, cluster-info and kubeadm's RBAC", e.initBootstrap},
		{"containerd up and images imported", func() error { return e.n.StartRuntime(e.ctx) }},
		{"node joined through its bootstrap CSR", e.join},
		{"node got a podCIDR and is Ready", e.nodeReady},
		{"kube-proxy and CoreDNS Running", e.addons},
		{"HTTP Deployment behind a ClusterIP Service answers by IP and DNS name from a pod", e.web},
		{"rollout keeps the Service answering", e.watched("rollout", e.rollout)},
		{"scale-down keeps the Service answering", e.watched("scale-down", e.scaleDown)},
		{"eviction by a NoExecute taint keeps the Service answering", e.watched("taint eviction", e.taintEviction)},
		{"controller manager restart (SIGTERM) keeps the Service answering", e.watched("restart", e.restart(false))},
		{"controller manager kill -9 keeps the Service answering", e.watched("kill -9", e.restart(true))},
		{"kubectl logs, exec and port-forward", e.kubectlChecks},
		{"the in-pod prober's record", e.proberRecord},
	}
	for i, s := range steps {
		t := time.Now()
		log.Printf("e2e-node: [%d/%d] %s", i+1, len(steps), s.name)
		if err := s.f(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		log.Printf("e2e-node: [%d/%d] ok in %v", i+1, len(steps), time.Since(t).Round(time.Millisecond))
	}
	return nil
}

// poll calls f every interval until it returns true, an error that is not
// retried, or timeout passes; the last reason is in the error.
func (e *env) poll(timeout time.Duration, what string, f func() (bool, string, error)) error {
	deadline := time.Now().Add(timeout)
	reason := ""
	for {
		ok, r, err := f()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		reason = r
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v: %s", what, timeout, reason)
		}
		select {
		case <-e.ctx.Done():
			return fmt.Errorf("%s: %w (%s)", what, e.ctx.Err(), reason)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (e *env) initBootstrap() error {
	ca, err := readFile(e.c.PKI.CACert)
	if err != nil {
		return err
	}
	e.tok, err = node.InitBootstrap(e.ctx, e.c.Client, func(name string) error { return node.Apply(e.ctx, e.dyn, name, e.values()) }, e.server, ca)
	return err
}

func (e *env) values() node.Values {
	return node.Values{
		ControlPlaneEndpoint: e.server, ClusterCIDR: cluster.DefaultClusterCIDR, DNSIP: dnsIP, DNSDomain: "cluster.local",
		KubeProxyImage: node.KubeProxyImage, CoreDNSImage: node.CoreDNSImage,
	}
}

// join discovers the cluster through the signed cluster-info, starts the
// kubelet with the bootstrap token, and checks that its client certificate
// came from a CSR of the token's user that the controller manager approved
// and signed.
func (e *env) join() error {
	kc, err := node.Discover(e.ctx, e.server, e.tok, 2*time.Minute)
	if err != nil {
		return err
	}
	log.Printf("e2e-node: cluster-info verified with the bootstrap signer's signature for token %s", e.tok.ID)
	if err := e.n.StartKubelet(kc, e.tok); err != nil {
		return err
	}
	user := "system:bootstrap:" + e.tok.ID
	if err := e.poll(2*time.Minute, "CSR of "+user+" approved and issued", func() (bool, string, error) {
		if !e.n.KubeletRunning() {
			return false, "", fmt.Errorf("the kubelet exited (see its log)")
		}
		csrs, err := e.c.Client.CertificatesV1().CertificateSigningRequests().List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, csr := range csrs.Items {
			if csr.Spec.Username != user || csr.Spec.SignerName != certv1.KubeAPIServerClientKubeletSignerName {
				continue
			}
			approved := false
			for _, c := range csr.Status.Conditions {
				approved = approved || (c.Type == certv1.CertificateApproved && c.Status == corev1.ConditionTrue)
			}
			if approved && len(csr.Status.Certificate) > 0 {
				log.Printf("e2e-node: CSR %s of %s approved and issued", csr.Name, user)
				return true, "", nil
			}
			return false, fmt.Sprintf("CSR %s approved=%v issued=%v", csr.Name, approved, len(csr.Status.Certificate) > 0), nil
		}
		return false, "no CSR yet", nil
	}); err != nil {
		return err
	}
	return e.poll(2*time.Minute, "Node "+e.nodeName+" registered", func() (bool, string, error) {
		_, err := e.c.Client.CoreV1().Nodes().Get(e.ctx, e.nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

func (e *env) nodeReady() error {
	var cidr string
	if err := e.poll(2*time.Minute, "podCIDR allocated", func() (bool, string, error) {
		n, err := e.c.Client.CoreV1().Nodes().Get(e.ctx, e.nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		cidr = n.Spec.PodCIDR
		return cidr != "", "no podCIDR", nil
	}); err != nil {
		return err
	}
	log.Printf("e2e-node: podCIDR %s", cidr)
	if err := e.n.WriteCNIConfig(cidr); err != nil {
		return err
	}
	return e.poll(2*time.Minute, "Node Ready", func() (bool, string, error) {
		n, err := e.c.Client.CoreV1().Nodes().Get(e.ctx, e.nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, c.Reason + ": " + c.Message, nil
			}
		}
		return false, "no Ready condition", nil
	})
}

func (e *env) addons() error {
	for _, m := range []string{"kube-proxy", "coredns"} {
		if err := node.Apply(e.ctx, e.dyn, m, e.values()); err != nil {
			return err
		}
	}
	if err := e.poll(3*time.Minute, "DaemonSet kube-proxy ready", func() (bool, string, error) {
		ds, err := e.c.Client.AppsV1().DaemonSets("kube-system").Get(e.ctx, "kube-proxy", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		s := ds.Status
		return s.DesiredNumberScheduled == 1 && s.NumberReady == 1, fmt.Sprintf("%+v", s), nil
	}); err != nil {
		return err
	}
	if err := e.deploymentReady("kube-system", "coredns", 3*time.Minute); err != nil {
		return err
	}
	return e.podsRunning("kube-system", "k8s-app in (kube-proxy,kube-dns)", 3)
}

func (e *env) podsRunning(namespace, selector string, want int) error {
	pods, err := e.c.Client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running++
		}
	}
	if running != want {
		return fmt.Errorf("%d pods Running for %s, want %d", running, selector, want)
	}
	return nil
}

// deploymentReady waits until the Deployment's newest ReplicaSet has every
// replica available and no old pods remain.
func (e *env) deploymentReady(namespace, name string, timeout time.Duration) error {
	return e.poll(timeout, "Deployment "+namespace+"/"+name+" rolled out", func() (bool, string, error) {
		d, err := e.c.Client.AppsV1().Deployments(namespace).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		s, want := d.Status, *d.Spec.Replicas
		ok := s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
		return ok, fmt.Sprintf("generation %d observed %d, replicas %d updated %d available %d, want %d",
			d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, want), nil
	})
}

func webDeployment(name, tier string, replicas int32, tolerate bool) *appsv1.Deployment {
	labels := map[string]string{"app": "web", "tier": tier}
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](10),
		Containers: []corev1.Container{{
			Name:  "web",
			Image: node.AgnhostImage,
			Args:  []string{"netexec", "--http-port=" + strconv.Itoa(webPort)},
			Ports: []corev1.ContainerPort{{ContainerPort: webPort}},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/hostname", Port: intstr.FromInt32(webPort)}},
				PeriodSeconds: 1,
			},
			// Terminating pods keep serving until kube-proxy has taken
			// them out of the Service.
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 3}}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
		}},
	}
	if tolerate {
		spec.Tolerations = []corev1.Toleration{{Key: evictKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(1)),
			}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// web creates the web Deployment (3 replicas that tolerate the eviction
// taint), a victim Deployment (1 replica that does not) behind the same
// Service, and the client pod, whose container probes the Service address
// every second and logs the outcome.
func (e *env) web() error {
	cs := e.c.Client
	if _, err := cs.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	svc, err := cs.CoreV1().Services(ns).Create(e.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(webPort)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	e.webIP = svc.Spec.ClusterIP
	for _, d := range []*appsv1.Deployment{webDeployment("web", "main", 3, true), webDeployment("web-victim", "victim", 1, false)} {
		if _, err := cs.AppsV1().Deployments(ns).Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	probe := fmt.Sprintf(`while true; do if %s | grep -q '^web-'; then echo "$(date +%%s) ok"; else echo "$(date +%%s) FAIL"; fi; sleep 1; done`, httpGet(e.webIP, 2))
	_, err = cs.CoreV1().Pods(ns).Create(e.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: clientPod, Namespace: ns},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Tolerations:                   []corev1.Toleration{{Key: evictKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			Containers: []corev1.Container{{
				Name: "prober", Image: node.AgnhostImage, Command: []string{"/bin/sh", "-c", probe},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	for _, d := range []string{"web", "web-victim"} {
		if err := e.deploymentReady(ns, d, 3*time.Minute); err != nil {
			return err
		}
	}
	if err := e.poll(2*time.Minute, "client pod Running", func() (bool, string, error) {
		p, err := cs.CoreV1().Pods(ns).Get(e.ctx, clientPod, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase), nil
	}); err != nil {
		return err
	}
	for _, target := range []string{e.webIP, "web.e2e-node.svc.cluster.local", "web"} {
		if err := e.answers(target, time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// answers waits until an HTTP GET from the client pod to target answers
// with the name of a web pod.
func (e *env) answers(target string, timeout time.Duration) error {
	return e.poll(timeout, "http://"+target+" answers from a pod", func() (bool, string, error) {
		out, err := e.kubectlOut("exec", "-n", ns, clientPod, "--", "sh", "-c", httpGet(target, 3)+" | tail -n 1")
		if err != nil {
			return false, err.Error(), nil
		}
		if !strings.HasPrefix(out, "web-") {
			return false, "answer " + out, nil
		}
		log.Printf("e2e-node: http://%s/hostname from pod %s: %s", target, clientPod, out)
		return true, "", nil
	})
}

// httpGet is a shell pipeline that GETs /hostname from target, port 80,
// with busybox's nc (Debian's static busybox wget crashes; nc resolves
// names through the pod's DNS like any client).
func httpGet(target string, timeoutSeconds int) string {
	return fmt.Sprintf(`printf 'GET /hostname HTTP/1.0\r\nHost: web\r\n\r\n' | nc -w %d %s 80`, timeoutSeconds, target)
}

// watched runs f as a window of the prober's record, then checks that the
// Service answers by IP and name.
func (e *env) watched(name string, f func() error) func() error {
	return func() error {
		w := window{name: name, start: time.Now().Unix()}
		err := f()
		w.end = time.Now().Unix()
		e.windows = append(e.windows, w)
		if err != nil {
			return err
		}
		if err := e.answers(e.webIP, 30*time.Second); err != nil {
			return err
		}
		return e.answers("web.e2e-node.svc.cluster.local", 2*time.Minute)
	}
}

func (e *env) rollout() error {
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"e2e-node/revision":"%d"}}}}}`, time.Now().UnixNano())
	if _, err := e.c.Client.AppsV1().Deployments(ns).Patch(e.ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return err
	}
	return e.deploymentReady(ns, "web", 3*time.Minute)
}

func (e *env) scale(name string, replicas int32) error {
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := e.c.Client.AppsV1().Deployments(ns).Patch(e.ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return err
	}
	return e.deploymentReady(ns, name, 3*time.Minute)
}

func (e *env) scaleDown() error { return e.scale("web", 1) }

// taintEviction taints the node NoExecute: the controller manager's
// taint-eviction-controller deletes the victim pod (which does not tolerate
// it) and CoreDNS's; its ReplicaSet's new pod stays Pending; the tolerating
// web pod keeps serving. Untainted, everything is back.
func (e *env) taintEviction() error {
	cs := e.c.Client
	victims, err := cs.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "tier=victim"})
	if err != nil || len(victims.Items) != 1 {
		return fmt.Errorf("victim pods: %v (%d)", err, len(victims.Items))
	}
	victim := victims.Items[0]
	if err := e.setTaint(true); err != nil {
		return err
	}
	if err := e.poll(2*time.Minute, "victim pod "+victim.Name+" evicted", func() (bool, string, error) {
		p, err := cs.CoreV1().Pods(ns).Get(e.ctx, victim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && p.UID != victim.UID) {
			return true, "", nil
		}
		if err != nil {
			return false, err.Error(), nil
		}
		return false, "still there, deletionTimestamp " + fmt.Sprint(p.DeletionTimestamp), nil
	}); err != nil {
		return err
	}
	if err := e.answers(e.webIP, 30*time.Second); err != nil {
		return err
	}
	if err := e.setTaint(false); err != nil {
		return err
	}
	if err := e.deploymentReady(ns, "web-victim", 2*time.Minute); err != nil {
		return err
	}
	return e.deploymentReady("kube-system", "coredns", 3*time.Minute)
}

func (e *env) setTaint(on bool) error {
	n, err := e.c.Client.CoreV1().Nodes().Get(e.ctx, e.nodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var taints []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key != evictKey {
			taints = append(taints, t)
		}
	}
	if on {
		taints = append(taints, corev1.Taint{Key: evictKey, Value: "true", Effect: corev1.TaintEffectNoExecute})
	}
	n.Spec.Taints = taints
	_, err = e.c.Client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{})
	return err
}

// restart stops the controller manager (SIGTERM, or SIGKILL), checks the
// Service answers while none runs, starts it again, waits until it leads,
// and scales web up by one (which needs its deployment and replicaset
// controllers).
func (e *env) restart(kill bool) func() error {
	return func() error {
		stop := e.c.StopControllerManager
		if kill {
			stop = e.c.KillControllerManager
		}
		if err := stop(); err != nil {
			return err
		}
		if err := e.answers(e.webIP, 30*time.Second); err != nil {
			return err
		}
		if err := e.c.StartControllerManager(e.ctx); err != nil {
			return err
		}
		t := time.Now()
		if err := e.c.WaitForControllerManagerLeader(e.ctx); err != nil {
			return err
		}
		log.Printf("e2e-node: the new controller manager leads after %v", time.Since(t).Round(time.Millisecond))
		d, err := e.c.Client.AppsV1().Deployments(ns).Get(e.ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return e.scale("web", *d.Spec.Replicas+1)
	}
}

func (e *env) kubectlOut(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, e.kubectl, append([]string{"--kubeconfig=" + e.c.AdminKubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func (e *env) kubectlChecks() error {
	pods, err := e.c.Client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "tier=main"})
	if err != nil || len(pods.Items) == 0 {
		return fmt.Errorf("web pods: %v", err)
	}
	web := pods.Items[0].Name
	out, err := e.kubectlOut("logs", "-n", ns, web)
	if err != nil {
		return err
	}
	if !strings.Contains(out, "Started HTTP server on port "+strconv.Itoa(webPort)) {
		return fmt.Errorf("kubectl logs %s: no start line in %q", web, out)
	}
	log.Printf("e2e-node: kubectl logs %s: ok", web)
	if out, err = e.kubectlOut("exec", "-n", ns, web, "--", "cat", "/etc/hostname"); err != nil {
		return err
	}
	if out != web {
		return fmt.Errorf("kubectl exec %s -- cat /etc/hostname: %q", web, out)
	}
	log.Printf("e2e-node: kubectl exec %s: ok", web)
	return e.portForward(web)
}

func (e *env) portForward(pod string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.kubectl, "--kubeconfig="+e.c.AdminKubeconfig, "port-forward", "-n", ns, "--address=127.0.0.1",
		"pod/"+pod, fmt.Sprintf("%d:%d", port, webPort))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "Forwarding from") {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("kubectl port-forward did not start")
	}
	res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/hostname", port))
	if err != nil {
		return fmt.Errorf("through kubectl port-forward: %w", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if string(b) != pod {
		return fmt.Errorf("through kubectl port-forward: %q, want %q", b, pod)
	}
	log.Printf("e2e-node: kubectl port-forward pod/%s: ok", pod)
	return nil
}

// proberRecord reads the client's log (kubectl logs) and reports, per
// window, the probes of the Service address that failed. The Service must
// not have been down for more than maxOutage seconds in a row.
func (e *env) proberRecord() error {
	const maxOutage = 5
	out, err := e.kubectlOut("logs", "-n", ns, clientPod)
	if err != nil {
		return err
	}
	type probe struct {
		t  int64
		ok bool
	}
	var probes []probe
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		t, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		probes = append(probes, probe{t, f[1] == "ok"})
	}
	var bad []string
	for _, w := range e.windows {
		total, failed, run, worst := 0, 0, 0, 0
		for _, p := range probes {
			if p.t < w.start || p.t > w.end {
				continue
			}
			total++
			if p.ok {
				run = 0
				continue
			}
			failed++
			run++
			worst = max(worst, run)
		}
		log.Printf("e2e-node: prober during %s (%ds): %d probes, %d failed, longest outage %d probes", w.name, w.end-w.start, total, failed, worst)
		if total == 0 || worst > maxOutage {
			bad = append(bad, w.name)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the Service stopped answering during %v", bad)
	}
	return nil
}
