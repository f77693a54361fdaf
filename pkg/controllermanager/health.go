package controllermanager

import (
	"net/http"
	"sync"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
)

// healthPaths are served with the same checks. Upstream serves only
// /healthz (without per-check sub-paths); /livez, /readyz and
// /healthz/<check> are additions that cost no compatibility.
var healthPaths = []string{"/healthz", "/livez", "/readyz"}

// HealthHandler serves /healthz, /livez and /readyz, each with one
// sub-path per check (/healthz/<controller>, /healthz/leaderElection), and
// accepts checks added after it started serving, as controllers start only
// once this instance leads.
type HealthHandler struct {
	mu      sync.RWMutex
	checks  []healthz.HealthChecker
	ready   []healthz.HealthChecker // served under /readyz only
	handler http.Handler
}

// NewHealthHandler returns a handler with the given initial checks (a ping
// check is always present).
func NewHealthHandler(checks ...healthz.HealthChecker) *HealthHandler {
	h := &HealthHandler{}
	h.AddChecks(checks...)
	return h
}

// AddChecks adds checks served under every health path, and ready checks
// served under /readyz only; the handler serves them from the next request
// on.
func (h *HealthHandler) AddChecks(checks ...healthz.HealthChecker) { h.add(checks, nil) }

// AddReadyChecks adds checks served under /readyz only: conditions that
// degrade the service but that a restart cannot fix.
func (h *HealthHandler) AddReadyChecks(checks ...healthz.HealthChecker) { h.add(nil, checks) }

func (h *HealthHandler) add(checks, ready []healthz.HealthChecker) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.checks = append(h.checks, checks...)
	h.ready = append(h.ready, ready...)
	m := mux.NewPathRecorderMux("health")
	for _, p := range healthPaths {
		all := h.checks
		if p == "/readyz" {
			all = append(append([]healthz.HealthChecker(nil), h.checks...), h.ready...)
		}
		healthz.InstallPathHandler(m, p, all...)
	}
	h.handler = m
}

// ServeHTTP implements http.Handler.
func (h *HealthHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.RLock()
	handler := h.handler
	h.mu.RUnlock()
	handler.ServeHTTP(w, r)
}

// Install routes every health path and its sub-paths of m to h.
func (h *HealthHandler) Install(m *mux.PathRecorderMux) {
	for _, p := range healthPaths {
		m.Handle(p, h)
		m.HandlePrefix(p+"/", h)
	}
}
