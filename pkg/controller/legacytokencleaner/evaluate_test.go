package legacytokencleaner

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

const period = 365 * 24 * time.Hour

var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func day(offset int) string { return now.AddDate(0, 0, offset).Format(dateFormat) }

func tracking(since string) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: TrackingConfigMapName},
		Data: map[string]string{"since": since}}
}

type secretOpt func(*v1.Secret)

func withLabel(k, v string) secretOpt { return func(s *v1.Secret) { s.Labels[k] = v } }
func createdDaysAgo(d int) secretOpt {
	return func(s *v1.Secret) { s.CreationTimestamp = metav1.NewTime(now.AddDate(0, 0, -d)) }
}

func token(name string, opts ...secretOpt) *v1.Secret {
	s := &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + "x", ResourceVersion: "1",
			Labels: map[string]string{}, Annotations: map[string]string{v1.ServiceAccountNameKey: "sa"},
			CreationTimestamp: metav1.NewTime(now.AddDate(-2, 0, 0))},
		Type: v1.SecretTypeServiceAccountToken,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func TestIsUnused(t *testing.T) {
	cutoff := now.Add(-period)
	used := cutoff.Format(dateFormat)
	tests := []struct {
		name    string
		secret  *v1.Secret
		want    bool
		wantErr bool
	}{
		{name: "old, never used", secret: token("a"), want: true},
		{name: "used long ago", secret: token("a", withLabel(LastUsedLabelKey, day(-400))), want: true},
		{name: "used on the cutoff day", secret: token("a", withLabel(LastUsedLabelKey, used))},
		{name: "used recently", secret: token("a", withLabel(LastUsedLabelKey, day(-1)))},
		{name: "bad last-used", secret: token("a", withLabel(LastUsedLabelKey, "yesterday")), wantErr: true},
		{name: "created recently", secret: token("a", createdDaysAgo(10))},
		{name: "other type", secret: func() *v1.Secret { s := token("a"); s.Type = v1.SecretTypeOpaque; return s }()},
		{name: "being deleted", secret: func() *v1.Secret { s := token("a"); s.DeletionTimestamp = &metav1.Time{Time: now}; return s }()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := isUnused(tc.secret, cutoff, used)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("isUnused = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"},
		Secrets: []v1.ObjectReference{{Name: "unused"}, {Name: "invalid-old"}, {Name: "invalid-new"}, {Name: "used"}, {Name: "mounted"}, {Name: "bad-invalid"}}}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: v1.PodSpec{
		Volumes: []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "mounted"}}}}}}
	const (
		keep    = "keep"
		label   = "label"
		deleted = "delete"
	)
	tests := []struct {
		name     string
		tracking string
		secret   *v1.Secret
		want     string
	}{
		{name: "unused token is labelled", secret: token("unused"), want: label},
		{name: "malformed invalid-since is relabelled", secret: token("bad-invalid", withLabel(InvalidSinceLabelKey, "soon")), want: label},
		{name: "invalid for a period is deleted", secret: token("invalid-old", withLabel(InvalidSinceLabelKey, day(-400))), want: deleted},
		{name: "invalid recently is kept", secret: token("invalid-new", withLabel(InvalidSinceLabelKey, day(-10))), want: keep},
		{name: "used token is kept", secret: token("used", withLabel(LastUsedLabelKey, day(-3))), want: keep},
		{name: "mounted token is kept", secret: token("mounted"), want: keep},
		{name: "not referenced by its ServiceAccount", secret: token("manual"), want: keep},
		{name: "ServiceAccount UID differs", secret: func() *v1.Secret {
			s := token("unused")
			s.Annotations[v1.ServiceAccountUIDKey] = "other"
			return s
		}(), want: keep},
		{name: "tracking too recent", tracking: day(-100), secret: token("unused"), want: keep},
		{name: "no tracking ConfigMap", tracking: "-", secret: token("unused"), want: keep},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			objs := []runtime.Object{sa, pod, tc.secret}
			switch tc.tracking {
			case "":
				objs = append(objs, tracking(day(-800)))
			case "-":
			default:
				objs = append(objs, tracking(tc.tracking))
			}
			client := fake.NewClientset(objs...)
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := newController("legacy-serviceaccount-token-cleaner-controller", client, testingclock.NewFakeClock(now), period, SyncInterval,
				f.Core().V1().ServiceAccounts(), f.Core().V1().Secrets(), f.Core().V1().Pods())
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Core().V1().ServiceAccounts().Informer().GetIndexer().Add(sa)
			_ = f.Core().V1().Pods().Informer().GetIndexer().Add(pod)
			_ = f.Core().V1().Secrets().Informer().GetIndexer().Add(tc.secret)

			c.evaluate(ctx)

			got, err := client.CoreV1().Secrets("ns").Get(context.Background(), tc.secret.Name, metav1.GetOptions{})
			outcome := keep
			switch {
			case apierrors.IsNotFound(err):
				outcome = deleted
			case err != nil:
				t.Fatal(err)
			case got.Labels[InvalidSinceLabelKey] == now.Format(dateFormat) && tc.secret.Labels[InvalidSinceLabelKey] != got.Labels[InvalidSinceLabelKey]:
				outcome = label
			}
			if outcome != tc.want {
				t.Errorf("outcome = %s, want %s (labels %v)", outcome, tc.want, got.GetLabels())
			}
		})
	}
}

func TestPodSecretNames(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		ImagePullSecrets: []v1.LocalObjectReference{{Name: "pull"}, {Name: ""}},
		InitContainers:   []v1.Container{{EnvFrom: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "envfrom"}}}}}},
		Containers: []v1.Container{{Env: []v1.EnvVar{{Name: "x", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "env"}}}}}}},
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{
			EnvFrom: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "ephemeral"}}}}}}},
		Volumes: []v1.Volume{
			{VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "vol"}}},
			{VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
				{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "projected"}}}}}}},
			{VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{NodePublishSecretRef: &v1.LocalObjectReference{Name: "csi"}}}},
		},
	}}
	got := podSecretNames(pod)
	want := []string{"csi", "env", "envfrom", "ephemeral", "projected", "pull", "vol"}
	if !got.Equal(sets.New(want...)) {
		t.Errorf("podSecretNames = %v, want %v", got.UnsortedList(), want)
	}
}
