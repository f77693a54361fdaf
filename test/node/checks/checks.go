package checks

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/node"
)

const (
	webPort   = 8080
	clientPod = "client"
	// hostnameLabel is the node label the web pods spread over and the
	// victim pod is pinned by.
	hostnameLabel = "kubernetes.io/hostname"
)

// Env is what the checks run against, and what they learn on the way (the
// Service's address, the prober's windows).
type Env struct {
	Ctx    context.Context
	Client kubernetes.Interface
	// Kubectl is the kubectl binary, Kubeconfig the admin kubeconfig it
	// uses.
	Kubectl, Kubeconfig string
	// Namespace is the test namespace (e.g. "e2e-node"), created by Web; the
	// eviction taint's key and the rollout's annotation are prefixed with it.
	Namespace string
	// Logf receives progress lines; nil discards them.
	Logf func(string, ...any)

	// Tolerations are added to the web, victim and client pods (e.g. the
	// control-plane NoSchedule taint).
	Tolerations []corev1.Toleration
	// Spread gives the web pods a topology spread constraint over
	// kubernetes.io/hostname (maxSkew 1, ScheduleAnyway), so that they land
	// on every node.
	Spread bool
	// TaintNode is the node TaintEviction taints NoExecute; the victim
	// Deployment's pod is pinned to it.
	TaintNode string

	webIP   string
	windows []window
}

// window is a step during which the Service must keep answering.
type window struct {
	name       string
	start, end int64
}

func (e *Env) logf(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	}
}

// evictKey is the key of TaintEviction's NoExecute taint, which the web and
// client pods tolerate and the victim pod does not.
func (e *Env) evictKey() string { return e.Namespace + "/evict" }

// webDNSName is the Service's fully qualified DNS name.
func (e *Env) webDNSName() string { return "web." + e.Namespace + ".svc.cluster.local" }

// WebIP is the Service's ClusterIP, once Web has created it.
func (e *Env) WebIP() string { return e.webIP }

