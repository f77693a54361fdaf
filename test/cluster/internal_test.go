package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLeaderElection(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		ns, name  string
		wantElect bool
	}{
		{nil, "kube-system", "kube-controller-manager", true},
		{[]string{"--leader-elect=true", "--leader-elect=false"}, "kube-system", "kube-controller-manager", false},
		{[]string{"--leader-elect", "--leader-elect-resource-name=b", "--leader-elect-resource-namespace=x"}, "x", "b", true},
	} {
		ns, name, elect := leaderElection(tc.args)
		if ns != tc.ns || name != tc.name || elect != tc.wantElect {
			t.Errorf("leaderElection(%q) = %q %q %v, want %q %q %v", tc.args, ns, name, elect, tc.ns, tc.name, tc.wantElect)
		}
	}
}

func TestAllocatePorts(t *testing.T) {
	ports, err := allocatePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	low := ephemeralLow()
	for _, p := range ports {
		if seen[p] {
			t.Errorf("port %d twice in %v", p, ports)
		}
		seen[p] = true
		if p < minPort || (low >= minPort+1000 && p >= low) {
			t.Errorf("port %d outside [%d, %d)", p, minPort, low)
		}
	}
}

func TestControllerManagerArgsAreKubeadms(t *testing.T) {
	c := &Cluster{
		PKI:                         newPKI("/p"),
		ControllerManagerKubeconfig: "/w/controller-manager.conf",
		Ports:                       Ports{ControllerManager: 10257},
		opts:                        Options{ClusterName: "kind"},
	}
	got := strings.Join(c.ControllerManagerArgs("--v=2"), " ")
	want := "--allocate-node-cidrs=true --authentication-kubeconfig=/w/controller-manager.conf " +
		"--authorization-kubeconfig=/w/controller-manager.conf --bind-address=127.0.0.1 " +
		"--client-ca-file=/p/ca.crt --cluster-cidr=10.244.0.0/16 --cluster-name=kind " +
		"--cluster-signing-cert-file=/p/ca.crt --cluster-signing-key-file=/p/ca.key " +
		"--controllers=*,bootstrapsigner,tokencleaner --kubeconfig=/w/controller-manager.conf " +
		"--leader-elect=true --requestheader-client-ca-file=/p/front-proxy-ca.crt --root-ca-file=/p/ca.crt " +
		"--secure-port=10257 --service-account-private-key-file=/p/sa.key " +
		"--service-cluster-ip-range=10.96.0.0/16 --use-service-account-credentials=true --v=2"
	if got != want {
		t.Errorf("args:\n got %s\nwant %s", got, want)
	}
}

func TestReadAuditEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	log := `{"auditID":"a","stage":"ResponseComplete","verb":"get","user":{"username":"system:kube-controller-manager"}}
{"auditID":"b","stage":"ResponseStarted","verb":"watch","user":{"username":"system:serviceaccount:kube-system:x"},"objectRef":{"resource":"pods"}}
{"auditID":"b","stage":"ResponseComplete","verb":"watch","user":{"username":"system:serviceaccount:kube-system:x"},"objectRef":{"resource":"pods"},"responseStatus":{"code":200}}
`
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	events, err := ReadAuditEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[1].Stage != "ResponseComplete" || events[1].ObjectRef.Resource != "pods" || events[1].ResponseStatus.Code != 200 {
		t.Errorf("events = %+v", events)
	}
}

func TestStagesWarning(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "pod-ready.yaml")
	if err := os.WriteFile(ready, []byte(`key: '.status.conditions.[] | select( .type == "Initialized" ) | .status'`), 0o644); err != nil {
		t.Fatal(err)
	}
	if stagesWarning([]string{ready}) == "" {
		t.Error("no warning for pod/general's pod-ready alone")
	}
	if err := os.WriteFile(ready, []byte(`key: '.status.conditions.[] | select( .type == "Ready" ) | .status'`), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := stagesWarning([]string{ready}); w != "" {
		t.Errorf("warning for pod/fast's pod-ready: %s", w)
	}
}

func TestPartitionArgs(t *testing.T) {
	main := []string{"--kubeconfig=k", "--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeAnnotationValue, "--server-address=127.0.0.1:1", "--config=s"}
	got := partitionArgs(main, "outage", 2)
	want := []string{"--kubeconfig=k", "--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=outage", "--server-address=127.0.0.1:2", "--config=s"}
	if !slices.Equal(got, want) {
		t.Errorf("partitionArgs = %v, want %v", got, want)
	}
}
