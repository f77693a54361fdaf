package controller

import (
	"testing"

	apps "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestWritten(t *testing.T) {
	at := func(rv string, uid types.UID) *apps.Deployment {
		return &apps.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: rv, UID: uid,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kcm"}}}}
	}
	tests := []struct {
		name      string
		written   *apps.Deployment
		cached    *apps.Deployment
		wantRV    string // "" for nil
		forgotten bool
	}{
		{name: "nothing written", cached: at("5", "u"), wantRV: "5", forgotten: true},
		{name: "cache behind our write", written: at("7", "u"), cached: at("5", "u"), wantRV: "7"},
		{name: "cache caught up", written: at("7", "u"), cached: at("7", "u"), wantRV: "7", forgotten: true},
		{name: "cache ahead", written: at("7", "u"), cached: at("9", "u"), wantRV: "9", forgotten: true},
		{name: "another object of the name", written: at("7", "old"), cached: at("5", "new"), wantRV: "5", forgotten: true},
		{name: "deleted", written: at("7", "u"), forgotten: true},
		{name: "versions not comparable", written: at("x", "u"), cached: at("5", "u"), wantRV: "5", forgotten: true},
	}
	for _, tc := range tests {
		var w Written[apps.Deployment, *apps.Deployment]
		if tc.written != nil {
			w.Record("ns/web", tc.written)
		}
		got := w.Newest("ns/web", tc.cached)
		if rv := func() string {
			if got == nil {
				return ""
			}
			return got.ResourceVersion
		}(); rv != tc.wantRV {
			t.Errorf("%s: got resourceVersion %q, want %q", tc.name, rv, tc.wantRV)
		}
		if _, kept := w.m["ns/web"]; kept == tc.forgotten {
			t.Errorf("%s: kept %v, want forgotten %v", tc.name, kept, tc.forgotten)
		}
	}
}
