package parity

import (
	"strings"
	"testing"
)

func TestParseEvictStep(t *testing.T) {
	const head = "capture: [{kind: Pod}]\nsteps:\n"
	tests := []struct{ step, wantErr string }{
		{"- evict: {namespace: ns, name: p, expect: allowed}", ""},
		{"- evict: {namespace: ns, selector: app=web, expect: refused}", ""},
		{"- evict: {namespace: ns, expect: allowed}", "either name or selector"},
		{"- evict: {namespace: ns, name: p, selector: app=web, expect: allowed}", "either name or selector"},
		{"- evict: {name: p, expect: allowed}", "namespace"},
		{"- evict: {namespace: ns, name: p}", `expect ""`},
		{"- evict: {namespace: ns, name: p, expect: maybe}", `expect "maybe"`},
	}
	for _, tc := range tests {
		s, err := ParseScenario([]byte(head + tc.step))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.step, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: err %v, want %q", tc.step, err, tc.wantErr)
		case err == nil && !strings.HasPrefix(s.Steps[0].String(), "evict ns/"):
			t.Errorf("%s: String() = %q", tc.step, s.Steps[0].String())
		}
	}
}
