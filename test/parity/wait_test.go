package parity

import (
	"context"
	"errors"
	"strings"
	"time"

	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSplitJSONPath(t *testing.T) {
	tests := []struct {
		in, template, op, value string
		wantErr                 bool
	}{
		{in: "{.status.phase}=Running", template: "{.status.phase}", op: "=", value: "Running"},
		{in: "{.data.extra}=", template: "{.data.extra}", op: "=", value: ""},
		{in: "{.data.x}!=tampered", template: "{.data.x}", op: "!=", value: "tampered"},
		{in: "{.metadata.annotations.a\\.b/c}", template: "{.metadata.annotations.a\\.b/c}", op: "present"},
		{in: `{.items[?(@.x=="y")].name}=n`, template: `{.items[?(@.x=="y")].name}`, op: "=", value: "n"},
		{in: "{.a}={b}", template: "{.a}", op: "=", value: "{b}"},
		{in: ".a=b", wantErr: true},
		{in: "{.a", wantErr: true},
		{in: "{.a}x", wantErr: true},
	}
	for _, tc := range tests {
		tmpl, op, v, err := splitJSONPath(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if tmpl != tc.template || op != tc.op || v != tc.value {
			t.Errorf("%q: got (%q, %q, %q), want (%q, %q, %q)", tc.in, tmpl, op, v, tc.template, tc.op, tc.value)
		}
	}
}

func TestRenderJSONPathAndConditions(t *testing.T) {
	o := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"kubernetes.io/description": "d"}},
		"data":     map[string]any{"ca.crt": "pem"},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
			map[string]any{"type": "Progressing", "status": "False"},
		}},
	}}
	for tmpl, want := range map[string]string{
		`{.data.ca\.crt}`: "pem",
		`{.data.extra}`:   "",
		`{.metadata.annotations.kubernetes\.io/description}`: "d",
	} {
		got, err := renderJSONPath(tmpl, o)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", tmpl, got, err, want)
		}
	}
	if s := conditionStatus(o, "Progressing"); s != "False" {
		t.Errorf("Progressing is %q", s)
	}
	if s := conditionStatus(o, "Missing"); s != "" {
		t.Errorf("Missing is %q", s)
	}
}

func TestSetContainerImage(t *testing.T) {
	deploy := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"initContainers": []any{map[string]any{"name": "init", "image": "busybox:1"}},
		"containers":     []any{map[string]any{"name": "app", "image": "nginx:1"}, map[string]any{"name": "side", "image": "envoy:1"}},
	}}}}
	if !setContainerImage(deploy, "app", "nginx:2") {
		t.Fatal("container app not found")
	}
	cs, _, _ := unstructured.NestedSlice(deploy, "spec", "template", "spec", "containers")
	if cs[0].(map[string]any)["image"] != "nginx:2" || cs[1].(map[string]any)["image"] != "envoy:1" {
		t.Errorf("containers: %v", cs)
	}
	if !setContainerImage(deploy, "init", "busybox:2") {
		t.Error("init container not found")
	}
	if setContainerImage(deploy, "nope", "x") {
		t.Error("found a container that does not exist")
	}
	pod := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "a"}}}}
	if !setContainerImage(pod, "app", "b") {
		t.Error("pod container not found")
	}
	cron := map[string]any{"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "job", "image": "a"}},
	}}}}}}
	if !setContainerImage(cron, "job", "b") {
		t.Error("cronjob container not found")
	}
}

func TestPollReportsLastState(t *testing.T) {
	calls := 0
	err := poll(context.Background(), 600*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		calls++
		if calls == 1 {
			return false, "", errors.New("transient")
		}
		<-ctx.Done() // a call the deadline cuts short
		return false, "", ctx.Err()
	})
	if err == nil || !strings.Contains(err.Error(), "transient") {
		t.Errorf("err %v, want the last real error", err)
	}
	err = poll(context.Background(), 300*time.Millisecond, func(context.Context) (bool, string, error) {
		return false, "3 objects", nil
	})
	if err == nil || !strings.Contains(err.Error(), "3 objects") {
		t.Errorf("err %v, want the last state", err)
	}
	if err := poll(context.Background(), time.Second, func(context.Context) (bool, string, error) { return true, "", nil }); err != nil {
		t.Errorf("done at once: %v", err)
	}
}
