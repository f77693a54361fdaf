package kcm

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// holdLease makes the Lease name held by another identity for an hour,
// as a running leader would hold it.
func holdLease(t *testing.T, name string) {
	t.Helper()
	other, duration := "someone-else", int32(3600)
	now := metav1.NowMicro()
	if _, err := adminClient(t).CoordinationV1().Leases("kube-system").Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &other, LeaseDurationSeconds: &duration,
			AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var restRequests = regexp.MustCompile(`(?m)^rest_client_requests_total\{code="[^"]*",host="[^"]*",method="([A-Z]+)"\} ([0-9.e+]+)$`)

// requestsByMethod returns the process's API requests so far, by HTTP
// method, from its own /metrics (client-go's rest_client_requests_total).
func requestsByMethod(t *testing.T, p *process) map[string]int {
	t.Helper()
	out, err := scrapeRequests(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func scrapeRequests(p *process) (map[string]int, error) {
	code, body, err := get(fmt.Sprintf("https://127.0.0.1:%d/metrics", p.port), "")
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d", code)
	}
	out := map[string]int{}
	for _, m := range restRequests.FindAllStringSubmatch(body, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, err
		}
		out[m[1]] += int(v)
	}
	return out, nil
}

// TestWarmStandby: while another instance holds the Lease, a standby
// lists and watches what its controllers need and writes nothing; once it
// takes the Lease its controllers act. With --kcm-warm-standby=false the
// standby is upstream's: it lists nothing until it leads.
func TestWarmStandby(t *testing.T) {
	args := []string{
		"--controllers=*,bootstrapsigner,tokencleaner",
		// Scraped without credentials, so that reading /metrics makes no
		// TokenReview or SubjectAccessReview (POSTs) of its own.
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
		"--leader-elect-lease-duration=20s", "--leader-elect-renew-deadline=15s", "--leader-elect-retry-period=1s",
	}
	holdLease(t, "kcm-warm")
	holdLease(t, "kcm-cold")
	warm := start(t, append(args, "--leader-elect-resource-name=kcm-warm")...)
	cold := start(t, append(args, "--leader-elect-resource-name=kcm-cold", "--kcm-warm-standby=false")...)

	// The warm standby's informers list: at least one GET per resource its
	// controllers watch (more than 40 with every controller on).
	var warmRequests map[string]int
	framework.Poll(t, 30*time.Second, "the warm standby to list its informers' resources", func(context.Context) (bool, error) {
		var err error
		if warmRequests, err = scrapeRequests(warm); err != nil {
			return false, nil // not serving yet
		}
		return warmRequests["GET"] > 40, nil
	})
	coldRequests := requestsByMethod(t, cold)
	t.Logf("standby requests: warm %v, cold %v", warmRequests, coldRequests)
	for _, c := range []struct {
		name string
		p    *process
	}{{"warm", warm}, {"cold", cold}} {
		for method, n := range requestsByMethod(t, c.p) {
			if method != "GET" {
				t.Errorf("the %s standby made %d %s requests; a standby writes nothing", c.name, n, method)
			}
		}
		if out := c.p.Log(); regexp.MustCompile(`Controller starting`).MatchString(out) {
			t.Errorf("the %s standby started controllers", c.name)
		}
	}
	// The cold standby only reads its Lease (once a second here) and the
	// serving configuration: far fewer GETs than one per informer.
	if got := requestsByMethod(t, cold)["GET"]; got >= warmRequests["GET"]/2 {
		t.Errorf("the cold standby made %d GETs, the warm one %d: the cold one lists too", got, warmRequests["GET"])
	}

	// The Lease is free: the warm standby leads and its controllers act.
	freed := time.Now()
	if err := adminClient(t).CoordinationV1().Leases("kube-system").Delete(context.Background(), "kcm-warm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := createNamespace(t)
	waitDefaultServiceAccount(t, ns, 30*time.Second)
	t.Logf("the warm standby's first ServiceAccount %s after the Lease was freed", time.Since(freed).Round(time.Millisecond))
}
