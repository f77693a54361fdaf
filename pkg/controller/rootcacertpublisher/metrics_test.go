package rootcacertpublisher

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics/testutil"
)

// Syncs are counted by upstream's code label: 200, the status code of a
// failed request (also when wrapped), else 500.
func TestRecordSyncCodes(t *testing.T) {
	registerMetrics()
	syncTotal.Reset()
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "kube-root-ca.crt", errors.New("changed"))
	for _, err := range []error{nil, fmt.Errorf("updating: %w", conflict), errors.New("no API status")} {
		recordSync(time.Now(), err)
	}
	for code, want := range map[string]float64{"200": 1, "409": 1, "500": 1} {
		got, err := testutil.GetCounterMetricValue(syncTotal.WithLabelValues(code))
		if err != nil || got != want {
			t.Errorf("sync_total{code=%q} = %v (%v), want %v", code, got, err, want)
		}
	}
}
