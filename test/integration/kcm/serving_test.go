package kcm

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

var rateLimitedPOST = regexp.MustCompile(`\nrest_client_rate_limiter_duration_seconds_count\{host="[^"]+",verb="POST"\} [1-9]`)

func get(url, token string) (int, string, error) {
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, // self-signed serving cert
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// metricsReaderToken returns a token of a ServiceAccount allowed to GET
// /metrics by RBAC, as a Prometheus scraper would have.
func metricsReaderToken(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	c := adminClient(t)
	name := "metrics-reader"
	if _, err := c.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := c.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

func TestServingAuthMatrix(t *testing.T) {
	p := start(t, "--leader-elect-resource-name=serving")
	base := fmt.Sprintf("https://127.0.0.1:%d", p.port)

	framework.Poll(t, 30*time.Second, "anonymous /healthz 200", func(context.Context) (bool, error) {
		code, _, err := get(base+"/healthz", "")
		return code == http.StatusOK, err
	})
	if code, body, err := get(base+"/livez", ""); err != nil || code != http.StatusOK {
		t.Errorf("anonymous /livez = %d %q (%v), want 200", code, body, err)
	}
	// /readyz also waits for readiness checks (the garbage collector's
	// monitors to sync).
	framework.Poll(t, 30*time.Second, "anonymous /readyz 200", func(context.Context) (bool, error) {
		code, _, err := get(base+"/readyz", "")
		return code == http.StatusOK, err
	})
	// Per-check paths are not in the default always-allow list.
	if code, _, err := get(base+"/healthz/leaderElection", ""); err != nil || code != http.StatusForbidden {
		t.Errorf("anonymous /healthz/leaderElection = %d (%v), want 403", code, err)
	}
	if code, body, err := get(base+"/metrics", ""); err != nil || code != http.StatusForbidden {
		t.Errorf("anonymous /metrics = %d %q (%v), want 403", code, body, err)
	}
	if code, _, err := get(base+"/metrics", "not-a-valid-token"); err != nil || code != http.StatusUnauthorized {
		t.Errorf("/metrics with a bad token = %d (%v), want 401", code, err)
	}

	token := metricsReaderToken(t)
	wantMetrics := []string{"rest_client_requests_total", "leader_election_master_status", "kubernetes_build_info",
		`workqueue_adds_total{name="serviceaccount"}`}
	if _, set := os.LookupEnv("GOGC"); !set {
		// kcm's own default (cmd/kube-controller-manager/main.go).
		wantMetrics = append(wantMetrics, "\ngo_gc_gogc_percent 60\n")
	}
	framework.Poll(t, 30*time.Second, "authorized /metrics 200 with upstream's metric names", func(context.Context) (bool, error) {
		code, body, err := get(base+"/metrics", token)
		if code != http.StatusOK {
			return false, err
		}
		for _, m := range wantMetrics {
			if !strings.Contains(body, m) {
				return false, fmt.Errorf("/metrics lacks %s", m)
			}
		}
		// A controller's writes wait for client-go's rate limiter,
		// under its metric.
		if !rateLimitedPOST.MatchString(body) {
			return false, fmt.Errorf("/metrics lacks %s", rateLimitedPOST)
		}
		return true, nil
	})
	// The same token is not allowed /configz: authorization is per path.
	if code, _, err := get(base+"/configz", token); err != nil || code != http.StatusForbidden {
		t.Errorf("/configz with the metrics token = %d (%v), want 403", code, err)
	}
}

func TestConfigzShowsFlags(t *testing.T) {
	p := start(t, "--leader-elect=false", "--controllers=serviceaccount", "--concurrent-deployment-syncs=7", "--authorization-always-allow-paths=/healthz,/healthz/*,/configz")
	base := fmt.Sprintf("https://127.0.0.1:%d", p.port)
	var body string
	framework.Poll(t, 30*time.Second, "/configz 200", func(context.Context) (bool, error) {
		code, b, err := get(base+"/configz", "")
		body = b
		return code == http.StatusOK, err
	})
	// One health check per running controller.
	framework.Poll(t, 30*time.Second, "/healthz/serviceaccount-controller 200", func(context.Context) (bool, error) {
		code, _, err := get(base+"/healthz/serviceaccount-controller", "")
		return code == http.StatusOK, err
	})
	if code, _, err := get(base+"/healthz/root-ca-certificate-publisher-controller", ""); err != nil || code != http.StatusNotFound {
		t.Errorf("/healthz/ of a controller not enabled = %d (%v), want 404", code, err)
	}
	for _, want := range []string{`"kubecontrollermanager.config.k8s.io"`, `"ConcurrentDeploymentSyncs":7`, `"kind":"KubeControllerManagerConfiguration"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/configz lacks %s:\n%s", want, body)
		}
	}
}
