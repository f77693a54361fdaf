package resourcepoolstatusrequest

import (
	"encoding/json"
	"testing"

	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

func klogFor(t *testing.T) klog.Logger {
	logger, _ := ktesting.NewTestContext(t)
	return logger
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func equalPool(a, b resourcev1alpha3.PoolStatus) bool { return equality.Semantic.DeepEqual(a, b) }

func names(pools []resourcev1alpha3.PoolStatus) []string {
	var out []string
	for _, p := range pools {
		out = append(out, p.PoolName)
	}
	return out
}