// Poll calls f every half second until it returns true, an error that is
// not retried, or timeout passes; the last reason is in the error.
func (e *Env) Poll(timeout time.Duration, what string, f func() (bool, string, error)) error {
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
		case <-e.Ctx.Done():
			return fmt.Errorf("%s: %w (%s)", what, e.Ctx.Err(), reason)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// PodsRunning checks that exactly want pods matching selector are Running
// and not being deleted.
func (e *Env) PodsRunning(namespace, selector string, want int) error {
	pods, err := e.Client.CoreV1().Pods(namespace).List(e.Ctx, metav1.ListOptions{LabelSelector: selector})
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

// DeploymentReady waits until the Deployment's newest ReplicaSet has every
// replica available and no old pods remain.
func (e *Env) DeploymentReady(namespace, name string, timeout time.Duration) error {
	return e.Poll(timeout, "Deployment "+namespace+"/"+name+" rolled out", func() (bool, string, error) {
		d, err := e.Client.AppsV1().Deployments(namespace).Get(e.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		s, want := d.Status, *d.Spec.Replicas
		ok := s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
		return ok, fmt.Sprintf("generation %d observed %d, replicas %d updated %d available %d, want %d",
			d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, want), nil
	})
}

// tolerations are the caller's, plus the eviction taint's if tolerate.
func (e *Env) tolerations(tolerate bool) []corev1.Toleration {
	t := append([]corev1.Toleration(nil), e.Tolerations...)
	if tolerate {
		t = append(t, corev1.Toleration{Key: e.evictKey(), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
	}
	return t
}

// webDeployment is agnhost netexec behind a readiness probe, rolled with
// no unavailable pod; the main tier tolerates the eviction taint (and
// spreads over the nodes with Spread), the victim tier is pinned to
// victimHost, a kubernetes.io/hostname value ("" pins nothing).
func (e *Env) webDeployment(name, tier string, replicas int32, victimHost string) *appsv1.Deployment {
	labels := map[string]string{"app": "web", "tier": tier}
	main := tier == "main"
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
		Tolerations: e.tolerations(main),
	}
	if main && e.Spread {
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: hostnameLabel, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
		}}
	}
	if !main && victimHost != "" {
		spec.NodeSelector = map[string]string{hostnameLabel: victimHost}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.Namespace},
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

// Web creates the namespace, the web Deployment (3 replicas that tolerate
// the eviction taint), a victim Deployment (1 replica that does not, on
// TaintNode) behind the same Service, and the client pod, whose container
// probes the Service address every second and logs the outcome; then waits
// until the Service answers from the client pod by IP, full DNS name and
// short name.
func (e *Env) Web() error {
	cs := e.Client
	victimHost := ""
	if e.TaintNode != "" {
		n, err := cs.CoreV1().Nodes().Get(e.Ctx, e.TaintNode, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if victimHost = n.Labels[hostnameLabel]; victimHost == "" {
			return fmt.Errorf("node %s has no %s label", e.TaintNode, hostnameLabel)
		}
	}
	ns := e.Namespace
	if _, err := cs.CoreV1().Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	svc, err := cs.CoreV1().Services(ns).Create(e.Ctx, &corev1.Service{
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
	for _, d := range []*appsv1.Deployment{e.webDeployment("web", "main", 3, ""), e.webDeployment("web-victim", "victim", 1, victimHost)} {
		if _, err := cs.AppsV1().Deployments(ns).Create(e.Ctx, d, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	probe := fmt.Sprintf(`while true; do if %s | grep -q '^web-'; then echo "$(date +%%s) ok"; else echo "$(date +%%s) FAIL"; fi; sleep 1; done`, httpGet(e.webIP, 2))
	_, err = cs.CoreV1().Pods(ns).Create(e.Ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: clientPod, Namespace: ns},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Tolerations:                   e.tolerations(true),
			Containers: []corev1.Container{{
				Name: "prober", Image: node.AgnhostImage, Command: []string{"/bin/sh", "-c", probe},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	for _, d := range []string{"web", "web-victim"} {
		if err := e.DeploymentReady(ns, d, 3*time.Minute); err != nil {
			return err
		}
	}
	if err := e.Poll(2*time.Minute, "client pod Running", func() (bool, string, error) {
		p, err := cs.CoreV1().Pods(ns).Get(e.Ctx, clientPod, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase), nil
	}); err != nil {
		return err
	}
	for _, target := range []string{e.webIP, e.webDNSName(), "web"} {
		if err := e.Answers(target, time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// Answers waits until an HTTP GET from the client pod to target answers
// with the name of a web pod.
func (e *Env) Answers(target string, timeout time.Duration) error {
	return e.Poll(timeout, "http://"+target+" answers from a pod", func() (bool, string, error) {
		out, err := e.KubectlOut("exec", "-n", e.Namespace, clientPod, "--", "sh", "-c", httpGet(target, 3)+" | tail -n 1")
		if err != nil {
			return false, err.Error(), nil
		}
		if !strings.HasPrefix(out, "web-") {
			return false, "answer " + out, nil
		}
		e.logf("http://%s/hostname from pod %s: %s", target, clientPod, out)
		return true, "", nil
	})
}

// httpGet is a shell pipeline that GETs /hostname from target, port 80,
// with busybox's nc (Debian's static busybox wget crashes; nc resolves
// names through the pod's DNS like any client).
func httpGet(target string, timeoutSeconds int) string {
	return fmt.Sprintf(`printf 'GET /hostname HTTP/1.0\r\nHost: web\r\n\r\n' | nc -w %d %s 80`, timeoutSeconds, target)
}

// Watched runs f as a window of the prober's record, then checks that the
// Service answers by IP and name.
func (e *Env) Watched(name string, f func() error) func() error {
	return func() error {
		w := window{name: name, start: time.Now().Unix()}
		err := f()
		w.end = time.Now().Unix()
		e.windows = append(e.windows, w)
		if err != nil {
			return err
		}
		if err := e.Answers(e.webIP, 30*time.Second); err != nil {
			return err
		}
		return e.Answers(e.webDNSName(), 2*time.Minute)
	}
}

// Rollout changes web's pod template and waits until it is rolled out.
func (e *Env) Rollout() error {
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:"%d"}}}}}`, e.Namespace+"/revision", time.Now().UnixNano())
	if _, err := e.Client.AppsV1().Deployments(e.Namespace).Patch(e.Ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return err
	}
	return e.DeploymentReady(e.Namespace, "web", 3*time.Minute)
}

// Scale sets the Deployment's replicas and waits until it is rolled out.
func (e *Env) Scale(name string, replicas int32) error {
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := e.Client.AppsV1().Deployments(e.Namespace).Patch(e.Ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return err
	}
	return e.DeploymentReady(e.Namespace, name, 3*time.Minute)
}

// ScaleDown scales web to 1.
func (e *Env) ScaleDown() error { return e.Scale("web", 1) }

// ScaleUp scales web up by one (which needs the controller manager's
// deployment and replicaset controllers).
func (e *Env) ScaleUp() error {
	d, err := e.Client.AppsV1().Deployments(e.Namespace).Get(e.Ctx, "web", metav1.GetOptions{})
	if err != nil {
		return err
	}
	return e.Scale("web", *d.Spec.Replicas+1)
}

// TaintEviction taints TaintNode NoExecute: the controller manager's
// taint-eviction-controller deletes the victim pod (which does not tolerate
// it) and CoreDNS's there; the victim's ReplicaSet's new pod stays Pending;
// the tolerating web pods keep serving. Untainted, everything is back.
func (e *Env) TaintEviction() error {
	if e.TaintNode == "" {
		return fmt.Errorf("no TaintNode")
	}
	cs, ns := e.Client, e.Namespace
	victims, err := cs.CoreV1().Pods(ns).List(e.Ctx, metav1.ListOptions{LabelSelector: "tier=victim"})
	if err != nil || len(victims.Items) != 1 {
		return fmt.Errorf("victim pods: %v (%d)", err, len(victims.Items))
	}
	victim := victims.Items[0]
	if err := e.setTaint(true); err != nil {
		return err
	}
	if err := e.Poll(2*time.Minute, "victim pod "+victim.Name+" evicted", func() (bool, string, error) {
		p, err := cs.CoreV1().Pods(ns).Get(e.Ctx, victim.Name, metav1.GetOptions{})
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
	if err := e.Answers(e.webIP, 30*time.Second); err != nil {
		return err
	}
	if err := e.setTaint(false); err != nil {
		return err
	}
	if err := e.DeploymentReady(ns, "web-victim", 2*time.Minute); err != nil {
		return err
	}
	return e.DeploymentReady("kube-system", "coredns", 3*time.Minute)
}

func (e *Env) setTaint(on bool) error {
	n, err := e.Client.CoreV1().Nodes().Get(e.Ctx, e.TaintNode, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var taints []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key != e.evictKey() {
			taints = append(taints, t)
		}
	}
	if on {
		taints = append(taints, corev1.Taint{Key: e.evictKey(), Value: "true", Effect: corev1.TaintEffectNoExecute})
	}
	n.Spec.Taints = taints
	_, err = e.Client.CoreV1().Nodes().Update(e.Ctx, n, metav1.UpdateOptions{})
	return err
}

// KubectlOut runs kubectl with the admin kubeconfig (30 s at most) and
// returns its output, trimmed.
func (e *Env) KubectlOut(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(e.Ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, e.Kubectl, append([]string{"--kubeconfig=" + e.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// KubectlChecks checks kubectl logs, exec and port-forward on a web pod.
func (e *Env) KubectlChecks() error {
	ns := e.Namespace
	pods, err := e.Client.CoreV1().Pods(ns).List(e.Ctx, metav1.ListOptions{LabelSelector: "tier=main"})
	if err != nil || len(pods.Items) == 0 {
		return fmt.Errorf("web pods: %v", err)
	}
	web := pods.Items[0].Name
	out, err := e.KubectlOut("logs", "-n", ns, web)
	if err != nil {
		return err
	}
	if !strings.Contains(out, "Started HTTP server on port "+strconv.Itoa(webPort)) {
		return fmt.Errorf("kubectl logs %s: no start line in %q", web, out)
	}
	e.logf("kubectl logs %s: ok", web)
	if out, err = e.KubectlOut("exec", "-n", ns, web, "--", "cat", "/etc/hostname"); err != nil {
		return err
	}
	if out != web {
		return fmt.Errorf("kubectl exec %s -- cat /etc/hostname: %q", web, out)
	}
	e.logf("kubectl exec %s: ok", web)
	return e.portForward(web)
}

func (e *Env) portForward(pod string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Kubectl, "--kubeconfig="+e.Kubeconfig, "port-forward", "-n", e.Namespace, "--address=127.0.0.1",
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
	e.logf("kubectl port-forward pod/%s: ok", pod)
	return nil
}

// ProberRecord reads the client's log (kubectl logs) and reports, per
// window, the probes of the Service address that failed. The Service must
// not have been down for more than maxOutage seconds in a row.
func (e *Env) ProberRecord() error {
	const maxOutage = 5
	out, err := e.KubectlOut("logs", "-n", e.Namespace, clientPod)
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
		e.logf("prober during %s (%ds): %d probes, %d failed, longest outage %d probes", w.name, w.end-w.start, total, failed, worst)
		// The prober asks once a second: a window under two seconds
		// may hold no probe at all without any outage (scale-down often
		// takes under a second), so only a longer one must have probes.
		if (total == 0 && w.end-w.start >= 2) || worst > maxOutage {
			bad = append(bad, w.name)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the Service stopped answering during %v", bad)
	}
	return nil
}
