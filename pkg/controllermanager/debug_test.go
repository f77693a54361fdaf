package controllermanager

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/server/mux"
)

type debuggable struct{ name string }

func (d debuggable) Name() string        { return d.name }
func (d debuggable) Run(context.Context) {}
func (d debuggable) DebuggingHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "path="+r.URL.Path) })
}

// The debugging handler is served under the canonical name (upstream v1.37)
// and under the alias (upstream before canonical names).
func TestDebugHandlerPaths(t *testing.T) {
	m := mux.NewPathRecorderMux("test")
	installDebug(m, debuggable{name: "garbage-collector-controller"}, []string{"garbagecollector"})
	for _, path := range []string{
		"/debug/controllers/garbage-collector-controller/graph",
		"/debug/controllers/garbagecollector/graph",
	} {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK || rec.Body.String() != "path=/graph" {
			t.Errorf("%s: %d %q, want 200 path=/graph", path, rec.Code, rec.Body.String())
		}
	}
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/controllers/other/graph", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("other controller's path: %d, want 404", rec.Code)
	}
}
